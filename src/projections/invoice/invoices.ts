import { sql } from 'kysely'
import { amountsOf, invoiceStreams, statusFrom } from '../../commands/invoice/invoice.ts'
import type { InvoiceEvent } from '../../commands/invoice/invoice.ts'
import { isNumberStream } from '../../commands/invoice/number-sequence.ts'
import type { NumberEvent } from '../../commands/invoice/number-sequence.ts'
import { isNoteEvent, noteEventTypes } from '../../commands/notes.ts'
import type { Db } from '../../db/database.ts'
import { domainEventOf } from '../../events/versions.ts'
import { applyNoteEvent, createNoteTables, noteTables } from '../kernel/notes.ts'
import type { Projector } from '../kernel/projector.ts'
import { INVOICE_TOTALS_TABLE, createInvoiceTotalsTable, moveInvoiceTotals } from './invoice-totals.ts'
import type { InvoiceRow } from './tables.ts'

export type { InvoiceRow } from './tables.ts'

export const INVOICE_NOTES = noteTables('invoice')

const TEXT = ['invoice_title', 'client_name', 'client_email', 'client_phone', 'billing_address_line', 'billing_city', 'billing_state', 'billing_postcode', 'billing_country', 'client_address_line', 'client_city', 'client_state', 'client_postcode', 'client_country', 'currency', 'payment_terms', 'reminder_frequency', 'notes', 'terms']
const MONEY = ['discount_value', 'tax_rate', 'shipping_amount', 'subtotal', 'discount_amount', 'tax_amount', 'total_amount', 'amount_paid', 'amount_credited', 'amount_due']

async function createTables(db: Db): Promise<void> {
  const text = sql.join(TEXT.map((column) => sql`${sql.id(column)} text NOT NULL`))
  // Unbounded numeric: an amount the commands accepted is never refused here (a projection never fails on a recorded fact).
  const money = sql.join(MONEY.map((column) => sql`${sql.id(column)} numeric NOT NULL`))
  await sql`CREATE TABLE invoices (
    id uuid PRIMARY KEY, org_id uuid NOT NULL, invoice_number text, status text NOT NULL,
    account uuid, contact uuid, opportunity uuid, ${text}, ${money},
    discount_type text, issue_date date NOT NULL, due_date date,
    reminder_enabled boolean NOT NULL, reminder_days_before integer NOT NULL, reminder_days_after integer NOT NULL, public_link_enabled boolean NOT NULL,
    billing_period text, po_number text, assigned_to uuid[] NOT NULL, teams uuid[] NOT NULL,
    line_items jsonb NOT NULL, payments jsonb NOT NULL, credit_notes jsonb NOT NULL, tax_breakdown jsonb NOT NULL, duplicated_from uuid, created_by uuid,
    created_at timestamptz NOT NULL, updated_at timestamptz NOT NULL, sent_at timestamptz, viewed_at timestamptz, paid_at timestamptz, cancelled_at timestamptz)`.execute(db)
  await createNoteTables(db, INVOICE_NOTES)
  await createInvoiceTotalsTable(db)
}

/** The list's order and the per-organization number lookups; apply finds invoices by id. */
async function createIndexes(db: Db): Promise<void> {
  await sql`CREATE INDEX invoices_org_created ON invoices (org_id, created_at DESC, id)`.execute(db)
  await sql`CREATE INDEX invoices_org_due ON invoices (org_id, due_date)`.execute(db)
  await sql`CREATE INDEX invoices_org_account ON invoices (org_id, account)`.execute(db)
}

// pg sends a JS array as a Postgres array; jsonb wants the JSON text.
const json = <T>(value: T) => JSON.stringify(value) as unknown as T

/** The amounts, status and paid time of a row whose lines, terms or payments changed. */
function recomputed(row: InvoiceRow, at: Date): Partial<InvoiceRow> {
  const amounts = amountsOf({ fields: row, lines: row.line_items, payments: row.payments, credits: row.credit_notes })
  const status = statusFrom({ cancelled: row.cancelled_at !== null, issued: row.sent_at !== null, viewed: row.viewed_at !== null, ...amounts })
  const paid_at = status !== 'Paid' ? null : row.status === 'Paid' ? row.paid_at : at
  const { subtotal, discount_amount, tax_amount, tax_breakdown, total_amount, amount_paid, amount_credited, amount_due } = amounts
  return { subtotal, discount_amount, tax_amount, tax_breakdown: json(tax_breakdown), total_amount, amount_paid, amount_credited, amount_due, status, paid_at }
}

