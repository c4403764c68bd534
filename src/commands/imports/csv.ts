import type { Readable } from 'node:stream'
import { CsvError, parse } from 'csv-parse'
import type { z } from 'zod'
import { DomainError, ValidationError, errorsByField } from '../../errors.ts'

/**
 * CSV imports (contacts' preview and commit, the lead upload): a file already on disk (bodies.ts
 * streams uploads there) is read record by record, never whole. The header row names the columns,
 * case-insensitively; each data row is validated by the module's own create body schema, so a row
 * is accepted exactly when POST would accept the same values.
 */

/** At most this many data rows per file (413 beyond), besides MAX_UPLOAD_BYTES for the file itself. */
export const MAX_IMPORT_ROWS = 50_000
/** One record may not exceed this: a runaway quote must not make the parser buffer the whole file. */
const MAX_RECORD_BYTES = 64 * 1024
/** Answers list the errors of at most this many rows (the lowest row numbers); counts cover them all. */
export const ERRORS_SHOWN = 100

export type FieldErrors = Record<string, string[]>
export type RowError = { row: number; errors: FieldErrors }
/** A data row (1-based, the header not counted): the body the schema parsed, or why it refused it. */
export type CsvRow<T> = { row: number; body: T; errors?: undefined } | { row: number; body?: undefined; errors: FieldErrors }
export type CsvColumns = { recognized: string[]; ignored: string[] }

export type CsvShape<T> = {
  /** The module's create body schema, the one its POST route validates. */
  schema: z.ZodType<T>
  /** The body fields a column may fill. */
  fields: readonly string[]
  /** Other spellings of a field, e.g. `account_name` for `company_name`. */
  aliases?: Readonly<Record<string, string>>
  /** Further columns the schema reads as they are, e.g. custom field values `cf_<key>`. */
  passThrough?: (column: string) => boolean
}

/** `First Name`, `first-name` and `FIRST_NAME` all name `first_name`. */
const fieldName = (header: string) => header.trim().toLowerCase().replace(/[\s-]+/g, '_')

/** Zod's issues as the error handler renders a body's: field (dotted) to messages. */
export const issueErrors = (issues: readonly z.core.$ZodIssue[]): FieldErrors => errorsByField(issues.map((issue) => [issue.path.join('.'), issue.message]))

/** The fields a body cannot leave out: the ones an empty body is refused for. */
function requiredFields<T>(shape: CsvShape<T>): Set<string> {
  const result = shape.schema.safeParse({})
  return new Set(result.success ? [] : result.error.issues.map((issue) => String(issue.path[0] ?? '')).filter((field) => shape.fields.includes(field)))
}

/** Each header cell's field (undefined: ignored), and the column report; 400 when a required field has no column. */
function mapHeader<T>(header: readonly string[], shape: CsvShape<T>, required: Set<string>, columns: CsvColumns): (string | undefined)[] {
  const taken = new Set<string>()
  const fields = header.map((cell) => {
    const name = fieldName(cell)
    const field = shape.aliases?.[name] ?? name
    const known = shape.fields.includes(field) || (shape.passThrough?.(field) ?? false)
    if (!known || taken.has(field)) {
      columns.ignored.push(cell)
      return undefined
    }
    taken.add(field)
    columns.recognized.push(field)
    return field
  })
  const missing = [...required].filter((field) => !taken.has(field))
  if (missing.length) throw new ValidationError({ file: [`Expected a header row with a column for ${missing.join(', ')}; found: ${header.join(', ')}`] })
  return fields
}

/** A record as a body: a blank cell is no value, except in a required field, which the schema then reports as blank. */
function bodyOf(record: readonly string[], fields: readonly (string | undefined)[], required: Set<string>): Record<string, string> {
  const body: Record<string, string> = Object.create(null)
  fields.forEach((field, index) => {
    const cell = record[index] ?? ''
    if (field && (cell.trim() !== '' || required.has(field))) body[field] = cell
  })
  return { ...body }
}

function malformed(error: CsvError, where: string): ValidationError {
  const line = typeof error.lines === 'number' ? ` (line ${error.lines})` : ''
  return new ValidationError({ file: [`Malformed CSV at ${where}${line}: ${error.message}`] })
}

const NUL = 'Text may not contain NUL (\\u0000) characters.'

/** The schema's verdict on a row; a NUL character, which PostgreSQL cannot store, is refused first (bodies.ts does the same for other bodies). */
function validate<T>(row: number, body: Record<string, string>, schema: z.ZodType<T>): CsvRow<T> {
  const nul = Object.keys(body).filter((field) => body[field]!.includes('\u0000'))
  if (nul.length) return { row, errors: Object.fromEntries(nul.map((field) => [field, [NUL]])) }
  const parsed = schema.safeParse(body)
  return parsed.success ? { row, body: parsed.data } : { row, errors: issueErrors(parsed.error.issues) }
}

/**
 * The data rows of a CSV file (a stream of the uploaded or kept file), validated one at a time.
 * `columns` is filled in once the header is read. Malformed CSV (an unclosed quote, a row with more
 * cells than the header) and a header without a required column are 400; more than `maxRows` rows 413.
 */
