import type { Readable } from 'node:stream'
import { z } from 'zod'
import type { Position } from '../../eventstore/event-store.ts'
import { ValidationError } from '../../errors.ts'
import { caseImportRefs, caseNameTaken } from '../../projections/case/import-refs.ts'
import type { CaseImportRefs } from '../../projections/case/import-refs.ts'
import type { Caller } from '../caller.ts'
import { actorOfCaller } from '../caller.ts'
import { commandSession, readModelsAt } from '../command-session.ts'
import type { Definition } from '../custom-field/values.ts'
import { chunksOf, createRows, csvRows, firstOccurrences, refusalOf, rowErrors } from '../imports/csv.ts'
import type { CsvColumns, CsvRow, CsvShape, FieldErrors, ImportOutcome, RowError } from '../imports/csv.ts'
import { commitKeptImport, keepImport } from '../imports/kept-import.ts'
import type { ImportDeps, KeptImport } from '../imports/kept-import.ts'
import { takenValues } from '../imports/record-import.ts'
import { caseDecider } from './case.ts'
import type { CaseInput } from './case.ts'
import { CASE_PRIORITIES, CASE_STATUSES, CASE_TYPES } from './fields.ts'
import { caseDefinitions, createCase } from './write-case.ts'

/**
 * CSV import of cases (the original's services/csv_import.py), on the imports' two steps
 * (imports/kept-import.ts): the columns name, status and priority (required), description,
 * case_type, closed_on, account_name, contact_emails, assigned_emails, team_names and tags (lists
 * separated by `;`), choices matched case-insensitively. Names and emails resolve in the
 * organization (a row naming one that does not exist is refused, where the original created
 * missing tags); a name already a case's, or an earlier row's, is refused as the original refuses
 * it. Every row is then checked by the create decision itself, and committed as a case of its own:
 * a refused row is reported and the others are created.
 */
const PREVIEW_ROWS = 10
const CHUNK = 500
const TAKEN = 'A ticket with this name already exists'

const choice = <T extends string>(values: readonly T[], label: string) =>
  z.string().transform((raw, context): T => {
    const value = values.find((v) => v.toLowerCase() === raw.trim().toLowerCase())
    if (!value) context.addIssue({ code: 'custom', message: `${label} must be one of: ${values.join(', ')}` })
    return value ?? values[0]!
  })
const list = z.string().transform((raw) => raw.split(';').map((part) => part.trim()).filter(Boolean))

const CaseCsvRow = z.object({
  name: z.string().trim().min(1, 'Name is required').max(64, 'Name exceeds 64 characters'),
  status: choice(CASE_STATUSES, 'Status'),
  priority: choice(CASE_PRIORITIES, 'Priority'),
  description: z.string().optional(),
  case_type: choice(CASE_TYPES, 'Case type').optional(),
  closed_on: z.iso.date('Date must be in YYYY-MM-DD format').optional(),
  account_name: z.string().trim().optional(),
  contact_emails: list.optional(),
  assigned_emails: list.optional(),
  team_names: list.optional(),
  tags: list.optional(),
})
type CaseCsvRow = z.infer<typeof CaseCsvRow>
const SHAPE: CsvShape<CaseCsvRow> = { schema: CaseCsvRow, fields: Object.keys(CaseCsvRow.shape) }

/** A row's names and emails as ids, or the row's errors naming each that does not resolve. */
function resolve(row: CaseCsvRow, refs: CaseImportRefs): { input: CaseInput } | { errors: FieldErrors } {
  const errors: FieldErrors = {}
  const ids = (values: readonly string[] | undefined, map: Map<string, string>, field: string, missing: (value: string) => string) =>
    (values ?? []).flatMap((value) => {
      const id = map.get(value.toLowerCase())
      if (!id) (errors[field] ??= []).push(missing(value))
      return id ? [id] : []
    })
  const account = row.account_name ? ids([row.account_name], refs.accounts, 'account_name', (v) => `No account named '${v}'`)[0] : undefined
  const input: CaseInput = {
    name: row.name,
    status: row.status,
    priority: row.priority,
    description: row.description ?? null,
    case_type: row.case_type ?? null,
    closed_on: row.closed_on ?? null,
    account: account ?? null,
    contacts: ids(row.contact_emails, refs.contacts, 'contact_emails', (v) => `No contact with email '${v}'`),
    assigned_to: ids(row.assigned_emails, refs.members, 'assigned_emails', (v) => `No active member with email '${v}'`),
    teams: ids(row.team_names, refs.teams, 'team_names', (v) => `No team named '${v}'`),
    tags: ids(row.tags, refs.tags, 'tags', (v) => `No tag named '${v}'`),
  }
  return Object.keys(errors).length ? { errors } : { input }
}

