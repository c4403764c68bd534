import { sql } from 'kysely'
import type { RawBuilder } from 'kysely'
import type { Db } from '../../db/database.ts'
import { dateRange } from '../../db/date-range.ts'
import { containsPattern } from '../../db/like.ts'
import { ruleFor, visibleSql } from '../../visibility/policy.ts'
import type { Viewer } from '../../visibility/policy.ts'
import type { InvoiceRow } from './tables.ts'

/**
 * What the invoice routes read: rows with the status as of `today` (Overdue: issued, unpaid and past
 * its due date, computed here from the clock, never stored), the names of the account, contact and
 * deal (a deal only when the viewer may see it), and the list header's totals.
 */
export type InvoiceView = InvoiceRow & {
  is_overdue: boolean
  account_name: string | null
  contact_first_name: string | null
  contact_last_name: string | null
  contact_email: string | null
  /** The contact was erased (issue 31): null without a contact. */
  contact_is_erased: boolean | null
  opportunity_name: string | null
  opportunity_amount: string | null
  opportunity_stage: string | null
  opportunity_currency: string | null
}

/** Issued and still owing: neither a draft nor paid nor cancelled (the original's UNPAID_STATUSES, Overdue being one of these past its date). */
export const unpaidSql = sql<boolean>`i.status IN ('Sent', 'Viewed', 'Partially_Paid')`

/** Issued, unpaid and past its due date on `today`: Overdue, read from the clock. */
export const overdueSql = (today: string) => sql<boolean>`(${unpaidSql} AND i.due_date < ${today}::date)`

function columns(viewer: Viewer, today: string) {
  return sql`i.*, i.issue_date::text AS issue_date, i.due_date::text AS due_date,
    CASE WHEN ${overdueSql(today)} THEN 'Overdue' ELSE i.status END AS status, coalesce(${overdueSql(today)}, false) AS is_overdue,
    a.name AS account_name, c.first_name AS contact_first_name, c.last_name AS contact_last_name, c.email AS contact_email, c.is_erased AS contact_is_erased,
    o.name AS opportunity_name, o.amount::text AS opportunity_amount, o.stage AS opportunity_stage, o.currency AS opportunity_currency
    FROM invoices i
    LEFT JOIN accounts a ON a.id = i.account
    LEFT JOIN contacts c ON c.id = i.contact
    LEFT JOIN opportunities o ON o.id = i.opportunity AND ${visibleSql('Opportunity', viewer, 'o')}`
}

/** An invoice of the viewer's organization (whether they may open it is the use case's check), or undefined. */
export async function invoiceOf(db: Db, viewer: Viewer, id: string, today: string): Promise<InvoiceView | undefined> {
  const { rows } = await sql<InvoiceView>`SELECT ${columns(viewer, today)} WHERE i.org_id = ${viewer.orgId} AND i.id = ${id}`.execute(db)
  return rows[0]
}

export type InvoiceFilter = {
  search?: string
  status?: string
  account?: string[]
  contact?: string[]
  opportunity?: string[]
  assignedTo?: string[]
  createdBy?: string[]
  issueFrom?: string
  issueTo?: string
  dueFrom?: string
  dueTo?: string
}

/** The viewer's invoices (an admin's organization, a member's own and assigned), narrowed by each filter given. */
export function invoiceConditions(viewer: Viewer, filter: InvoiceFilter, today: string): RawBuilder<boolean>[] {
  const conditions: RawBuilder<boolean>[] = [sql`i.org_id = ${viewer.orgId}`, visibleSql('Invoice', viewer, 'i')]
  if (filter.search) {
    const like = containsPattern(filter.search.slice(0, 100))
    conditions.push(sql`(i.invoice_title ILIKE ${like} OR i.invoice_number ILIKE ${like} OR i.client_name ILIKE ${like} OR i.client_email ILIKE ${like})`)
  }
  if (filter.status) conditions.push(sql`(CASE WHEN ${overdueSql(today)} THEN 'Overdue' ELSE i.status END) = ${filter.status}`)
  const links = { account: filter.account, contact: filter.contact, opportunity: filter.opportunity, created_by: filter.createdBy }
  for (const [column, ids] of Object.entries(links)) if (ids) conditions.push(sql`${sql.ref(`i.${column}`)} = ANY(${ids}::uuid[])`)
  if (filter.assignedTo) conditions.push(sql`i.assigned_to && ${filter.assignedTo}::uuid[]`)
  conditions.push(...dateRange(sql`i.issue_date`, 'date', { from: filter.issueFrom, to: filter.issueTo }))
  conditions.push(...dateRange(sql`i.due_date`, 'date', { from: filter.dueFrom, to: filter.dueTo }))
  return conditions
}

export const INVOICE_SORTS = ['created_at', 'due_date', 'issue_date', 'total_amount', 'status'] as const
export type InvoiceSort = (typeof INVOICE_SORTS)[number] | `-${(typeof INVOICE_SORTS)[number]}`

const where = (conditions: RawBuilder<boolean>[]) => sql.join(conditions, sql` AND `)

/**
 * Nulls last either way. Only the due date may be null: the other columns sort as plain ASC or DESC,
 * which is what lets the default order (newest first) read a page from `invoices_org_created`
 * instead of sorting every invoice of the organization (DESC NULLS LAST does not match that index's
 * DESC, nulls first).
 */
