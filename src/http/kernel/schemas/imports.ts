import { z } from 'zod'
import { ERRORS_SHOWN, MAX_IMPORT_ROWS } from '../../../commands/imports/csv.ts'
import { UploadedFileSchema } from './notes.ts'

/** Request and response shapes of the CSV imports (contacts' preview and commit, the lead upload). */

const csvFile = (field: string) =>
  UploadedFileSchema.describe(
    `multipart/form-data \`${field}\`: a CSV file (UTF-8, a BOM allowed) whose header row names the columns, case-insensitively (\`First Name\` reads as first_name); unknown columns are ignored and reported. At most MAX_UPLOAD_BYTES (else 413) and ${MAX_IMPORT_ROWS} data rows (else 413). Malformed CSV is 400 naming the data row`,
  )

export const ImportFileBody = z.object({ file: csvFile('file') })

export const LeadsFileBody = z
  .object({ leads_file: csvFile('leads_file').optional(), file: csvFile('file (the same, for clients that name it so)').optional() })
  .transform((body, context) => {
    const file = body.leads_file ?? body.file
    if (!file) context.addIssue({ code: 'custom', path: ['leads_file'], message: 'Expected a file (multipart/form-data).' })
    return file!
  })

const RowError = z.object({
  row: z.number().int().describe('1-based data row number (the header row not counted)'),
  errors: z.record(z.string(), z.unknown()).describe('Field name to messages, as POST would answer for the same values'),
})
const errorList = z.array(RowError).describe(`The first ${ERRORS_SHOWN} rows refused, by row number`)
export const Columns = z.object({ recognized: z.array(z.string()).describe('Fields the columns fill'), ignored: z.array(z.string()).describe('Header cells that name no field (or repeat one), as written') })

export const ImportPreview = z.object({
  error: z.literal(false),
  import_id: z.uuid().describe('Commit with this id (the same caller, before expires_at)'),
  expires_at: z.string(),
  total_rows: z.number().int(),
  valid_rows: z.number().int(),
  invalid_rows: z.number().int(),
  errors: errorList,
  preview: z.array(z.record(z.string(), z.unknown())).describe('The first 10 valid rows as they would be created'),
  columns: Columns,
})

export const CommitBody = z.object({ import_id: z.uuid() })

export const ImportOutcome = z.object({
  error: z.literal(false),
  message: z.string(),
  created: z.number().int(),
  failed: z.number().int().describe('Rows refused: invalid, a duplicate within the file, or refused by the create rules (an email taken since the preview)'),
  errors: errorList,
})

export const LeadUploadOutcome = ImportOutcome.extend({ columns: Columns })
