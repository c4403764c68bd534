import { z } from 'zod'
import type { Deps } from '../../deps.ts'
import type { Position } from '../../eventstore/event-store.ts'
import { solutionOf } from '../../projections/solution/solutions.ts'
import type { SolutionRow } from '../../projections/solution/solutions.ts'
import type { Caller } from '../caller.ts'
import { actorOfCaller } from '../caller.ts'
import { commandSession } from '../command-session.ts'
import type { CommandSession } from '../command-session.ts'
import { caseDecider, caseStream } from './case.ts'
import { visibleCase } from './write-case.ts'

/**
 * Links (`link` true) or unlinks a knowledge-base solution and a case the caller may see: 404 for
 * a case or solution that is not a live one of the caller's organization (a malformed id too), 403
 * for a caller who may not change the case (case.ts decides). Answers the solution; `changed`
 * false: it was already so.
 */
export async function linkCaseSolution(deps: Pick<Deps, 'db' | 'store' | 'clock'>, caller: Caller, caseId: string, solutionId: string, link: boolean, session: CommandSession = commandSession(deps.store, caller)): Promise<{ solution: SolutionRow; changed: boolean; position: Position | null }> {
  await visibleCase(deps.db, caller, caseId)
  const found = z.uuid().safeParse(solutionId).success ? await solutionOf(deps.db, caller.orgId, solutionId) : undefined
  const solution = { id: found?.id ?? solutionId, live: found !== undefined }
  const { events } = await session.run(caseDecider, caseStream(caseId), { type: link ? 'LinkCaseSolution' : 'UnlinkCaseSolution', orgId: caller.orgId, actor: actorOfCaller(caller), solution, at: deps.clock().toISOString() })
  // The decider refused a solution not found, so here it was.
  return { solution: found!, changed: events.length > 0, position: session.position() }
}
