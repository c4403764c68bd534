import type { Readable } from 'node:stream'
import { sql } from 'kysely'
import type { Kysely } from 'kysely'
import type { Db } from '../../db/database.ts'
import type { Position } from '../../eventstore/event-store.ts'
import type { Caller } from '../caller.ts'
import { commandSession, readModelsAt } from '../command-session.ts'
import { createRecord } from '../record-create.ts'
import type { RecordModule } from '../record-create.ts'
import { replacing } from '../record.ts'
import type { RecordNames } from '../record.ts'
import { chunksOf, createRows, csvRows, firstOccurrences, refusalOf, rowErrors } from './csv.ts'
import type { CsvColumns, CsvRow, CsvShape, ImportOutcome, RowError } from './csv.ts'
import { commitKeptImport, keepImport } from './kept-import.ts'
import type { ImportDeps, KeptImport } from './kept-import.ts'

/**
 * CSV import of a plain record module, in two steps (kept-import.ts). Preview validates every row
 * (the create body schema, relations, the unique field taken in the organization or earlier in the
 * file); commit re-reads the kept file and creates each valid row through createRecord, under ids
 * derived from the import and the row, so commits are idempotent.
 */

const PREVIEW_ROWS = 10
/** Rows whose unique values are looked up together. */
const CHUNK = 500

/** The values of `field` among `values` that live records of the organization already hold, lower-cased. */
export async function takenValues(db: Db, table: string, orgId: string, field: string, values: readonly string[]): Promise<Set<string>> {
  if (!values.length) return new Set()
  const lowered = sql<string>`lower(${sql.ref(field)})`
  // The record modules' read-model tables are named like their routes (`contacts`): a view of the columns every one has.
  const rows = await (db as unknown as Kysely<Record<string, { org_id: string; is_deleted: boolean }>>)
    .selectFrom(table)
    .select(lowered.as('value'))
    .where('org_id', '=', orgId)
    .where('is_deleted', '=', false)
    .where(lowered, 'in', values.map((v) => v.trim().toLowerCase()))
    .execute()
  return new Set((rows as { value: string }[]).map((row) => row.value))
}

const shapeOf = <Fields>(module: { body: CsvShape<Partial<Fields>>['schema']; empty: () => Fields }): CsvShape<Partial<Fields>> => ({ schema: module.body, fields: Object.keys(module.empty() as object) })

export type ImportPreview<Fields> = KeptImport & { total: number; refused: { count: number; errors: RowError[] }; preview: Fields[] }
export { IMPORT_TTL_MS } from './kept-import.ts'

/** Every row's verdict; the first valid ones as they would be created. */
async function previewRows<Fields extends Record<Unique, string | null>, Unique extends keyof Fields & string, N extends RecordNames>(db: Db, caller: Caller, module: RecordModule<Fields, Unique, N>, file: Readable, columns: CsvColumns) {
  const { unique } = module
  const refused = rowErrors()
  const duplicate = firstOccurrences(unique.field)
  const preview: Fields[] = []
  let total = 0
  for await (const chunk of chunksOf(csvRows(file, shapeOf(module), columns), CHUNK)) {
    total += chunk.length
    const candidates = chunk.filter((item): item is Extract<CsvRow<Partial<Fields>>, { body: unknown }> => {
      const problem = item.errors !== undefined ? item.errors : duplicate(item.row, item.body[unique.field])
      if (problem) refused.add({ row: item.row, errors: problem })
      return !problem
    })
    const values = candidates.map((item) => item.body[unique.field]).filter((value): value is NonNullable<typeof value> => typeof value === 'string')
    const taken = await takenValues(db, module.plural, caller.orgId, unique.field, values)
    const verdicts = await Promise.all(candidates.map(async ({ body }) => {
      const value = body[unique.field]
      if (typeof value === 'string' && taken.has(value.trim().toLowerCase())) return { [unique.field]: [`"${value}" is already in use.`] }
      return module.checkRelations(caller.orgId, body).then(() => undefined, refusalOf)
    }))
    candidates.forEach((item, index) => {
      const problem = verdicts[index]
      if (problem) refused.add({ row: item.row, errors: problem })
      else if (preview.length < PREVIEW_ROWS) preview.push(replacing(module.empty(), item.body))
    })
  }
  return { total, refused: { count: refused.count, errors: refused.list() }, preview }
}

/** Checks a CSV file (at `path`, which it takes over) without creating anything, and keeps it for commit under a new import id. */
export async function previewRecordImport<Fields extends Record<Unique, string | null>, Unique extends keyof Fields & string, N extends RecordNames>(deps: ImportDeps, caller: Caller, module: RecordModule<Fields, Unique, N>, path: string): Promise<ImportPreview<Fields>> {
  return keepImport(deps, caller, module.plural, path, (file, columns) => previewRows(deps.db, caller, module, file, columns))
}

/** Creates the valid rows of a previewed file (404 when it is not the caller's, expired or already committed). */
export async function commitRecordImport<Fields extends Record<Unique, string | null>, Unique extends keyof Fields & string, N extends RecordNames>(deps: ImportDeps, caller: Caller, module: RecordModule<Fields, Unique, N>, importId: string): Promise<ImportOutcome & { position: Position | null }> {
  const session = commandSession(deps.store, caller)
  const { unique } = module
  const outcome = await commitKeptImport(deps, caller, module.plural, importId, (file, rowId) =>
    createRows(csvRows(file, shapeOf(module), { recognized: [], ignored: [] }), {
      uniqueField: unique.field,
      unique: (body) => body[unique.field],
      create: (body, row) => createRecord(deps, caller, module, body, { id: rowId(row), session }).then(() => undefined),
      // A long import never runs far ahead of the read models.
      settle: () => readModelsAt(deps, session.position()),
    }),
  )
  return { ...outcome, position: session.position() }
}