/** The row after an event of its own stream, before its amounts are recomputed. */
function next(row: InvoiceRow, event: Exclude<InvoiceEvent, { type: 'InvoiceCreated' }>, at: Date): InvoiceRow {
  switch (event.type) {
    case 'InvoiceUpdated':
      return { ...row, ...Object.fromEntries(Object.entries(event.data.changes).map(([key, change]) => [key, change.to])) }
    case 'InvoiceLinesChanged':
      return { ...row, line_items: event.data.line_items }
    case 'InvoiceIssued':
    case 'InvoiceResent':
      return { ...row, sent_at: at }
    case 'InvoicePaymentRecorded': {
      if (row.payments.some((p) => p.payment_id === event.data.payment_id)) return row
      const { by: _by, at: _at, ...payment } = event.data
      return { ...row, payments: [...row.payments, { ...payment, reversed: false }] }
    }
    case 'InvoicePaymentReversed':
      return { ...row, payments: row.payments.map((p) => (p.payment_id === event.data.payment_id ? { ...p, reversed: true } : p)) }
    case 'InvoiceViewed':
      return { ...row, viewed_at: row.viewed_at ?? at }
    case 'InvoiceCancelled':
      return { ...row, cancelled_at: row.cancelled_at ?? at }
    case 'CreditNoteIssued':
      return row.credit_notes.some((c) => c.credit_note_id === event.data.credit_note_id) ? row : { ...row, credit_notes: [...row.credit_notes, { credit_note_id: event.data.credit_note_id, total_amount: event.data.total_amount }] }
    default:
      return row
  }
}

const ROW = sql`i.*, i.issue_date::text AS issue_date, i.due_date::text AS due_date`

async function rowOf(db: Db, id: string): Promise<InvoiceRow | undefined> {
  const { rows } = await sql<InvoiceRow>`SELECT ${ROW} FROM invoices i WHERE i.id = ${id}`.execute(db)
  return rows[0]
}

async function apply(db: Db, id: string, event: InvoiceEvent | Extract<NumberEvent, { type: 'InvoiceNumberAllocated' }>): Promise<void> {
  const at = new Date(event.data.at)
  if (event.type === 'InvoiceNumberAllocated') {
    await db.updateTable('invoices').set({ invoice_number: event.data.number }).where('id', '=', event.data.record_id).execute()
    return
  }
  if (isNoteEvent('Invoice', event)) {
    const owner = await db.selectFrom('invoices').select('org_id').where('id', '=', id).executeTakeFirst()
    if (owner) await applyNoteEvent(db, INVOICE_NOTES, 'Invoice', { id, orgId: owner.org_id }, event)
    return
  }
  if (event.type === 'InvoiceCreated') {
    const { invoice_id: _id, at: _at, line_items, ...fields } = event.data
    const row = { ...fields, id, invoice_number: null, line_items, payments: [], credit_notes: [], created_at: at, updated_at: at, sent_at: null, viewed_at: null, paid_at: null, cancelled_at: null } as unknown as InvoiceRow
    const computed = { ...row, ...recomputed(row, at) }
    const inserted = await db.insertInto('invoices').values({ ...computed, line_items: json(line_items), payments: json([]), credit_notes: json([]) }).onConflict((oc) => oc.column('id').doNothing()).returning('id').executeTakeFirst()
    if (inserted) await moveInvoiceTotals(db, undefined, computed)
    return
  }
  const row = await rowOf(db, id)
  if (!row) return
  const changed = next(row, event, at)
  const after = { ...changed, ...recomputed(changed, at) }
  const { id: _id, org_id: _org, created_at: _created, issue_date, due_date, ...values } = after
  await db.updateTable('invoices').set({ ...values, issue_date, due_date, line_items: json(changed.line_items), payments: json(changed.payments), credit_notes: json(changed.credit_notes), updated_at: at }).where('id', '=', id).execute()
  await moveInvoiceTotals(db, row, after)
}

export const invoicesProjector: Projector = {
  name: 'invoices',
  // 2: credit notes (amount_credited, credit_notes). 3: the list header's totals kept in invoice_totals (invoice-totals.ts).
  version: 3,
  eventTypes: ['InvoiceCreated', 'InvoiceUpdated', 'InvoiceLinesChanged', 'InvoiceIssued', 'InvoiceResent', 'InvoiceViewed', 'InvoicePaymentRecorded', 'InvoicePaymentReversed', 'InvoiceCancelled', 'CreditNoteIssued', 'InvoiceNumberAllocated', ...noteEventTypes('Invoice')],
  tables: ['invoices', INVOICE_NOTES.comments, INVOICE_NOTES.attachments, INVOICE_TOTALS_TABLE],
  createTables,
  createIndexes,
  apply: (trx, recorded) => apply(trx, isNumberStream(recorded.streamName) ? '' : invoiceStreams.idOf(recorded.streamName), domainEventOf<InvoiceEvent | Extract<NumberEvent, { type: 'InvoiceNumberAllocated' }>>(recorded)),
}
