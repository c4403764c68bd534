import { ValidationError } from '../../errors.ts'
import type { CaseStatus } from './fields.ts'

/**
 * The rules of a case tree (the original's parent_guards.py): a case is not its own parent, no
 * cycle, at most three levels (problem → incident → sub-incident), nothing linked to or from a
 * merged (Duplicate) case. They span other cases' streams, so the use case looks the facts up in
 * the read model and hands them to the decider, which judges them.
 */
export const MAX_TREE_DEPTH = 3

/** The would-be parent as the read model shows it: its status, its chain upward (itself first) and whether that chain loops; and how deep the moving case's own subtree goes (0: no children). */
export type ParentFacts = { id: string; status: CaseStatus; chain: readonly string[]; chainLoops: boolean; subtreeDepth: number }

/** Why linking `caseId` (status `status`) under `parent` is refused, or null. */
export function parentRefusal(caseId: string, status: CaseStatus, parent: ParentFacts): string | null {
  if (parent.id === caseId) return 'A case cannot be its own parent.'
  if (parent.status === 'Duplicate' || status === 'Duplicate') return 'Cannot link to or from a merged case.'
  if (parent.chain.includes(caseId)) return 'Linking would create a cycle.'
  if (parent.chainLoops) return "This case's parent chain already contains a cycle, so nothing can be linked under it."
  if (parent.chain.length + 1 + parent.subtreeDepth > MAX_TREE_DEPTH) return `Case tree is limited to ${MAX_TREE_DEPTH} levels.`
  return null
}

/** The refusal as a 400 on the field the route names (`parent` on the case's body, `parent_id` on link/). */
export function checkParent(caseId: string, status: CaseStatus, parent: ParentFacts | undefined, parentId: string, field: string): void {
  if (!parent || parent.id !== parentId) throw new ValidationError({ [field]: ['Parent case not found in this organization.'] })
  const refusal = parentRefusal(caseId, status, parent)
  if (refusal) throw new ValidationError({ [field]: [refusal] })
}
