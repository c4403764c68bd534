import { sql } from 'kysely'
import { invoiceAmounts } from '../../commands/invoice/money.ts'
import { recurringStreams } from '../../commands/invoice/recurring.ts'
import type { RecurringEvent } from '../../commands/invoice/recurring.ts'
import { periodDate } from '../../commands/invoice/recurring-schedule.ts'
import type { Db } from '../../db/database.ts'
import { domainEventOf } from '../../events/versions.ts'
import { visibleSql } from '../../visibility/policy.ts'
import type { Viewer } from '../../visibility/policy.ts'
import type { Projector } from '../kernel/projector.ts'
import type { RecurringRow } from './tables.ts'

/**
 * The recurring invoices read model: one row per schedule with its lines (jsonb), its amounts per
 * period (money.ts), the next period to generate and its date (recurring-schedule.ts), and how many
 * it generated. Deleted ones are kept, flagged. The scheduled process reads the due ones from here.
 */
const TEXT = ['title', 'client_name', 'client_email', 'frequency', 'payment_terms', 'currency', 'notes', 'terms']
const MONEY = ['discount_value', 'tax_rate', 'subtotal', 'total_amount']

async function createTables(db: Db): Promise<void> {
  await sql`CREATE TABLE recurring_invoices (
    id uuid PRIMARY KEY, org_id uuid NOT NULL, account uuid, contact uuid, opportunity uuid,
    ${sql.join(TEXT.map((c) => sql`${sql.id(c)} text NOT NULL`))}, ${sql.join(MONEY.map((c) => sql`${sql.id(c)} numeric NOT NULL`))},
    discount_type text, custom_days integer, start_date date NOT NULL, end_date date, auto_send boolean NOT NULL,
    assigned_to uuid[] NOT NULL, teams uuid[] NOT NULL, line_items jsonb NOT NULL,
    is_active boolean NOT NULL, is_deleted boolean NOT NULL, next_period integer NOT NULL, next_generation_date date NOT NULL,
    invoices_generated integer NOT NULL, last_generated_at timestamptz, created_by uuid, created_at timestamptz NOT NULL, updated_at timestamptz NOT NULL)`.execute(db)
}

async function createIndexes(db: Db): Promise<void> {
  await sql`CREATE INDEX recurring_invoices_org_created ON recurring_invoices (org_id, created_at DESC, id) WHERE NOT is_deleted`.execute(db)
  await sql`CREATE INDEX recurring_invoices_due ON recurring_invoices (next_generation_date) WHERE is_active AND NOT is_deleted`.execute(db)
}

const json = <T>(value: T) => JSON.stringify(value) as unknown as T
const ROW = sql`r.*, r.start_date::text AS start_date, r.end_date::text AS end_date, r.next_generation_date::text AS next_generation_date`

/** What follows from the fields, lines and next period: the amounts of one period and the next one's date. */
function derived(row: RecurringRow): Pick<RecurringRow, 'subtotal' | 'total_amount' | 'next_generation_date'> {
  const amounts = invoiceAmounts(row.line_items, { ...row, shipping_amount: '0.00' })
  return { subtotal: amounts.subtotal, total_amount: amounts.total_amount, next_generation_date: periodDate(row, row.next_period) }
}

/** The row after an event of its stream (before `derived`). */
function next(row: RecurringRow, event: Exclude<RecurringEvent, { type: 'RecurringInvoiceCreated' }>, at: Date): RecurringRow {
  switch (event.type) {
    case 'RecurringInvoiceUpdated':
      return { ...row, ...Object.fromEntries(Object.entries(event.data.changes).map(([key, change]) => [key, change.to])) }
    case 'RecurringInvoiceLinesChanged':
      return { ...row, line_items: event.data.line_items }
    case 'RecurringInvoicePaused':
      return { ...row, is_active: false }
    case 'RecurringInvoiceResumed':
      return { ...row, is_active: true, next_period: event.data.next_period }
    case 'RecurringInvoiceDeleted':
      return { ...row, is_deleted: true }
    case 'RecurringInvoiceGenerated':
      return row.next_period > event.data.period ? row : { ...row, next_period: event.data.period + 1, invoices_generated: row.invoices_generated + 1, last_generated_at: at }
    case 'RecurringInvoiceCaughtUp':
      return row
  }
}

