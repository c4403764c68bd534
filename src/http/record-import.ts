import { createHash, randomBytes } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { join } from 'node:path'
import { sql } from 'kysely'
import type { Kysely } from 'kysely'
import type { Readable } from 'node:stream'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { replacing } from '../commands/record.ts'
import type { RecordNames } from '../commands/record.ts'
import type { Db } from '../db/database.ts'
import { ForbiddenError, NotFoundError } from '../errors.ts'
import { diskFileStore } from '../files/file-store.ts'
import type { Identity } from '../identity/identity.ts'
import type { AppDeps } from './app.ts'
import { requestCommands } from './commands.ts'
import { chunksOf, createRows, csvRows, firstOccurrences, refusalOf, rowErrors } from './csv-import.ts'
import type { CsvColumns, CsvRow, CsvShape } from './csv-import.ts'
import { identityOf } from './plugins/auth.ts'
import { createRecord } from './record-create.ts'
import type { RecordWriteRoutes } from './record-routes.ts'
import { ROUTE_INDEX } from './routes/not-built.ts'
import { ErrorBody, authErrors } from './schemas/common.ts'
import { CommitBody, ImportFileBody, ImportOutcome, ImportPreview } from './schemas/imports.ts'

type App = Parameters<FastifyPluginAsyncZod>[0]

/** A preview not committed within a day is gone: commit answers 404 (and removes the file). */
export const IMPORT_TTL_MS = 24 * 60 * 60 * 1000
const PREVIEW_ROWS = 10
/** Rows whose unique values are looked up together. */
const CHUNK = 500

/** Whether the spec's route index lists a CSV import for this record module (contacts does). */
export const importsListed = (plural: string) => ROUTE_INDEX.some((route) => route.path === `/api/${plural}/import/preview/`)

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
  // The record modules' read-model tables are named like their routes (`contacts`).
  const rows = await (db as Kysely<any>)
    .selectFrom(table)
    .select(lowered.as('value'))
    .where('org_id', '=', orgId)
    .where('is_deleted', '=', false)
    .where(lowered, 'in', values.map((v) => v.trim().toLowerCase()))
    .execute()
  return new Set((rows as { value: string }[]).map((row) => row.value))
}

const GONE = 'Import not found, expired or already committed'

/**
 * CSV import of a plain record module (§4.8 `/api/<plural>/import/preview/` and `commit/`; issue 4).
 * Preview validates every row (the POST body schema, relations, the unique field taken in the
 * organization or earlier in the file) and keeps the file, owned by the organization and the
 * uploader, under an import id; commit re-reads it and creates each valid row through the POST
 * path (createRecord), under ids derived from the import and the row, so commits are idempotent.
 * Only the uploader commits, within IMPORT_TTL_MS; once committed the file is gone (404 after).
 */
