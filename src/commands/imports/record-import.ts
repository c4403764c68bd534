import { createHash, randomBytes } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { join } from 'node:path'
import type { Readable } from 'node:stream'
import { sql } from 'kysely'
import type { Kysely } from 'kysely'
import type { Db } from '../../db/database.ts'
import type { Deps } from '../../deps.ts'
import { ForbiddenError, NotFoundError } from '../../errors.ts'
import type { Position } from '../../eventstore/event-store.ts'
import { diskFileStore } from '../../files/file-store.ts'
import type { Caller } from '../caller.ts'
import { commandSession, readModelsAt } from '../command-session.ts'
import { createRecord } from '../record-create.ts'
import type { RecordModule } from '../record-create.ts'
import { replacing } from '../record.ts'
import type { RecordNames } from '../record.ts'
import { chunksOf, createRows, csvRows, firstOccurrences, refusalOf, rowErrors } from './csv.ts'
import type { CsvColumns, CsvRow, CsvShape, ImportOutcome, RowError } from './csv.ts'

/**
 * CSV import of a plain record module, in two steps. Preview validates every row (the create body
 * schema, relations, the unique field taken in the organization or earlier in the file) and keeps
 * the file, owned by the organization and the uploader, under an import id; commit re-reads it and
 * creates each valid row through createRecord, under ids derived from the import and the row, so
 * commits are idempotent. Only the uploader commits, within IMPORT_TTL_MS; once committed the file
 * is gone (404 after).
 */

/** A preview not committed within a day is gone: commit answers 404 (and removes the file). */
export const IMPORT_TTL_MS = 24 * 60 * 60 * 1000
const PREVIEW_ROWS = 10
/** Rows whose unique values are looked up together. */
const CHUNK = 500
const GONE = 'Import not found, expired or already committed'

type ImportDeps = Pick<Deps, 'db' | 'store' | 'clock' | 'projections' | 'config' | 'files'>

/** A version-7 uuid: its first 48 bits are the time of the preview, so expiry needs no stored date. */
function importIdAt(now: Date): string {
  const bytes = randomBytes(16)
  bytes.writeUIntBE(now.getTime(), 0, 6)
  bytes[6] = (bytes[6]! & 0x0f) | 0x70
  bytes[8] = (bytes[8]! & 0x3f) | 0x80
  return uuidOf(bytes)
}
const previewedAt = (importId: string) => parseInt(importId.replace(/-/g, '').slice(0, 12), 16)

const uuidOf = (bytes: Buffer) => {
  const hex = bytes.toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`
}

/**
 * The id of the record a row creates, derived from the import and the row (a version-8 uuid), so
 * a commit is idempotent: retried after a failure, or run twice at once, it creates each row once.
 */
function rowRecordId(importId: string, row: number): string {
  const bytes = createHash('sha256').update(`${importId}/${row}`).digest().subarray(0, 16)
  bytes[6] = (bytes[6]! & 0x0f) | 0x80
  bytes[8] = (bytes[8]! & 0x3f) | 0x80
  return uuidOf(bytes)
}

/** The values of `field` among `values` that live records of the organization already hold, lower-cased. */
async function takenValues(db: Db, table: string, orgId: string, field: string, values: readonly string[]): Promise<Set<string>> {
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

const importFiles = (deps: ImportDeps) => deps.files ?? diskFileStore(join(deps.config.dataDir, 'imports'))
const shapeOf = <Fields>(module: { body: CsvShape<Partial<Fields>>['schema']; empty: () => Fields }): CsvShape<Partial<Fields>> => ({ schema: module.body, fields: Object.keys(module.empty() as object) })

function keyOf(module: { plural: string }, caller: Caller, importId: string): string {
  if (!caller.profileId) throw new ForbiddenError('Importing needs a member: sign in or use a personal access token')
  return `imports/${module.plural}/${caller.orgId}/${caller.profileId}/${importId}`
}

export type ImportPreview<Fields> = { importId: string; expiresAt: string; total: number; refused: { count: number; errors: RowError[] }; preview: Fields[]; columns: CsvColumns }

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
  const importId = importIdAt(deps.clock())
  const key = keyOf(module, caller, importId)
  const columns: CsvColumns = { recognized: [], ignored: [] }
  const rows = await previewRows(deps.db, caller, module, createReadStream(path), columns)
  await importFiles(deps).adopt(path, key)
  return { importId, expiresAt: new Date(previewedAt(importId) + IMPORT_TTL_MS).toISOString(), ...rows, columns }
}

/** Creates the valid rows of a previewed file (404 when it is not the caller's, expired or already committed). */
export async function commitRecordImport<Fields extends Record<Unique, string | null>, Unique extends keyof Fields & string, N extends RecordNames>(deps: ImportDeps, caller: Caller, module: RecordModule<Fields, Unique, N>, importId: string): Promise<ImportOutcome & { position: Position | null }> {
  const files = importFiles(deps)
  const id = importId.toLowerCase()
  const key = keyOf(module, caller, id)
  const expired = deps.clock().getTime() - previewedAt(id) > IMPORT_TTL_MS
  if (expired) await files.remove(key)
  const file = expired ? undefined : await files.open(key)
  if (!file) throw new NotFoundError(GONE)
  const session = commandSession(deps.store, caller)
  const { unique } = module
  const outcome = await createRows(csvRows(file, shapeOf(module), { recognized: [], ignored: [] }), {
    uniqueField: unique.field,
    unique: (body) => body[unique.field],
    create: (body, row) => createRecord(deps, caller, module, body, { id: rowRecordId(id, row), session }).then(() => undefined),
    // A long import never runs far ahead of the read models.
    settle: () => readModelsAt(deps, session.position()),
  }).finally(() => file.destroy())
  // Removed only once every row was tried: a commit that failed midway (a 503) may be retried, and creates each row once.
  await files.remove(key)
  return { ...outcome, position: session.position() }
}

