import { sql } from 'kysely'
import type { Kysely, Transaction } from 'kysely'
import type { Database } from '../db/database.ts'
import { START, comparePositions } from '../eventstore/event-store.ts'
import type { EventStore, Position, RecordedEvent } from '../eventstore/event-store.ts'
import { lockCheckpoint, saveCheckpoint } from './checkpoints.ts'
import type { Projector } from './projector.ts'

export const LIVE_SCHEMA = 'public'

/** Points unqualified table names at `schema` for the rest of the transaction (rebuilds use a fresh schema). */
export async function useSchema(trx: Transaction<any>, schema: string): Promise<void> {
  if (schema !== LIVE_SCHEMA) await sql`SELECT set_config('search_path', ${`${quoteIdent(schema)}, public`}, true)`.execute(trx)
}

const quoteIdent = (name: string) => `"${name.replaceAll('"', '""')}"`

export async function applyEvents(trx: Transaction<any>, projector: Projector, events: readonly RecordedEvent[]): Promise<void> {
  if (projector.applyBatch) return projector.applyBatch(trx, events)
  for (const event of events) await projector.apply(trx, event)
}

export type BatchOutcome = { applied: true; position: Position } | { applied: false; position: Position }

/**
 * Applies one page and moves the checkpoint in the same transaction. If the stored checkpoint is
 * not where this runner believed it was (another runner, or a rebuild swapped tables in), nothing
 * is applied and the stored position is returned so the caller resumes from there.
 */
export async function applyBatch(
  db: Kysely<Database>,
  projector: Projector,
  expectedFrom: Position,
  events: readonly RecordedEvent[],
  to: Position,
): Promise<BatchOutcome> {
  return db.transaction().execute(async (trx) => {
    const stored = await lockCheckpoint(trx, projector.name)
    const storedPosition = stored?.position ?? START
    if (comparePositions(storedPosition, expectedFrom) !== 0) return { applied: false, position: storedPosition }
    await applyEvents(trx, projector, events)
    await saveCheckpoint(trx, projector.name, projector.version, to)
    return { applied: true, position: to }
  })
}

/** Reads pages after `from` until the visible end, handing each to `onPage`; returns the final position. */
export async function drain(
  store: EventStore,
  projector: Projector,
  from: Position,
  batchSize: number,
  onPage: (events: RecordedEvent[], to: Position) => Promise<void>,
): Promise<Position> {
  let cursor = from
  for (;;) {
    const page = await store.readAll({ after: cursor, maxCount: batchSize, eventTypes: projector.eventTypes })
    if (comparePositions(page.scannedTo, cursor) > 0) await onPage(page.events, page.scannedTo)
    cursor = page.scannedTo
    if (page.isEnd) return cursor
  }
}