async function apply(db: Db, id: string, event: RecurringEvent): Promise<void> {
  const at = new Date(event.data.at)
  if (event.type === 'RecurringInvoiceCreated') {
    const { recurring_id: _id, at: _at, next_period, line_items, ...fields } = event.data
    const row = { ...fields, id, line_items, next_period, is_active: true, is_deleted: false, invoices_generated: 0, last_generated_at: null, created_at: at, updated_at: at } as unknown as RecurringRow
    await db.insertInto('recurring_invoices').values({ ...row, ...derived(row), line_items: json(line_items) }).onConflict((oc) => oc.column('id').doNothing()).execute()
    return
  }
  const { rows } = await sql<RecurringRow>`SELECT ${ROW} FROM recurring_invoices r WHERE r.id = ${id}`.execute(db)
  if (!rows[0]) return
  const changed = next(rows[0], event, at)
  const { id: _id, org_id: _org, created_at: _created, ...values } = { ...changed, ...derived(changed) }
  await db.updateTable('recurring_invoices').set({ ...values, line_items: json(changed.line_items), updated_at: at }).where('id', '=', id).execute()
}

export const recurringProjector: Projector = {
  name: 'recurring_invoices',
  version: 1,
  eventTypes: ['RecurringInvoiceCreated', 'RecurringInvoiceUpdated', 'RecurringInvoiceLinesChanged', 'RecurringInvoicePaused', 'RecurringInvoiceResumed', 'RecurringInvoiceDeleted', 'RecurringInvoiceGenerated', 'RecurringInvoiceCaughtUp'],
  tables: ['recurring_invoices'],
  createTables,
  createIndexes,
  apply: (trx, recorded) => apply(trx, recurringStreams.idOf(recorded.streamName), domainEventOf<RecurringEvent>(recorded)),
}

export type RecurringView = RecurringRow & { account_name: string | null; contact_name: string | null; contact_is_erased: boolean | null }

const VIEW = sql`${ROW}, a.name AS account_name, nullif(trim(concat_ws(' ', c.first_name, c.last_name)), '') AS contact_name, c.is_erased AS contact_is_erased
  FROM recurring_invoices r LEFT JOIN accounts a ON a.id = r.account LEFT JOIN contacts c ON c.id = r.contact`

/** A live schedule of the organization (whether the caller may act on it is the use case's check), or undefined. */
export async function recurringOf(db: Db, orgId: string, id: string): Promise<RecurringView | undefined> {
  const { rows } = await sql<RecurringView>`SELECT ${VIEW} WHERE r.org_id = ${orgId} AND r.id = ${id} AND NOT r.is_deleted`.execute(db)
  return rows[0]
}

/** The viewer's live schedules (an admin's organization, a member's own and assigned), newest first, and how many. */
export async function listRecurring(db: Db, viewer: Viewer, filter: { isActive?: boolean }, page: { limit: number; offset: number }): Promise<{ count: number; rows: RecurringView[] }> {
  const active = filter.isActive === undefined ? sql`true` : sql`r.is_active = ${filter.isActive}`
  const where = sql`r.org_id = ${viewer.orgId} AND NOT r.is_deleted AND ${visibleSql('Invoice', viewer, 'r')} AND ${active}`
  const [rows, count] = await Promise.all([
    sql<RecurringView>`SELECT ${VIEW} WHERE ${where} ORDER BY r.created_at DESC, r.id LIMIT ${page.limit} OFFSET ${page.offset}`.execute(db),
    sql<{ n: string }>`SELECT count(*) AS n FROM recurring_invoices r WHERE ${where}`.execute(db),
  ])
  return { count: Number(count.rows[0]!.n), rows: rows.rows }
}

/** Every organization's schedules with periods due on `today`: what the scheduled process generates. */
export async function dueSchedules(db: Db, today: string): Promise<Pick<RecurringRow, 'id' | 'org_id' | 'start_date' | 'frequency' | 'custom_days' | 'end_date' | 'next_period'>[]> {
  const { rows } = await sql<RecurringRow>`SELECT r.id, r.org_id, r.start_date::text AS start_date, r.frequency, r.custom_days, r.end_date::text AS end_date, r.next_period
    FROM recurring_invoices r WHERE r.is_active AND NOT r.is_deleted AND r.next_generation_date <= ${today}::date
      AND (r.end_date IS NULL OR r.next_generation_date <= r.end_date) ORDER BY r.next_generation_date, r.id`.execute(db)
  return rows
}
