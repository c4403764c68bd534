import { finished } from 'node:stream/promises'
import type pg from 'pg'
import copyStreams from 'pg-copy-streams'

type Row = Readonly<Record<string, unknown>>

/**
 * Rows for tables a rebuild has just created, sent with COPY (CSV) on the replay's own connection,
 * inside its page transaction. PostgreSQL parses CSV fields straight into the columns' types, where
 * an INSERT of the same rows as JSON (insertRowsOnce) first parses the JSON, then each value again:
 * about half the server's time per row. COPY has no ON CONFLICT: only for rows whose key no earlier
 * event of the replay can have written (a stream's creation event).
 */
export type FreshTables = {
  /** Resolves once the rows are sent (the connection runs its statements in order: a later one sees them). */
  insert(table: string, rows: readonly Row[]): Promise<void>
  /** Resolves once PostgreSQL has taken every row sent so far, or rejects with why it did not (await it before the COMMIT's outcome counts). */
  written(): Promise<void>
}

/** The text PostgreSQL reads for one value, as json_populate_recordset would read its JSON (insertRowsOnce). */
type Encode = (value: unknown) => string

export function freshTables(client: pg.ClientBase): FreshTables {
  // Per table (the scratch schema's, resolved through the transaction's search_path): column → encoder.
  const columnsOf = new Map<string, Promise<Map<string, Encode>>>()
  const encodersOf = (table: string) => {
    let columns = columnsOf.get(table)
    if (!columns) columnsOf.set(table, (columns = readColumns(client, table)))
    return columns
  }
  let sent: Promise<void>[] = []
  return {
    async insert(table, rows) {
      if (!rows.length) return
      const columns = Object.keys(rows[0]!)
      const encoders = await encodersOf(table)
      const encode = columns.map((column) => {
        const encoder = encoders.get(column)
        if (!encoder) throw new Error(`Expected table ${table} to have a column ${column}`)
        return encoder
      })
      const quote = (name: string) => client.escapeIdentifier(name)
      const stream = client.query(copyStreams.from(`COPY ${quote(table)} (${columns.map(quote).join(', ')}) FROM STDIN (FORMAT csv)`))
      stream.end(csvOf(rows, columns, encode))
      const done = finished(stream)
      // Awaited by written(); until then a failure must not count as unhandled.
      done.catch(() => {})
      sent.push(done)
    },
    async written() {
      const waiting = sent
      sent = []
      await Promise.all(waiting)
    },
  }
}

async function readColumns(client: pg.ClientBase, table: string): Promise<Map<string, Encode>> {
  const { rows } = await client.query<{ name: string; type: string; category: string }>(
    `SELECT a.attname AS name, t.typname AS type, t.typcategory AS category FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
     WHERE a.attrelid = quote_ident($1)::regclass AND a.attnum > 0 AND NOT a.attisdropped`,
    [table],
  )
  return new Map(rows.map(({ name, type, category }) => [name, category === 'A' ? arrayText : type === 'json' || type === 'jsonb' ? jsonText : scalarText]))
}

/**
 * CSV: every value quoted (its quotes doubled), so that only an unquoted empty field is NULL and no
 * other character (backslash, comma, newline, a lone `\.`) means anything; rows end with a newline.
 */
function csvOf(rows: readonly Row[], columns: readonly string[], encode: readonly Encode[]): string {
  let text = ''
  for (const row of rows) {
    for (let i = 0; i < columns.length; i++) {
      const value = row[columns[i]!]
      if (i > 0) text += ','
      if (value === null || value === undefined) continue
      const field = encode[i]!(value)
      text += field.includes('"') ? `"${field.replaceAll('"', '""')}"` : `"${field}"`
    }
    text += '\n'
  }
  return text
}

const jsonText: Encode = (value) => JSON.stringify(value)

// A Date as JSON.stringify writes it; an object (into a text column) as its JSON, as json_populate_recordset does.
const scalarText: Encode = (value) => (typeof value === 'string' ? value : value instanceof Date ? value.toISOString() : typeof value === 'object' ? JSON.stringify(value) : String(value))

/** A JS array as a PostgreSQL array literal: elements quoted, their quotes and backslashes escaped; null is NULL. A string is taken as a literal already. */
const arrayText: Encode = (value) => (typeof value === 'string' ? value : `{${(value as unknown[]).map(elementText).join(',')}}`)

const elementText = (element: unknown): string =>
  element === null || element === undefined ? 'NULL' : Array.isArray(element) ? arrayText(element) : `"${scalarText(element).replace(/["\\]/g, '\\$&')}"`