export function recordImportRoutes<Fields extends Record<Unique, string | null>, Unique extends keyof Fields & string, N extends RecordNames>(app: App, deps: AppDeps, options: RecordWriteRoutes<Fields, Unique, N>): void {
  const { plural, unique } = options
  const files = deps.files ?? diskFileStore(join(deps.config.dataDir, 'imports'))
  const shape: CsvShape<Partial<Fields>> = { schema: options.body, fields: Object.keys(options.empty()) }
  const keyOf = (identity: Identity, importId: string) => {
    if (!identity.profileId) throw new ForbiddenError('Importing needs a member: sign in or use a personal access token')
    return `imports/${plural}/${identity.orgId}/${identity.profileId}/${importId}`
  }
  const tags = [plural]
  const errors = { 400: ErrorBody, ...authErrors, 404: ErrorBody, 413: ErrorBody } as const

  /** Every row's verdict; the first valid ones as they would be created. */
  async function previewRows(identity: Identity, file: Readable, columns: CsvColumns) {
    const refused = rowErrors()
    const duplicate = firstOccurrences(unique.field)
    const preview: Fields[] = []
    let total = 0
    for await (const chunk of chunksOf(csvRows(file, shape, columns), CHUNK)) {
      total += chunk.length
      const candidates = chunk.filter((item): item is Extract<CsvRow<Partial<Fields>>, { body: unknown }> => {
        const problem = item.errors !== undefined ? item.errors : duplicate(item.row, item.body[unique.field])
        if (problem) refused.add({ row: item.row, errors: problem })
        return !problem
      })
      const values = candidates.map((item) => item.body[unique.field]).filter((value): value is NonNullable<typeof value> => typeof value === 'string')
      const taken = await takenValues(deps.db, plural, identity.orgId, unique.field, values)
      const verdicts = await Promise.all(candidates.map(async ({ body }) => {
        const value = body[unique.field]
        if (typeof value === 'string' && taken.has(value.trim().toLowerCase())) return { [unique.field]: [`"${value}" is already in use.`] }
        return options.checkRelations(identity.orgId, body).then(() => undefined, refusalOf)
      }))
      candidates.forEach((item, index) => {
        const problem = verdicts[index]
        if (problem) refused.add({ row: item.row, errors: problem })
        else if (preview.length < PREVIEW_ROWS) preview.push(replacing(options.empty(), item.body))
      })
    }
    return { total, refused, preview }
  }

  app.post(`/api/${plural}/import/preview/`, { schema: { tags, summary: `Check a CSV file of ${plural} and keep it for commit`, description: `Nothing is created. Rows are checked as POST /api/${plural}/ would check them; a ${unique.field} already in the organization or on an earlier row is a row error. The import id expires after 24 hours.`, consumes: ['multipart/form-data'], body: ImportFileBody, response: { 200: ImportPreview, ...errors } } }, async (request) => {
    const identity = identityOf(request)
    const now = deps.clock()
    const importId = importIdAt(now)
    const key = keyOf(identity, importId)
    const columns: CsvColumns = { recognized: [], ignored: [] }
    const { total, refused, preview } = await previewRows(identity, createReadStream(request.body.file.path), columns)
    await files.adopt(request.body.file.path, key)
    const expires = new Date(previewedAt(importId) + IMPORT_TTL_MS).toISOString()
    return { error: false as const, import_id: importId, expires_at: expires, total_rows: total, valid_rows: total - refused.count, invalid_rows: refused.count, errors: refused.list(), preview, columns }
  })

  app.post(`/api/${plural}/import/commit/`, { schema: { tags, summary: `Create the valid rows of a previewed CSV file of ${plural}`, description: `Each row goes through POST /api/${plural}/'s rules again: rows refused now (a ${unique.field} taken since the preview) are reported. The import id works for the member who previewed it, within 24 hours, until committed; otherwise 404. Each row's record id derives from the import and the row, so a commit retried after a failure (or run twice at once) creates each row once.`, body: CommitBody, response: { 200: ImportOutcome, ...errors } } }, async (request, reply) => {
    const identity = identityOf(request)
    const importId = request.body.import_id.toLowerCase()
    const key = keyOf(identity, importId)
    const expired = deps.clock().getTime() - previewedAt(importId) > IMPORT_TTL_MS
    if (expired) await files.remove(key)
    const file = expired ? undefined : await files.open(key)
    if (!file) throw new NotFoundError(GONE)
    const commands = requestCommands(deps, request, reply)
    const at = deps.clock().toISOString()
    const outcome = await createRows(csvRows(file, shape, { recognized: [], ignored: [] }), {
      uniqueField: unique.field,
      unique: (body) => body[unique.field],
      create: (body, row) => createRecord(options, commands, identity, body, at, rowRecordId(importId, row)).then(() => undefined),
      settle: commands.settle,
    }).finally(() => file.destroy())
    // Removed only once every row was tried: a commit that failed midway (a 503) may be retried, and creates each row once.
    await files.remove(key)
    return { error: false as const, message: `${outcome.created} ${plural} imported`, ...outcome }
  })
}
