import { sql } from 'kysely'
import type { Kysely, Transaction } from 'kysely'
import type pg from 'pg'
import type { FreshTables } from '../../db/copy-rows.ts'
import { poolOf } from '../../db/database.ts'
import type { Database } from '../../db/database.ts'
import { START, comparePositions } from '../../eventstore/event-store.ts'
import type { EventStore, Position, RecordedEvent } from '../../eventstore/event-store.ts'
import { lockCheckpointsText, saveCheckpointsText, toCheckpoint } from './checkpoints.ts'
import type { CheckpointRow } from './checkpoints.ts'
import { pageWritesOn } from './page-writes.ts'
import type { Projector } from './projector.ts'

export const LIVE_SCHEMA = 'public'

/** Points unqualified table names at `schema` for the rest of the transaction (rebuilds use a fresh schema). */
export async function useSchema(trx: Transaction<Database>, schema: string): Promise<void> {
  if (schema !== LIVE_SCHEMA) await sql`SELECT set_config('search_path', ${`${quoteIdent(schema)}, public`}, true)`.execute(trx)
}

const quoteIdent = (name: string) => `"${name.replaceAll('"', '""')}"`

/** `fresh`: only a rebuild's replay into the tables it created (see Projector.applyBatch). */
export async function applyEvents(trx: Transaction<Database>, projector: Projector, events: readonly RecordedEvent[], fresh?: FreshTables): Promise<void> {
  if (projector.applyBatch) return projector.applyBatch(trx, events, fresh)
  for (const event of events) await projector.apply(trx, event)
}

/**
 * A check that runs first in a page's transaction, in BEGIN's round trip: `statement` (SQL text
 * with its values inlined), whose rows `verify` reads and throws on to keep the page from
 * committing (the lease fence, leases.ts).
 */
export type Fence = { statement: string; verify(rows: readonly unknown[]): void }

/**
 * SQL text (values inlined) that goes last in the page's transaction, in its COMMIT's round trip,
 * given what the page will commit; undefined for none (the announcement to other processes of
 * what was reached, a NOTIFY delivered at the commit: runner.ts).
 */
export type Closing = (outcomes: readonly BatchOutcome[]) => string | undefined

export type BatchOutcome = { applied: true; position: Position } | { applied: false; position: Position }

/** One projector's share of a page: its events after `expectedFrom`, and where its checkpoint moves (`to`). */
export type BatchWork = { projector: Projector; expectedFrom: Position; events: readonly RecordedEvent[]; to: Position }

/**
 * Applies several projectors' shares of one page and moves their checkpoints, all in one
 * transaction (one commit for every read model an event touches). A projector whose stored
 * checkpoint is not where this runner believed it was (another runner, or a rebuild swapped
 * tables in) applies nothing and gets the stored position back, to resume from there.
 *
 * The transaction is opened on a pool client of its own rather than kysely's, so that its COMMIT
 * travels with the read models' writes and the checkpoints' save, and its BEGIN with the fence and
 * their lock: one round trip each (simple-query protocol, values inlined; page-writes.ts). A round
 * trip is what a create costs the projections in CPU (docs/performance.md). `fence` runs first,
 * between BEGIN and the lock.
 */
export async function applyBatches(db: Kysely<Database>, work: readonly BatchWork[], fence?: Fence, closing?: Closing): Promise<BatchOutcome[]> {
  if (work.length === 0) return []
  const client = (await poolOf(db).connect()) as unknown as pg.PoolClient
  const writes = pageWritesOn(client)
  let broken: Error | undefined
  try {
    const trx = writes.db as unknown as Transaction<Database>
    const lock = lockCheckpointsText(work.map((w) => w.projector.name))
    const results = (await client.query(fence ? `BEGIN; ${fence.statement}; ${lock}` : `BEGIN; ${lock}`)) as unknown as pg.QueryResult[]
    if (fence) fence.verify(results[1]!.rows)
    const locked = results.at(-1) as pg.QueryResult<CheckpointRow>
    const stored = new Map(locked.rows.map((row) => [row.name, toCheckpoint(row)]))
    const outcomes: BatchOutcome[] = []
    for (const { projector, expectedFrom, events, to } of work) {
      const storedPosition = stored.get(projector.name)?.position ?? START
      if (comparePositions(storedPosition, expectedFrom) !== 0) {
        outcomes.push({ applied: false, position: storedPosition })
        continue
      }
      await applyEvents(trx, projector, events)
      outcomes.push({ applied: true, position: to })
    }
    const moved = work.filter((_, i) => outcomes[i]!.applied)
    const last = closing?.(outcomes)
    const save = moved.length ? `${saveCheckpointsText(moved.map((w) => ({ name: w.projector.name, version: w.projector.version, position: w.to })))}; ` : ''
    await writes.sendWith(`${save}${last ? `${last}; ` : ''}COMMIT`)
    return outcomes
  } catch (error) {
    writes.discard()
    // After a failed COMMIT there is no transaction left, and ROLLBACK only warns; when ROLLBACK
    // itself fails the connection is unusable, and is closed rather than pooled.
    await client.query('ROLLBACK').catch((rollbackError: unknown) => {
      broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError))
    })
    throw error
  } finally {
    client.release(broken)
  }
}

/** Applies one projector's page and moves its checkpoint in the same transaction (see applyBatches). */
export async function applyBatch(db: Kysely<Database>, projector: Projector, expectedFrom: Position, events: readonly RecordedEvent[], to: Position, fence?: Fence): Promise<BatchOutcome> {
  const [outcome] = await applyBatches(db, [{ projector, expectedFrom, events, to }], fence)
  return outcome!
}

/**
 * Reads pages after `from` until the visible end, handing each to `onPage`; returns the final
 * position. The next page is read while `onPage` writes the current one (a replay is otherwise a
 * strict alternation of a read and a write, each leaving the other core idle).
 */
export async function drain(
  store: EventStore,
  projector: Projector,
  from: Position,
  batchSize: number,
  onPage: (events: RecordedEvent[], to: Position) => Promise<void>,
): Promise<Position> {
  const read = (after: Position) => {
    const page = store.readAll({ after, maxCount: batchSize, eventTypes: projector.eventTypes })
    // Awaited below; until then a failed read must not count as unhandled (onPage may throw first).
    page.catch(() => {})
    return page
  }
  let cursor = from
  let next = read(cursor)
  for (;;) {
    const page = await next
    const advanced = comparePositions(page.scannedTo, cursor) > 0
    cursor = page.scannedTo
    if (!page.isEnd) next = read(cursor)
    if (advanced) await onPage(page.events, page.scannedTo)
    if (page.isEnd) return cursor
  }
}
