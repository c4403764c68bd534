import { randomUUID } from 'node:crypto'
import type { Deps } from '../../deps.ts'
import { ForbiddenError, ValidationError } from '../../errors.ts'
import type { Position } from '../../eventstore/event-store.ts'
import { organizationSettings } from '../../identity/organizations.ts'
import { subtreeOf } from '../../projections/case/queries.ts'
import type { Caller } from '../caller.ts'
import { actorOfCaller } from '../caller.ts'
import { commandSession } from '../command-session.ts'
import type { CommandSession } from '../command-session.ts'
import { caseDecider, caseStream, mayWriteCase } from './case.ts'
import type { CaseCommand, CaseInput } from './case.ts'
import { approvalGateIfClosing, visibleCase } from './write-case.ts'

/**
 * Closing a case and, optionally, every open case under it (the original's close-with-children):
 * each is closed dated the day of the close (a date it already has stays), and a resolution comment
 * is left on each cascaded case as an internal note, where the original wrote it in an activity row.
 * `cascade` left out takes the organization's `auto_close_children_on_parent_close`. The caller must
 * be able to change every case it closes (403 before anything is written otherwise), where the
 * original closed children anyone in the organization could not otherwise touch. One command per
 * case, in one session.
 */
export async function closeWithChildren(deps: Pick<Deps, 'db' | 'store' | 'clock'>, caller: Caller, id: string, input: { cascade?: boolean; resolutionComment: string }, session: CommandSession = commandSession(deps.store, caller)): Promise<{ cascaded: string[]; position: Position | null }> {
  const { db, clock } = deps
  const current = await visibleCase(db, caller, id)
  if (current.status === 'Duplicate') throw new ValidationError({ status: ['Cannot close a merged case.'] })
  const cascade = input.cascade ?? (await organizationSettings(db, caller.orgId)).auto_close_children_on_parent_close
  const actor = actorOfCaller(caller)
  const open = cascade ? (await subtreeOf(db, caller.orgId, id)).filter((node) => node.depth > 0 && node.status !== 'Closed') : []
  const barred = open.filter((node) => !mayWriteCase({ createdBy: node.created_by, fields: node }, actor))
  if (barred.length) throw new ForbiddenError(`Only an admin, the creator or an assignee may close these cases: ${barred.map((node) => node.name).join(', ')}`)
  const now = clock()
  const at = now.toISOString()
  // Each case closed is checked against its own approval gate.
  const closing = async (caseId: string, closedOn: string | null): Promise<CaseCommand> => {
    const close: CaseInput = { status: 'Closed', closed_on: closedOn ?? at.slice(0, 10) }
    return { type: 'UpdateCase', orgId: caller.orgId, actor, input: close, replace: false, customFields: [], approvalGate: await approvalGateIfClosing(db, caller.orgId, caseId, close), at }
  }
  if (current.status !== 'Closed') await session.run(caseDecider, caseStream(id), await closing(id, current.closed_on))
  for (const node of open) {
    await session.run(caseDecider, caseStream(node.id), await closing(node.id, null))
    if (input.resolutionComment) await session.run(caseDecider, caseStream(node.id), { type: 'AddComment', orgId: caller.orgId, actor, commentId: randomUUID(), comment: input.resolutionComment, internal: true, at })
  }
  return { cascaded: open.map((node) => node.id), position: session.position() }
}
