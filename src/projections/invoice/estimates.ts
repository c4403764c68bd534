import { sql } from 'kysely'
import type { RawBuilder } from 'kysely'
import { estimateStreams } from '../../commands/invoice/estimate.ts'
import type { EstimateEvent } from '../../commands/invoice/estimate.ts'
import { invoiceAmounts } from '../../commands/invoice/money.ts'
import { isNumberStream } from '../../commands/invoice/number-sequence.ts'
import type { NumberEvent } from '../../commands/invoice/number-sequence.ts'
import type { Db } from '../../db/database.ts'
import { containsPattern } from '../../db/like.ts'
import { domainEventOf } from '../../events/versions.ts'
import { visibleSql } from '../../visibility/policy.ts'
import type { Viewer } from '../../visibility/policy.ts'
import type { Projector } from '../kernel/projector.ts'
import type { EstimateRow } from './tables.ts'

/**
 * The estimates read model: one row per estimate with its lines (jsonb) and amounts (money.ts),
 * its answer (`status`: Draft, Sent, Accepted, Declined; Expired is added by the queries from the
 * clock) and the invoice it became. Deleted ones are kept, flagged.
 */
const TEXT = ['title', 'client_name', 'client_email', 'client_phone', 'client_address_line', 'client_city', 'client_state', 'client_postcode', 'client_country', 'currency', 'notes', 'terms']
const MONEY = ['discount_value', 'tax_rate', 'subtotal', 'discount_amount', 'tax_amount', 'total_amount']

async function createTables(db: Db): Promise<void> {
  await sql`CREATE TABLE estimates (
    id uuid PRIMARY KEY, org_id uuid NOT NULL, estimate_number text, status text NOT NULL, account uuid, contact uuid, opportunity uuid,
    ${sql.join(TEXT.map((c) => sql`${sql.id(c)} text NOT NULL`))}, ${sql.join(MONEY.map((c) => sql`${sql.id(c)} numeric NOT NULL`))},
    discount_type text, issue_date date NOT NULL, expiry_date date, public_link_enabled boolean NOT NULL, assigned_to uuid[] NOT NULL, teams uuid[] NOT NULL,
    line_items jsonb NOT NULL, tax_breakdown jsonb NOT NULL, converted_to_invoice uuid, is_deleted boolean NOT NULL, created_by uuid,
    created_at timestamptz NOT NULL, updated_at timestamptz NOT NULL, sent_at timestamptz, answered_at timestamptz)`.execute(db)
}

async function createIndexes(db: Db): Promise<void> {
  await sql`CREATE INDEX estimates_org_created ON estimates (org_id, created_at DESC, id) WHERE NOT is_deleted`.execute(db)
}

const json = <T>(value: T) => JSON.stringify(value) as unknown as T

function amounts(row: Pick<EstimateRow, 'line_items' | 'discount_type' | 'discount_value' | 'tax_rate'>) {
  const a = invoiceAmounts(row.line_items, { ...row, shipping_amount: '0.00' })
  return { subtotal: a.subtotal, discount_amount: a.discount_amount, tax_amount: a.tax_amount, total_amount: a.total_amount, tax_breakdown: json(a.tax_breakdown) }
}

const ROW = sql`e.*, e.issue_date::text AS issue_date, e.expiry_date::text AS expiry_date`

/** The row's changes for an event of its stream, before its amounts are recomputed. */
function changesOf(row: EstimateRow, event: Exclude<EstimateEvent, { type: 'EstimateCreated' }>, at: Date): Partial<EstimateRow> {
  switch (event.type) {
    case 'EstimateUpdated':
      return Object.fromEntries(Object.entries(event.data.changes).map(([key, change]) => [key, change.to]))
    case 'EstimateLinesChanged':
      return { line_items: event.data.line_items }
    case 'EstimateSent':
      return { sent_at: at, status: row.status === 'Draft' ? 'Sent' : row.status }
    case 'EstimateViewed':
      return { status: row.status === 'Sent' ? 'Viewed' : row.status }
    case 'EstimateAccepted':
    case 'EstimateDeclined':
      return { status: event.type === 'EstimateAccepted' ? 'Accepted' : 'Declined', answered_at: at }
    case 'EstimateConverted':
      return { converted_to_invoice: event.data.invoice_id, status: 'Accepted', answered_at: row.answered_at ?? at }
    case 'EstimateDeleted':
      return { is_deleted: true }
  }
}

