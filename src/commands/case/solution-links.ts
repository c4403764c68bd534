import { NotFoundError } from '../../errors.ts'
import type { Actor } from '../caller.ts'

/**
 * The knowledge-base solutions linked to a case (the original's CaseSolutionLinkView): linking an
 * article to a ticket changes the ticket, so it takes the case's write access (case.ts checks it,
 * with the case's visibility, before these decisions). A link is a fact of the case's stream; the
 * case keeps the ids it links, so a repeat link, or an unlink of what is not linked, decides nothing.
 */

type By = { by: string | null; at: string }
export type CaseSolutionEvent =
  | { type: 'CaseSolutionLinked'; data: { solution_id: string } & By }
  | { type: 'CaseSolutionUnlinked'; data: { solution_id: string } & By }

export const SOLUTION_LINK_EVENT_TYPES = ['CaseSolutionLinked', 'CaseSolutionUnlinked'] as const
export const isSolutionLinkEvent = (event: { type: string }): event is CaseSolutionEvent => (SOLUTION_LINK_EVENT_TYPES as readonly string[]).includes(event.type)

/** `solution`: the solution named, as the use case found it (`live` false: no live solution of the organization, a 404). */
export type CaseSolutionCommand = { type: 'LinkCaseSolution' | 'UnlinkCaseSolution'; orgId: string; actor: Actor; solution: { id: string; live: boolean }; at: string }
export const isSolutionLinkCommand = (command: { type: string }): command is CaseSolutionCommand => command.type === 'LinkCaseSolution' || command.type === 'UnlinkCaseSolution'

/** The solution ids a case links, first linked first. */
export type SolutionLinks = readonly string[]

export function decideSolutionLink(command: CaseSolutionCommand, linked: SolutionLinks): CaseSolutionEvent[] {
  const { solution, actor, at } = command
  if (!solution.live) throw new NotFoundError('Solution not found')
  const has = linked.includes(solution.id)
  const data = { solution_id: solution.id, by: actor.profileId, at }
  if (command.type === 'LinkCaseSolution') return has ? [] : [{ type: 'CaseSolutionLinked', data }]
  return has ? [{ type: 'CaseSolutionUnlinked', data }] : []
}

export function evolveSolutionLinks(linked: SolutionLinks, event: CaseSolutionEvent): SolutionLinks {
  const id = event.data.solution_id
  return event.type === 'CaseSolutionLinked' ? [...linked, id] : linked.filter((other) => other !== id)
}
