import { sql } from 'kysely'
import type { Kysely } from 'kysely'
import type { FreshTables } from './copy-rows.ts'

/**
 * Inserts rows in one statement bound to one parameter: the rows as a JSON array, expanded by
 * json_populate_recordset into the table's own row type (PostgreSQL does the casts: ISO strings to
 * timestamptz, JSON arrays to uuid[], objects to jsonb). `json`, not `jsonb`: the text is read once,
 * and converting it to binary jsonb first cost a third of the statement's time per row. A multi-row VALUES binds one parameter per
 * cell: building and binding 9,000 of them per 1,000 rows is Node CPU that the projections share
 * with the HTTP server (PostgreSQL's own time per row is about the same either way).
 * Rows already there (same `key`) are left alone, so applying the same events twice changes nothing.
 * Every row must have the first row's keys; the table name resolves through the search_path, as a
 * projector's tables do during a rebuild. With `fresh` (a rebuild's replay, rows no earlier event
 * wrote) the rows are copied in instead: the same rows, in about half the server's time.
 */
export async function insertRowsOnce(db: Kysely<any>, table: string, key: string, rows: readonly Record<string, unknown>[], fresh?: FreshTables): Promise<void> {
  if (!rows.length) return
  if (fresh) return fresh.insert(table, rows)
  const columns = sql.join(Object.keys(rows[0]!).map((column) => sql.id(column)))
  await sql`INSERT INTO ${sql.id(table)} (${columns}) SELECT ${columns} FROM json_populate_recordset(NULL::${sql.id(table)}, ${JSON.stringify(rows)}::json)
    ON CONFLICT (${sql.id(key)}) DO NOTHING`.execute(db)
}
