import type { Kysely, Transaction } from 'kysely'
import type pg from 'pg'
import { freshTables } from '../../db/copy-rows.ts'
import { poolOf } from '../../db/database.ts'
import type { Database } from '../../db/database.ts'
import { START } from '../../eventstore/event-store.ts'
import type { EventStore, Position, RecordedEvent } from '../../eventstore/event-store.ts'
import { applyEvents, drain } from './apply.ts'
import { kyselyOn } from './client-kysely.ts'
import type { Projector } from './projector.ts'

/**
 * A rebuild's bulk replay: the whole log into the fresh tables of `schema`, a transaction per page,
 * on a connection of its own. A page is sent without waiting for PostgreSQL to write it: its BEGIN,
 * statements, COPYs and COMMIT queue on the connection, which runs them in order, so Node decodes
 * the next page while the server writes this one (a statement the projector awaits, an UPDATE, waits
 * its turn). At most one page is ahead. `onPage` hears of a page once it is sent.
 */
export async function replayInto(db: Kysely<Database>, store: EventStore, projector: Projector, schema: string, batchSize: number, onPage: (events: number, to: Position) => void, signal?: AbortSignal): Promise<Position> {
  const client = (await poolOf(db).connect()) as unknown as pg.PoolClient
  try {
    // Reset below before the connection goes back to the pool. The scratch tables
    // are dropped if anything fails before the swap, so a page's commit need not wait for its WAL to
    // reach the disk; the swap transaction commits durably.
    await client.query(`SET search_path = ${client.escapeIdentifier(schema)}, public; SET synchronous_commit = off`)
    const onClient = kyselyOn(client) as unknown as Transaction<Database>
    const fresh = freshTables(client)
    let ahead: Promise<unknown> = Promise.resolve()
    const replayed = await drain(store, projector, START, batchSize, async (page: RecordedEvent[], to) => {
      signal?.throwIfAborted()
      const begun = unawaited(client.query('BEGIN'))
      await applyEvents(onClient, projector, page, fresh)
      const written = unawaited(Promise.all([begun, fresh.written(), client.query('COMMIT')]))
      await ahead
      ahead = written
      onPage(page.length, to)
    })
    await ahead
    await client.query('RESET search_path; RESET synchronous_commit')
    client.release()
    return replayed
  } catch (error) {
    // Closed, not returned to the pool: it may have stopped mid-COPY, with the scratch session settings.
    client.release(true)
    throw error
  }
}

/** `promise`, awaited later (or never, when the replay failed first): meanwhile its failure must not count as unhandled. */
function unawaited<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => {})
  return promise
}
