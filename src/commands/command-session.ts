import type { Deps } from '../deps.ts'
import { maxPosition } from '../eventstore/event-store.ts'
import type { EventStore, Position } from '../eventstore/event-store.ts'
import type { Caller } from './caller.ts'
import type { CommandRunner } from './command-runner.ts'
import { handleCommand } from './handle-command.ts'

/**
 * One unit of work of a caller: commands run with the caller's actor, organization and request id
 * in every event's metadata, and the last position appended, which is what a reader must wait for
 * to see all of it (read-your-writes). Use cases that call each other share one session.
 */
export type CommandSession = {
  run: CommandRunner
  /** The latest position this session appended; null while it appended nothing. */
  position(): Position | null
}

export function commandSession(store: EventStore, caller: Caller): CommandSession {
  const traced = caller.requestId === undefined ? {} : { requestId: caller.requestId, correlationId: caller.requestId }
  const metadata = { actorId: caller.profileId, orgId: caller.orgId, ...traced }
  let last: Position | null = null
  return {
    run: async (decider, streamName, command, options) => {
      const result = await handleCommand(store, decider, streamName, command, { metadata, ...options })
      if (result.position) last = last ? maxPosition(last, result.position) : result.position
      return result
    },
    position: () => last,
  }
}

/**
 * Read-your-writes: waits until the read models have applied `position` (nothing to wait for when
 * null), or fails with ProjectionLagError after READ_YOUR_WRITES_TIMEOUT_MS.
 */
export async function readModelsAt({ projections, config }: Pick<Deps, 'projections' | 'config'>, position: Position | null): Promise<void> {
  if (position) await projections.waitFor(position, config.readYourWritesTimeoutMs)
}