/** The rows with what they name resolved, a chunk's names and emails looked up together. */
async function* resolvedRows(deps: ImportDeps, orgId: string, rows: AsyncIterable<CsvRow<CaseCsvRow>>): AsyncGenerator<CsvRow<CaseInput>> {
  let members: Map<string, string> | undefined
  for await (const chunk of chunksOf(rows, CHUNK)) {
    const valid = chunk.flatMap((item) => (item.body ? [item.body] : []))
    const refs = await caseImportRefs(deps.db, orgId, { accounts: valid.flatMap((r) => (r.account_name ? [r.account_name] : [])), contacts: valid.flatMap((r) => r.contact_emails ?? []), members: [], teams: valid.flatMap((r) => r.team_names ?? []), tags: valid.flatMap((r) => r.tags ?? []) }, members)
    members = refs.members
    for (const item of chunk) {
      if (!item.body) yield item
      else {
        const resolved = resolve(item.body, refs)
        yield 'input' in resolved ? { row: item.row, body: resolved.input } : { row: item.row, errors: resolved.errors }
      }
    }
  }
}

/** The create decision's verdict on a row (no event is written): a close without a date, a custom field required. */
function refusedByCreate(caller: Caller, input: CaseInput, customFields: readonly Definition[]): FieldErrors | undefined {
  try {
    caseDecider.decide({ type: 'CreateCase', caseId: '', calendarVersion: 0, orgId: caller.orgId, actor: actorOfCaller(caller), input, customFields, at: new Date(0).toISOString() }, caseDecider.initialState())
    return undefined
  } catch (error) {
    return refusalOf(error)
  }
}

export type CaseImportPreview = KeptImport & { total: number; refused: { count: number; errors: RowError[] }; preview: CaseInput[] }

async function previewRows(deps: ImportDeps, caller: Caller, file: Readable, columns: CsvColumns) {
  const refused = rowErrors()
  const duplicate = firstOccurrences('name')
  const customFields = await caseDefinitions(deps.db, caller.orgId)
  const preview: CaseInput[] = []
  let total = 0
  for await (const chunk of chunksOf(resolvedRows(deps, caller.orgId, csvRows(file, SHAPE, columns)), CHUNK)) {
    total += chunk.length
    const taken = await takenValues(deps.db, 'cases', caller.orgId, 'name', chunk.flatMap((item) => (item.body?.name ? [item.body.name] : [])))
    for (const item of chunk) {
      const name = item.body?.name
      const problem = item.errors ?? duplicate(item.row, name) ?? (name && taken.has(name.trim().toLowerCase()) ? { name: [TAKEN] } : refusedByCreate(caller, item.body!, customFields))
      if (problem) refused.add({ row: item.row, errors: problem })
      else if (preview.length < PREVIEW_ROWS) preview.push(item.body!)
    }
  }
  return { total, refused: { count: refused.count, errors: refused.list() }, preview }
}

/** Checks a CSV file of cases (at `path`, which it takes over) and keeps it for commit; nothing is created. */
export const previewCaseImport = (deps: ImportDeps, caller: Caller, path: string): Promise<CaseImportPreview> => keepImport(deps, caller, 'cases', path, (file, columns) => previewRows(deps, caller, file, columns))

/**
 * Creates each valid row of a previewed file as POST would, under an id derived from the import
 * and the row (a retried commit creates each once); refused rows, a name taken since the preview
 * included (by another case than the row's own, which an earlier try may have created), are reported.
 */
export async function commitCaseImport(deps: ImportDeps, caller: Caller, importId: string): Promise<ImportOutcome & { position: Position | null }> {
  const session = commandSession(deps.store, caller)
  const outcome = await commitKeptImport(deps, caller, 'cases', importId, (file, rowId) =>
    createRows(resolvedRows(deps, caller.orgId, csvRows(file, SHAPE, { recognized: [], ignored: [] })), {
      uniqueField: 'name',
      unique: (input) => input.name,
      create: async (input, row) => {
        if (await caseNameTaken(deps.db, caller.orgId, input.name ?? '', rowId(row))) throw new ValidationError({ name: [TAKEN] })
        await createCase(deps, caller, input, session, { id: rowId(row) })
      },
      settle: () => readModelsAt(deps, session.position()),
    }),
  )
  return { ...outcome, position: session.position() }
}