function orderOf(sort: InvoiceSort) {
  const column = sort.replace('-', '')
  const direction = sort.startsWith('-') ? (column === 'due_date' ? sql`DESC NULLS LAST` : sql`DESC`) : sql`ASC`
  return sql`${sql.ref(`i.${column}`)} ${direction}, i.created_at DESC, i.id`
}

/** One page of the filtered invoices in the order asked (newest first by default). */
export async function invoicePage(db: Db, viewer: Viewer, conditions: RawBuilder<boolean>[], page: { limit: number; offset: number; sort: InvoiceSort; today: string }): Promise<InvoiceView[]> {
  const { rows } = await sql<InvoiceView>`SELECT ${columns(viewer, page.today)} WHERE ${where(conditions)} ORDER BY ${orderOf(page.sort)} LIMIT ${page.limit} OFFSET ${page.offset}`.execute(db)
  return rows
}

/** How many invoices match. */
export async function countInvoices(db: Db, conditions: RawBuilder<boolean>[]): Promise<number> {
  const { rows } = await sql<{ n: string }>`SELECT count(*) AS n FROM invoices i WHERE ${where(conditions)}`.execute(db)
  return Number(rows[0]!.n)
}

/** One page of the filtered invoices, and how many match. */
export async function listInvoices(db: Db, viewer: Viewer, conditions: RawBuilder<boolean>[], page: { limit: number; offset: number; sort: InvoiceSort; today: string }): Promise<{ count: number; rows: InvoiceView[] }> {
  const [rows, count] = await Promise.all([invoicePage(db, viewer, conditions, page), countInvoices(db, conditions)])
  return { count, rows }
}

export type InvoiceTotals = { count: number; outstanding: string; overdue: string; due_this_month: string; paid_this_quarter: string; draft: string; action_needed: number }

/**
 * The list header's figures over every invoice the viewer may see (not the page, and, as the
 * original's, not the filter): what is owed, overdue, due this month; paid this quarter; drafts;
 * and the invoices waiting on someone (drafts to send, overdue ones to chase). A viewer who sees the
 * whole organization (an admin) reads them from its rollups (invoice-totals.ts: a row per status,
 * unpaid due date and paid day, where the invoices are a scan of every row); the others, who see
 * their own invoices, from those rows. Both sum the same columns under the same conditions.
 */
export async function invoiceTotals(db: Db, viewer: Viewer, today: string): Promise<InvoiceTotals> {
  const rollup = ruleFor('Invoice', viewer) === 'all'
  // In the rollups each row counts `n` invoices, paid on the day `paid_on`.
  const [count, paidSince, from] = rollup
    ? [sql`i.n`, sql`i.paid_on >= date_trunc('quarter', ${today}::date)::date`, sql`invoice_totals i WHERE i.org_id = ${viewer.orgId}`]
    : [sql`1`, sql`i.paid_at >= date_trunc('quarter', ${today}::date)`, sql`invoices i WHERE i.org_id = ${viewer.orgId} AND ${visibleSql('Invoice', viewer, 'i')}`]
  const { rows } = await sql<Record<keyof InvoiceTotals, string>>`SELECT coalesce(sum(${count}), 0) AS count,
      coalesce(sum(i.amount_due) FILTER (WHERE ${unpaidSql}), 0)::numeric(30, 2)::text AS outstanding,
      coalesce(sum(i.amount_due) FILTER (WHERE ${overdueSql(today)}), 0)::numeric(30, 2)::text AS overdue,
      coalesce(sum(i.total_amount) FILTER (WHERE ${unpaidSql} AND date_trunc('month', i.due_date) = date_trunc('month', ${today}::date)), 0)::numeric(30, 2)::text AS due_this_month,
      coalesce(sum(i.amount_paid) FILTER (WHERE ${paidSince}), 0)::numeric(30, 2)::text AS paid_this_quarter,
      coalesce(sum(i.total_amount) FILTER (WHERE i.status = 'Draft'), 0)::numeric(30, 2)::text AS draft,
      coalesce(sum(${count}) FILTER (WHERE i.status = 'Draft' OR ${overdueSql(today)}), 0) AS action_needed
    FROM ${from}`.execute(db)
  const totals = rows[0]!
  return { ...totals, count: Number(totals.count), action_needed: Number(totals.action_needed) }
}

/** How many invoices name each product on a line (the catalogue's `used_on`). */
export async function productUse(db: Db, orgId: string, productIds: readonly string[]): Promise<Map<string, number>> {
  if (!productIds.length) return new Map()
  const { rows } = await sql<{ product: string; n: string }>`SELECT line->>'product' AS product, count(DISTINCT i.id) AS n
    FROM invoices i, jsonb_array_elements(i.line_items) line
    WHERE i.org_id = ${orgId} AND line->>'product' = ANY(${productIds}::text[]) GROUP BY 1`.execute(db)
  return new Map(rows.map((row) => [row.product, Number(row.n)]))
}

/** The organization of an invoice or estimate, by id alone: what a public link (which carries no organization) starts from. */
export async function orgOfDocument(db: Db, kind: 'invoice' | 'estimate', id: string): Promise<string | undefined> {
  const { rows } = await sql<{ org_id: string }>`SELECT org_id FROM ${sql.table(kind === 'invoice' ? 'invoices' : 'estimates')} WHERE id = ${id}`.execute(db)
  return rows[0]?.org_id
}
