import { sql } from 'kysely'
import type { FreshTables } from './copy-rows.ts'
import type { Db } from './database.ts'

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
export async function insertRowsOnce(db: Db, table: string, key: string, rows: readonly Record<string, unknown>[], fresh?: FreshTables): Promise<void> {
  if (!rows.length) return
  if (fresh) return fresh.insert(table, rows)
  const columns = sql.join(Object.keys(rows[0]!).map((column) => sql.id(column)))
  await sql`INSERT INTO ${sql.id(table)} (${columns}) SELECT ${columns} FROM json_populate_recordset(NULL::${sql.id(table)}, ${JSON.stringify(rows)}::json)
    ON CONFLICT (${sql.id(key)}) DO NOTHING`.execute(db)
}

/**
 * Sets, on each row whose `key` column (a uuid) is a row's `key`, the columns its `set` names (the others keep
 * their values), in one statement however many rows: what a page of events folded per row leaves,
 * where one UPDATE per event cost a round trip each. `set` values go through JSON as in
 * insertRowsOnce (jsonb_populate_record over the row itself).
 */
export async function updateRows(db: Db, table: string, key: string, rows: readonly { key: string; set: Record<string, unknown> }[]): Promise<void> {
  const columns = [...new Set(rows.flatMap((row) => Object.keys(row.set)))].map((column) => sql.id(column))
  if (!columns.length) return
  await sql`UPDATE ${sql.id(table)} t SET (${sql.join(columns)}) = (SELECT ${sql.join(columns.map((column) => sql`p.${column}`))} FROM jsonb_populate_record(t, v.set) p)
    FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS v (key uuid, set jsonb) WHERE t.${sql.id(key)} = v.key`.execute(db)
}
