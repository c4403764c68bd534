import type { Kysely } from 'kysely'
import type { Database } from '../../db/database.ts'
import { START, formatPosition } from '../../eventstore/event-store.ts'
import type { EventStore, VisibilityLag } from '../../eventstore/event-store.ts'
import { readCheckpoints } from './checkpoints.ts'
import type { Projector } from './projector.ts'

export type ProjectorStatus = {
  name: string
  version: number
  /** Version of the stored tables; differs from `version` until the pending rebuild finishes. */
  storedVersion: number | null
  checkpoint: string | null
  updatedAt: Date | null
  /** Events of the types it handles not yet applied, counted up to `lagEventsCap`. */
  lagEvents: number
  lagEventsCapped: boolean
  /** Age of the oldest unapplied event, in ms. */
  lagMs: number
  failure: string | null
}

export type ProjectionsStatus = { projectors: ProjectorStatus[]; visibility: VisibilityLag }

export async function projectionsStatus(
  db: Kysely<Database>,
  store: EventStore,
  projectors: readonly Projector[],
  options: { lagEventsCap?: number; failures?: ReadonlyMap<string, string>; now?: () => number } = {},
): Promise<ProjectionsStatus> {
  const cap = options.lagEventsCap ?? 10_000
  const now = options.now ?? Date.now
  const checkpoints = await readCheckpoints(db)
  const statuses = await Promise.all(
    projectors.map(async (p): Promise<ProjectorStatus> => {
      const stored = checkpoints.find((c) => c.name === p.name)
      const pending = await store.readAll({ after: stored?.position ?? START, maxCount: cap, eventTypes: p.eventTypes })
      const oldest = pending.events[0]
      return {
        name: p.name,
        version: p.version,
        storedVersion: stored?.version ?? null,
        checkpoint: stored ? formatPosition(stored.position) : null,
        updatedAt: stored?.updatedAt ?? null,
        lagEvents: pending.events.length,
        lagEventsCapped: !pending.isEnd,
        lagMs: oldest ? Math.max(0, now() - oldest.createdAt.getTime()) : 0,
        failure: options.failures?.get(p.name) ?? null,
      }
    }),
  )
  return { projectors: statuses, visibility: await store.visibilityLag() }
}
