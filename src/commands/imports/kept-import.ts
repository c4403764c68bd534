import { createHash, randomBytes } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { join } from 'node:path'
import type { Readable } from 'node:stream'
import type { Deps } from '../../deps.ts'
import { ForbiddenError, NotFoundError } from '../../errors.ts'
import { diskFileStore } from '../../files/file-store.ts'
import type { Caller } from '../caller.ts'
import type { CsvColumns } from './csv.ts'

/**
 * The two steps every CSV import shares (contacts' through record-import.ts, cases'): preview reads
 * the file once and keeps it, owned by the organization and the uploader, under an import id;
 * commit opens it again, creates each row under an id derived from the import and the row (so a
 * commit retried after a failure, or run twice at once, creates each row once), and removes it.
 * Only the uploader commits, within IMPORT_TTL_MS; once committed the file is gone (404 after).
 */

/** A preview not committed within a day is gone: commit answers 404 (and removes the file). */
export const IMPORT_TTL_MS = 24 * 60 * 60 * 1000
const GONE = 'Import not found, expired or already committed'

export type ImportDeps = Pick<Deps, 'db' | 'store' | 'clock' | 'projections' | 'config' | 'files'>

const uuidOf = (bytes: Buffer) => {
  const hex = bytes.toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`
}

/** A version-7 uuid: its first 48 bits are the time of the preview, so expiry needs no stored date. */
function importIdAt(now: Date): string {
  const bytes = randomBytes(16)
  bytes.writeUIntBE(now.getTime(), 0, 6)
  bytes[6] = (bytes[6]! & 0x0f) | 0x70
  bytes[8] = (bytes[8]! & 0x3f) | 0x80
  return uuidOf(bytes)
}
const previewedAt = (importId: string) => parseInt(importId.replace(/-/g, '').slice(0, 12), 16)

/** The id of the record a row creates, derived from the import and the row (a version-8 uuid). */
export function rowRecordId(importId: string, row: number): string {
  const bytes = createHash('sha256').update(`${importId}/${row}`).digest().subarray(0, 16)
  bytes[6] = (bytes[6]! & 0x0f) | 0x80
  bytes[8] = (bytes[8]! & 0x3f) | 0x80
  return uuidOf(bytes)
}

const importFiles = (deps: ImportDeps) => deps.files ?? diskFileStore(join(deps.config.dataDir, 'imports'))

function keyOf(plural: string, caller: Caller, importId: string): string {
  if (!caller.profileId) throw new ForbiddenError('Importing needs a member: sign in or use a personal access token')
  return `imports/${plural}/${caller.orgId}/${caller.profileId}/${importId}`
}

export type KeptImport = { importId: string; expiresAt: string; columns: CsvColumns }

/** Checks the file at `path` (which it takes over) with `check`, creating nothing, and keeps it for commit under a new import id. */
export async function keepImport<Checked>(deps: ImportDeps, caller: Caller, plural: string, path: string, check: (file: Readable, columns: CsvColumns) => Promise<Checked>): Promise<KeptImport & Checked> {
  const importId = importIdAt(deps.clock())
  const key = keyOf(plural, caller, importId)
  const columns: CsvColumns = { recognized: [], ignored: [] }
  const checked = await check(createReadStream(path), columns)
  await importFiles(deps).adopt(path, key)
  return { importId, expiresAt: new Date(previewedAt(importId) + IMPORT_TTL_MS).toISOString(), columns, ...checked }
}

/** Runs `commit` on the kept file of the caller's preview (404 when it is not theirs, expired or committed), then removes it. */
export async function commitKeptImport<Outcome>(deps: ImportDeps, caller: Caller, plural: string, importId: string, commit: (file: Readable, rowId: (row: number) => string) => Promise<Outcome>): Promise<Outcome> {
  const files = importFiles(deps)
  const id = importId.toLowerCase()
  const key = keyOf(plural, caller, id)
  const expired = deps.clock().getTime() - previewedAt(id) > IMPORT_TTL_MS
  if (expired) await files.remove(key)
  const file = expired ? undefined : await files.open(key)
  if (!file) throw new NotFoundError(GONE)
  const outcome = await commit(file, (row) => rowRecordId(id, row)).finally(() => file.destroy())
  // Removed only once every row was tried: a commit that failed midway (a 503) may be retried, and creates each row once.
  await files.remove(key)
  return outcome
}
