import { Kysely, PostgresDialect } from 'kysely'
import type { PostgresPoolClient } from 'kysely'
import type pg from 'pg'
import type { Database } from '../../db/database.ts'

const onClients = new WeakMap<pg.PoolClient, Kysely<Database>>()

/**
 * A kysely whose statements go to `client`, in its transaction if one is open there: for a
 * transaction the kernel opens itself (a replay's; a live page's goes through page-writes.ts),
 * whose BEGIN and COMMIT travel with other statements. Kept per client: a pool reuses a handful,
 * and a batch should not build one.
 */
export function kyselyOn(client: pg.PoolClient): Kysely<Database> {
  let db = onClients.get(client)
  if (!db) {
    const shared: PostgresPoolClient = { query: client.query.bind(client) as PostgresPoolClient['query'], release: () => {} }
    db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: { connect: async () => shared, end: async () => {} } }) })
    onClients.set(client, db)
  }
  return db
}
