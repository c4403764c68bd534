import { Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler } from 'kysely'
import type { CompiledQuery, DatabaseConnection, Driver, QueryResult } from 'kysely'
import type pg from 'pg'
import type { Database } from '../../db/database.ts'
import { inlineParameters, returnsNoRows } from './statement-text.ts'

/**
 * A page's read-model writes, held back and sent with whatever goes next on the page's connection:
 * the next statement that answers rows (in the same round trip when its values can be inlined),
 * or the checkpoints' save and COMMIT (kernel/apply.ts). A write answers nothing a projector reads
 * (no rows; its row count is not known here, and no projector reads one), so it need not wait for
 * its own round trip: a one-create page's five read-model INSERTs go in the COMMIT's round trip
 * instead of five of their own (issue 36, item 2: a round trip is what a create costs in CPU).
 *
 * Order is kept: every statement goes after the writes held before it, on the same connection, in
 * the same transaction. A held write that fails fails whatever it went with, and the page with it
 * (nothing of the page commits, as when it failed at once); applyBatches' caller then applies the
 * page projector by projector, so the failure is still pinned on the projector whose write it was.
 */
export type PageWrites = {
  /** The kysely the page's projectors write through. */
  readonly db: Kysely<Database>
  /** The held writes followed by `text` (SQL text, several statements allowed), in one round trip; the writes are no longer held. */
  sendWith(text: string): Promise<pg.QueryResult | pg.QueryResult[]>
  /** Forgets the held writes (the page failed: its transaction is rolled back). */
  discard(): void
}

const onClients = new WeakMap<pg.PoolClient, PageWrites>()

/** Kept per client, as kyselyOn's: a pool reuses a handful, and a page should not build one. */
export function pageWritesOn(client: pg.PoolClient): PageWrites {
  let writes = onClients.get(client)
  if (!writes) {
    writes = createPageWrites(client)
    onClients.set(client, writes)
  }
  return writes
}

function createPageWrites(client: pg.PoolClient): PageWrites {
  let held: string[] = []
  const take = (text: string) => {
    const all = held.length ? `${held.join(';\n')};\n${text}` : text
    held = []
    return all
  }

  const connection: DatabaseConnection = {
    async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
      const inlined = inlineParameters(compiled.sql, compiled.parameters)
      if (inlined !== undefined && returnsNoRows(compiled.sql)) {
        held.push(inlined)
        return { rows: [] }
      }
      if (held.length === 0) return resultOf(await client.query(compiled.sql, [...compiled.parameters]))
      if (inlined !== undefined) return resultOf(lastOf(await client.query(take(inlined))))
      await client.query(take(''))
      return resultOf(await client.query(compiled.sql, [...compiled.parameters]))
    },
    streamQuery() {
      throw new Error('A page applies without streaming')
    },
  }

  const driver: Driver = {
    async init() {},
    async acquireConnection() {
      return connection
    },
    // The page's transaction is opened and closed by applyBatches, on this client, around the projectors.
    async beginTransaction() {
      throw new Error('A page is one transaction already')
    },
    async commitTransaction() {},
    async rollbackTransaction() {},
    async releaseConnection() {},
    async destroy() {},
  }

  const db = new Kysely<Database>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => driver,
      createIntrospector: (db) => new PostgresIntrospector(db),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  })

  return {
    db,
    sendWith: (text) => client.query(take(text)) as unknown as Promise<pg.QueryResult | pg.QueryResult[]>,
    discard() {
      held = []
    },
  }
}

const lastOf = (results: pg.QueryResult | pg.QueryResult[]) => (Array.isArray(results) ? results.at(-1)! : results)

/** As kysely's PostgresConnection answers. */
function resultOf<R>(result: pg.QueryResult): QueryResult<R> {
  const counted = result.command === 'INSERT' || result.command === 'UPDATE' || result.command === 'DELETE' || result.command === 'MERGE'
  return { rows: (result.rows ?? []) as R[], numAffectedRows: counted ? BigInt(result.rowCount ?? 0) : undefined }
}
