import { sql } from 'kysely'
import type { Db } from '../../src/db/database.ts'
import type { Projector } from '../../src/projections/kernel/projector.ts'

/**
 * A read model for the units tests: one row per applied event, keyed by (stream, revision), so an
 * event applied twice breaks the key, and `apply` refuses an event that is not its stream's next
 * revision after the ones already applied (an order broken within a stream, or a gap, fails the
 * page instead of going unnoticed). `hold` keeps a page's transaction open until it resolves.
 */
export function sequenceProjector(name: string, options: { hold?: () => Promise<void> } = {}): Projector {
  return {
    name,
    version: 1,
    eventTypes: ['Sequenced'],
    tables: [name],
    async createTables(db) {
      await sql`CREATE TABLE ${sql.table(name)} (stream_name text NOT NULL, revision bigint NOT NULL, position_commit bigint NOT NULL, PRIMARY KEY (stream_name, revision))`.execute(db)
    },
    async apply(trx, event) {
      await options.hold?.()
      const { rows } = await sql<{ last: string | null }>`SELECT max(revision)::text AS last FROM ${sql.table(name)} WHERE stream_name = ${event.streamName}`.execute(trx)
      const expected = rows[0]?.last == null ? 0n : BigInt(rows[0].last) + 1n
      if (event.revision !== expected) throw new Error(`${name}: ${event.streamName} revision ${event.revision} applied after ${expected - 1n}`)
      await sql`INSERT INTO ${sql.table(name)} VALUES (${event.streamName}, ${event.revision}, ${event.position.commit})`.execute(trx)
    },
  }
}

/** Per stream, the revisions applied, in order of revision. */
export async function sequenceRows(db: Db, name: string): Promise<Map<string, bigint[]>> {
  const { rows } = await sql<{ stream_name: string; revision: string }>`SELECT stream_name, revision::text AS revision FROM ${sql.table(name)} ORDER BY 1, ${sql.table(name)}.revision`.execute(db)
  const streams = new Map<string, bigint[]>()
  for (const row of rows) streams.set(row.stream_name, [...(streams.get(row.stream_name) ?? []), BigInt(row.revision)])
  return streams
}