export async function* csvRows<T>(input: Readable, shape: CsvShape<T>, columns: CsvColumns, maxRows = MAX_IMPORT_ROWS): AsyncGenerator<CsvRow<T>> {
  const required = requiredFields(shape)
  // Short rows are filled with blanks (spreadsheets drop trailing empty cells); longer ones are malformed.
  const parser = parse({ bom: true, skip_empty_lines: true, relax_column_count_less: true, max_record_size: MAX_RECORD_BYTES })
  input.on('error', (error) => parser.destroy(error)).pipe(parser)
  let fields: (string | undefined)[] | undefined
  let row = 0
  try {
    for await (const record of parser as AsyncIterable<string[]>) {
      if (!fields) {
        fields = mapHeader(record, shape, required, columns)
        continue
      }
      if (++row > maxRows) throw new DomainError(413, { file: [`Expected at most ${maxRows} data rows in one file.`] })
      yield validate(row, bodyOf(record, fields, required), shape.schema)
    }
  } catch (error) {
    throw error instanceof CsvError ? malformed(error, fields ? `data row ${row + 1}` : 'the header row') : error
  } finally {
    input.destroy()
    parser.destroy()
  }
  if (!fields) throw new ValidationError({ file: ['Expected a CSV file with a header row.'] })
}

/** Reads the whole file once for what refuses it outright (malformed, too many rows, a required column missing), before anything is created. */
export async function checkCsv<T>(input: Readable, shape: CsvShape<T>, columns: CsvColumns): Promise<void> {
  const rows = csvRows(input, shape, columns)
  while (!(await rows.next()).done);
}

/** Row errors as answered: counted in full, the first ERRORS_SHOWN (by row number) kept. */
export function rowErrors() {
  let kept: RowError[] = []
  let count = 0
  const trim = () => (kept = kept.sort((a, b) => a.row - b.row).slice(0, ERRORS_SHOWN))
  return {
    add(error: RowError) {
      count++
      kept.push(error)
      if (kept.length > 2 * ERRORS_SHOWN) trim()
    },
    get count() {
      return count
    },
    list: () => trim(),
  }
}
export type RowErrors = ReturnType<typeof rowErrors>

/** A refused create as a row's errors: a domain error's field messages; anything else is a real failure and propagates. */
export function refusalOf(error: unknown): FieldErrors {
  if (!(error instanceof DomainError) || error.statusCode >= 500) throw error
  return typeof error.errors === 'string' ? { non_field_errors: [error.errors] } : (error.errors as FieldErrors)
}

/**
 * The first row of each unique value (lower-cased, e.g. an email) keeps it; a later row with the
 * same value is a row error, the same in preview, commit and upload.
 */
export function firstOccurrences(field: string) {
  const seen = new Map<string, number>()
  return (row: number, value: unknown): FieldErrors | undefined => {
    if (typeof value !== 'string' || value === '') return undefined
    const key = value.trim().toLowerCase()
    const first = seen.get(key)
    if (first !== undefined) return { [field]: [`Duplicate of row ${first} in this file.`] }
    seen.set(key, row)
    return undefined
  }
}

export async function* chunksOf<T>(items: AsyncIterable<T>, size: number): AsyncGenerator<T[]> {
  const chunk: T[] = []
  for await (const item of items) {
    chunk.push(item)
    if (chunk.length === size) yield chunk.splice(0)
  }
  if (chunk.length) yield chunk
}

/** Runs `work` on each item, at most `limit` at a time, in order of arrival; the first failure stops it after what runs finishes. */
export async function eachConcurrently<T>(items: Iterable<T> | AsyncIterable<T>, limit: number, work: (item: T) => Promise<void>): Promise<void> {
  const running = new Set<Promise<void>>()
  let failure: { error: unknown } | undefined
  for await (const item of items) {
    if (failure) break
    const task: Promise<void> = work(item)
      .catch((error: unknown) => void (failure ??= { error }))
      .finally(() => running.delete(task))
    running.add(task)
    if (running.size >= limit) await Promise.race(running)
  }
  await Promise.all(running)
  if (failure) throw failure.error
}

export type ImportOutcome = { created: number; failed: number; errors: RowError[] }

/** Rows created between two waits for the read models. */
const SETTLE_EVERY = 1000
const CONCURRENCY = 8

type CreateRows<T> = {
  /** The module's unique field (e.g. email) and its value in a body. */
  uniqueField: string
  unique: (body: T) => unknown
  /** Creates one row (`row` its number); a refusal (DomainError) becomes the row's errors. */
  create: (body: T, row: number) => Promise<void>
  /** Read-your-writes (RequestCommands.settle). */
  settle: () => Promise<void>
}

/**
 * Creates every valid row through `create` (the module's own create path, so its rules and name
 * claims hold), a few at a time: invalid rows, duplicates within the file and refused creates
 * become row errors. Every SETTLE_EVERY rows it waits for the read models, so a large file never
 * runs far ahead of them and the answer comes after every row is readable.
 */
export async function createRows<T>(rows: AsyncIterable<CsvRow<T>>, options: CreateRows<T>): Promise<ImportOutcome> {
  const errors = rowErrors()
  const duplicate = firstOccurrences(options.uniqueField)
  let created = 0
  const createRow = async (item: CsvRow<T>) => {
    if (item.errors) return errors.add({ row: item.row, errors: item.errors })
    const refused = duplicate(item.row, options.unique(item.body))
    if (refused) return errors.add({ row: item.row, errors: refused })
    try {
      await options.create(item.body, item.row)
      created++
    } catch (error) {
      errors.add({ row: item.row, errors: refusalOf(error) })
    }
  }
  for await (const chunk of chunksOf(rows, SETTLE_EVERY)) {
    await eachConcurrently(chunk, CONCURRENCY, createRow)
    await options.settle()
  }
  return { created, failed: errors.count, errors: errors.list() }
}
