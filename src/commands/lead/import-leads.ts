import { createReadStream } from 'node:fs'
import type { Position } from '../../eventstore/event-store.ts'
import { lookupsOf } from '../../lookups/lookups.ts'
import type { Caller } from '../caller.ts'
import { commandSession, readModelsAt } from '../command-session.ts'
import { checkCsv, createRows, csvRows } from '../imports/csv.ts'
import type { CsvColumns, CsvShape, ImportOutcome } from '../imports/csv.ts'
import type { DealDeps } from '../opportunity/create-opportunity.ts'
import { createLead } from './create-lead.ts'
import type { LeadInput } from './lead.ts'

export type LeadRows<Row> = {
  /** What a row must satisfy (the create body schema) and which columns fill which fields. */
  shape: CsvShape<Row>
  /** A valid row as the decider's input. */
  inputOf: (row: Row) => LeadInput
  /** Each row's email, unique within the file as in the organization. */
  emailOf: (row: Row) => unknown
}

/**
 * Creates a lead from each valid row of a CSV file (at `path`) through createLead, so every rule of
 * a single create holds (an email taken in the organization or on an earlier row is a row error).
 * A malformed or oversized file creates nothing: it is read once for that before any row is created.
 */
export async function importLeads<Row>(deps: DealDeps, caller: Caller, path: string, rows: LeadRows<Row>): Promise<ImportOutcome & { columns: CsvColumns; position: Position | null }> {
  const columns: CsvColumns = { recognized: [], ignored: [] }
  await checkCsv(createReadStream(path), rows.shape, columns)
  const lookups = lookupsOf(deps)
  const [customFields, org] = await Promise.all([lookups.customFields(caller.orgId, 'leads'), lookups.organization(caller.orgId)])
  const session = commandSession(deps.store, caller)
  const outcome = await createRows(csvRows(createReadStream(path), rows.shape, { recognized: [], ignored: [] }), {
    uniqueField: 'email',
    unique: rows.emailOf,
    create: (row) => createLead(deps, caller, rows.inputOf(row), { customFields, defaultCurrency: org.default_currency, session }).then(() => undefined),
    settle: () => readModelsAt(deps, session.position()),
  })
  return { ...outcome, columns, position: session.position() }
}
