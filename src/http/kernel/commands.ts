import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Caller } from '../../commands/caller.ts'
import { actorOfCaller, callerOfIdentity } from '../../commands/caller.ts'
import type { Actor } from '../../commands/caller.ts'
import type { CommandRunner } from '../../commands/command-runner.ts'
import { commandSession, readModelsAt } from '../../commands/command-session.ts'
import type { CommandSession } from '../../commands/command-session.ts'
import type { Deps } from '../../deps.ts'
import { formatPosition } from '../../eventstore/event-store.ts'
import type { Position } from '../../eventstore/event-store.ts'
import { identityOf } from './auth.ts'

export const EVENT_POSITION_HEADER = 'x-event-position'

/** The authenticated caller of a request, as use cases take it. */
export const callerOf = (request: FastifyRequest): Caller => callerOfIdentity(identityOf(request), request.id)

/**
 * Read-your-writes: waits until the read models have applied `position` (or fails with 503 after
 * READ_YOUR_WRITES_TIMEOUT_MS), and reports the position in a header. Nothing to wait for when null.
 * `eventTypes` narrows the wait to the read models that apply them (readModelsAt).
 */
export async function settle(deps: Pick<Deps, 'projections' | 'config'>, reply: FastifyReply, position: Position | null, eventTypes?: ReadonlySet<string>): Promise<void> {
  if (position) reply.header(EVENT_POSITION_HEADER, formatPosition(position))
  await readModelsAt(deps, position, eventTypes)
}

export type RequestCommands = {
  run: CommandRunner
  /** The request's unit of work, for use cases that join it. */
  session: CommandSession
  /** settle() for everything this request appended. */
  settle(): Promise<void>
}

/** Commands on behalf of the authenticated caller: actor, organization and request id travel in every event's metadata. */
export function requestCommands(deps: Pick<Deps, 'store' | 'projections' | 'config'>, request: FastifyRequest, reply: FastifyReply): RequestCommands {
  const session = commandSession(deps.store, callerOf(request))
  return { run: session.run, session, settle: () => settle(deps, reply, session.position(), session.eventTypes()) }
}

/** The request's caller as the record rules see them (commands/caller.ts). */
export const actorOf = (request: FastifyRequest): Actor => actorOfCaller(callerOf(request))