async function apply(db: Db, id: string, event: EstimateEvent | Extract<NumberEvent, { type: 'EstimateNumberAllocated' }>): Promise<void> {
  const at = new Date(event.data.at)
  if (event.type === 'EstimateNumberAllocated') {
    await db.updateTable('estimates').set({ estimate_number: event.data.number }).where('id', '=', event.data.record_id).execute()
    return
  }
  if (event.type === 'EstimateCreated') {
    const { estimate_id: _id, at: _at, line_items, ...fields } = event.data
    const row = { ...fields, id, line_items, estimate_number: null, status: 'Draft' as const, converted_to_invoice: null, is_deleted: false, created_at: at, updated_at: at, sent_at: null, answered_at: null }
    await db.insertInto('estimates').values({ ...row, ...amounts(row), line_items: json(line_items) }).onConflict((oc) => oc.column('id').doNothing()).execute()
    return
  }
  const { rows } = await sql<EstimateRow>`SELECT ${ROW} FROM estimates e WHERE e.id = ${id}`.execute(db)
  if (!rows[0]) return
  const next = { ...rows[0], ...changesOf(rows[0], event, at) }
  const { id: _id, org_id: _org, created_at: _created, ...values } = { ...next, ...amounts(next) }
  await db.updateTable('estimates').set({ ...values, line_items: json(next.line_items), updated_at: at }).where('id', '=', id).execute()
}

export const estimatesProjector: Projector = {
  name: 'estimates',
  version: 1,
  eventTypes: ['EstimateCreated', 'EstimateUpdated', 'EstimateLinesChanged', 'EstimateSent', 'EstimateViewed', 'EstimateAccepted', 'EstimateDeclined', 'EstimateConverted', 'EstimateDeleted', 'EstimateNumberAllocated'],
  tables: ['estimates'],
  createTables,
  createIndexes,
  apply: (trx, recorded) => apply(trx, isNumberStream(recorded.streamName) ? '' : estimateStreams.idOf(recorded.streamName), domainEventOf<EstimateEvent | Extract<NumberEvent, { type: 'EstimateNumberAllocated' }>>(recorded)),
}

// Reads.

export type EstimateView = EstimateRow & { is_expired: boolean; account_name: string | null; contact_first_name: string | null; contact_last_name: string | null; contact_email: string | null; contact_is_erased: boolean | null; opportunity_name: string | null; invoice_number: string | null }

const expired = (today: string) => sql<boolean>`(e.status IN ('Sent', 'Viewed') AND e.expiry_date < ${today}::date)`

function columns(viewer: Viewer, today: string) {
  return sql`${ROW}, CASE WHEN ${expired(today)} THEN 'Expired' ELSE e.status END AS status, coalesce(${expired(today)}, false) AS is_expired,
    a.name AS account_name, c.first_name AS contact_first_name, c.last_name AS contact_last_name, c.email AS contact_email, c.is_erased AS contact_is_erased, o.name AS opportunity_name, i.invoice_number
    FROM estimates e
    LEFT JOIN accounts a ON a.id = e.account
    LEFT JOIN contacts c ON c.id = e.contact
    LEFT JOIN opportunities o ON o.id = e.opportunity AND ${visibleSql('Opportunity', viewer, 'o')}
    LEFT JOIN invoices i ON i.id = e.converted_to_invoice`
}

/** A live estimate of the viewer's organization (whether they may open it is the use case's check), or undefined. */
export async function estimateOf(db: Db, viewer: Viewer, id: string, today: string): Promise<EstimateView | undefined> {
  const { rows } = await sql<EstimateView>`SELECT ${columns(viewer, today)} WHERE e.org_id = ${viewer.orgId} AND e.id = ${id} AND NOT e.is_deleted`.execute(db)
  return rows[0]
}

export type EstimateFilter = { search?: string; status?: string; account?: string[] }

/** A page of the viewer's estimates (estimates follow the invoices' line of the visibility policy), newest first, and how many match. */
export async function listEstimates(db: Db, viewer: Viewer, filter: EstimateFilter, page: { limit: number; offset: number; today: string }): Promise<{ count: number; rows: EstimateView[] }> {
  const conditions: RawBuilder<boolean>[] = [sql`e.org_id = ${viewer.orgId}`, sql`NOT e.is_deleted`, visibleSql('Invoice', viewer, 'e')]
  if (filter.search) {
    const like = containsPattern(filter.search.slice(0, 100))
    conditions.push(sql`(e.title ILIKE ${like} OR e.estimate_number ILIKE ${like} OR e.client_name ILIKE ${like})`)
  }
  if (filter.status) conditions.push(sql`(CASE WHEN ${expired(page.today)} THEN 'Expired' ELSE e.status END) = ${filter.status}`)
  if (filter.account) conditions.push(sql`e.account = ANY(${filter.account}::uuid[])`)
  const where = sql.join(conditions, sql` AND `)
  const [rows, count] = await Promise.all([
    sql<EstimateView>`SELECT ${columns(viewer, page.today)} WHERE ${where} ORDER BY e.created_at DESC, e.id LIMIT ${page.limit} OFFSET ${page.offset}`.execute(db),
    sql<{ n: string }>`SELECT count(*) AS n FROM estimates e WHERE ${where}`.execute(db),
  ])
  return { count: Number(count.rows[0]!.n), rows: rows.rows }
}
