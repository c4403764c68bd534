import type { Deps } from '../deps.ts'
import { maxPosition } from '../eventstore/event-store.ts'
import type { EventStore, Position } from '../eventstore/event-store.ts'
import { ProjectionLagError } from '../errors.ts'
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
  /** The types of every event this session appended. */
  eventTypes(): ReadonlySet<string>
}

export function commandSession(store: EventStore, caller: Caller): CommandSession {
  const traced = caller.requestId === undefined ? {} : { requestId: caller.requestId, correlationId: caller.requestId }
  // A portal customer has no profile: the contact they signed in as says who acted.
  const metadata = { actorId: caller.profileId, orgId: caller.orgId, ...traced, ...(caller.contactId && { contactId: caller.contactId }) }
  let last: Position | null = null
  const eventTypes = new Set<string>()
  return {
    run: async (decider, streamName, command, options) => {
      const result = await handleCommand(store, decider, streamName, command, { metadata, ...options })
      if (result.position) last = last ? maxPosition(last, result.position) : result.position
      for (const type of result.eventTypes) eventTypes.add(type)
      return result
    },
    position: () => last,
    eventTypes: () => eventTypes,
  }
}

/**
 * Read-your-writes: waits until the read models have applied `position` (nothing to wait for when
 * null), or fails with ProjectionLagError after READ_YOUR_WRITES_TIMEOUT_MS. With `eventTypes`
 * (everything the writer appended up to `position`, as a session knows it), only the read models
 * that apply one of them are waited for: the others show nothing of the write. Without, all are.
 * Work served by a read replica also waits until the replica has replayed the transactions that applied it.
 */
export async function readModelsAt({ projections, config, readReplica }: Pick<Deps, 'projections' | 'config' | 'readReplica'>, position: Position | null, eventTypes?: ReadonlySet<string>): Promise<void> {
  if (!position) return
  const timeoutMs = config.readYourWritesTimeoutMs
  if (!readReplica?.serving()) return projections.waitFor(position, timeoutMs, eventTypes)
  const deadline = Date.now() + timeoutMs
  // On the primary: what the runner starts while waiting (a follower's checkpoint poll) must not read the lagging replica.
  await readReplica.onPrimary(() => projections.waitFor(position, timeoutMs, eventTypes))
  if (!(await readReplica.replayedPrimary(deadline))) throw new ProjectionLagError(position, timeoutMs)
}
