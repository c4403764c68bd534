import { sql } from 'kysely'
import type { RawBuilder } from 'kysely'
import { sumMoney } from '../../commands/invoice/money.ts'
import type { Db } from '../../db/database.ts'
import { overdueSql, unpaidSql } from './queries.ts'

/**
 * The invoice reports (the original's dashboard, revenue and aging views), read from the invoices
 * and estimates read models of one organization. Sums are numeric in PostgreSQL and answered as
 * decimal strings with two places, so a report matches a replay of the log to the cent. Unlike the
 * original, drafts and cancelled invoices are never "invoiced", and money collected is the sum of
 * the payments (unreversed, by payment date), so partial payments count in the period they came in.
 */

const money = (sum: RawBuilder<unknown>) => sql<string>`coalesce(${sum}, 0)::numeric(30, 2)::text`
/** Issued and not void: what counts as invoiced. */
const issued = sql<boolean>`i.status NOT IN ('Draft', 'Cancelled')`
/** Each payment of an invoice `i` (reversed ones too), as `p(amount, payment_date, reversed)`. */
const payments = sql`jsonb_to_recordset(i.payments) AS p(amount numeric, payment_date date, reversed boolean)`

export type InvoiceDashboard = {
  summary: { total_invoiced: string; total_paid: string; total_due: string }
  invoice_count: number
  average_days_to_pay: number
  status_counts: Record<string, number>
  overdue: { count: number; amount: string }
  recent_activity: { revenue_30d: string; invoiced_30d: string; invoices_created_30d: number; invoices_paid_30d: number }
  estimates: { pending: number; accepted: number; declined: number }
}

/** The dashboard's figures on `today` (YYYY-MM-DD); "recent" is the 30 days up to it. */
export async function invoiceDashboard(db: Db, orgId: string, today: string): Promise<InvoiceDashboard> {
  const since = sql`(${today}::date - 29)`
  const [figures, statuses, estimates, revenue, daysToPay] = await Promise.all([
    sql<Record<string, string>>`SELECT count(*) AS invoice_count,
        ${money(sql`sum(i.total_amount) FILTER (WHERE ${issued})`)} AS total_invoiced,
        ${money(sql`sum(i.amount_paid)`)} AS total_paid,
        ${money(sql`sum(i.amount_due) FILTER (WHERE ${unpaidSql})`)} AS total_due,
        count(*) FILTER (WHERE ${overdueSql(today)}) AS overdue_count,
        ${money(sql`sum(i.amount_due) FILTER (WHERE ${overdueSql(today)})`)} AS overdue_amount,
        ${money(sql`sum(i.total_amount) FILTER (WHERE ${issued} AND i.issue_date >= ${since})`)} AS invoiced_30d,
        count(*) FILTER (WHERE i.created_at >= ${since}) AS invoices_created_30d,
        count(*) FILTER (WHERE i.status = 'Paid' AND i.paid_at >= ${since}) AS invoices_paid_30d
      FROM invoices i WHERE i.org_id = ${orgId}`.execute(db),
    sql<{ status: string; n: string }>`SELECT CASE WHEN ${overdueSql(today)} THEN 'Overdue' ELSE i.status END AS status, count(*) AS n
      FROM invoices i WHERE i.org_id = ${orgId} GROUP BY 1 ORDER BY 1`.execute(db),
    sql<Record<'pending' | 'accepted' | 'declined', string>>`SELECT
        count(*) FILTER (WHERE status IN ('Sent', 'Viewed') AND (expiry_date IS NULL OR expiry_date >= ${today}::date)) AS pending,
        count(*) FILTER (WHERE status = 'Accepted') AS accepted,
        count(*) FILTER (WHERE status = 'Declined') AS declined
      FROM estimates WHERE org_id = ${orgId} AND NOT is_deleted`.execute(db),
    sql<{ revenue: string }>`SELECT ${money(sql`sum(p.amount)`)} AS revenue
      FROM invoices i, ${payments} WHERE i.org_id = ${orgId} AND NOT p.reversed AND p.payment_date >= ${since}`.execute(db),
    // From the issue date to the date of the payment that settled it (the original counts to when it was recorded).
    sql<{ days: string }>`SELECT coalesce(round(avg(settled.day - i.issue_date)), 0) AS days
      FROM invoices i, LATERAL (SELECT max(p.payment_date) AS day FROM ${payments} WHERE NOT p.reversed) settled
      WHERE i.org_id = ${orgId} AND i.status = 'Paid'`.execute(db),
  ])
  const f = figures.rows[0]!
  const e = estimates.rows[0]!
  return {
    summary: { total_invoiced: f.total_invoiced!, total_paid: f.total_paid!, total_due: f.total_due! },
    invoice_count: Number(f.invoice_count),
    average_days_to_pay: Number(daysToPay.rows[0]!.days),
    status_counts: Object.fromEntries(statuses.rows.map((row) => [row.status, Number(row.n)])),
    overdue: { count: Number(f.overdue_count), amount: f.overdue_amount! },
    recent_activity: { revenue_30d: revenue.rows[0]!.revenue, invoiced_30d: f.invoiced_30d!, invoices_created_30d: Number(f.invoices_created_30d), invoices_paid_30d: Number(f.invoices_paid_30d) },
    estimates: { pending: Number(e.pending), accepted: Number(e.accepted), declined: Number(e.declined) },
  }
}

export const REVENUE_GROUPS = ['day', 'week', 'month', 'year'] as const
export type RevenueGroup = (typeof REVENUE_GROUPS)[number]
export type RevenueRow = { period: string; invoiced: string; revenue: string; count: number }
export type RevenueReport = { data: RevenueRow[]; total: { invoiced: string; revenue: string; count: number } }

/**
 * Two series over the days `from`..`to`, merged by period (the first day of its day, ISO week,
 * month or year): `invoiced` (issued invoices by issue date) and `revenue` (payments by payment
 * date; `count`: the invoices they paid into). They do not line up, and are not meant to.
 */
export async function revenueReport(db: Db, orgId: string, range: { from: string; to: string; group: RevenueGroup }): Promise<RevenueReport> {
  const period = (day: RawBuilder<unknown>) => sql<string>`date_trunc(${range.group}, ${day}::timestamp)::date::text`
  const { rows } = await sql<RevenueRow & { count: string }>`WITH
      invoiced AS (SELECT ${period(sql`i.issue_date`)} AS period, sum(i.total_amount) AS amount
        FROM invoices i WHERE i.org_id = ${orgId} AND ${issued} AND i.issue_date BETWEEN ${range.from}::date AND ${range.to}::date GROUP BY 1),
      collected AS (SELECT ${period(sql`p.payment_date`)} AS period, sum(p.amount) AS amount, count(DISTINCT i.id) AS count
        FROM invoices i, ${payments} WHERE i.org_id = ${orgId} AND NOT p.reversed AND p.payment_date BETWEEN ${range.from}::date AND ${range.to}::date GROUP BY 1)
    SELECT period, ${money(sql`invoiced.amount`)} AS invoiced, ${money(sql`collected.amount`)} AS revenue, coalesce(collected.count, 0) AS count
    FROM invoiced FULL JOIN collected USING (period) ORDER BY period`.execute(db)
  const data = rows.map((row) => ({ ...row, count: Number(row.count) }))
  const { rows: totals } = await sql<{ invoiced: string; revenue: string; count: string }>`SELECT
      ${money(sql`(SELECT sum(i.total_amount) FROM invoices i WHERE i.org_id = ${orgId} AND ${issued} AND i.issue_date BETWEEN ${range.from}::date AND ${range.to}::date)`)} AS invoiced,
      ${money(sql`sum(p.amount)`)} AS revenue, count(DISTINCT i.id) AS count
    FROM invoices i, ${payments} WHERE i.org_id = ${orgId} AND NOT p.reversed AND p.payment_date BETWEEN ${range.from}::date AND ${range.to}::date`.execute(db)
  const total = totals[0]!
  return { data, total: { invoiced: total.invoiced, revenue: total.revenue, count: Number(total.count) } }
}

export const AGING_BUCKETS = ['current', '1_30_days', '31_60_days', '61_90_days', 'over_90_days'] as const
export type AgingBucket = (typeof AGING_BUCKETS)[number]
export type AgingInvoice = { id: string; invoice_number: string | null; client_name: string; due_date: string | null; amount_due: string; days_overdue: number }
export type AgingSummary = { count: number; amount: string; invoices: AgingInvoice[] }
export type AgingAccount = { id: string | null; name: string; count: number; oldest_days: number; amount: string }
export type AgingReport = Record<AgingBucket, AgingSummary> & { overdue: { count: number; amount: string }; by_account: AgingAccount[]; total: { count: number; amount: string } }

/** How many of each bucket's invoices the report lists (the original's cap), most overdue first. */
const LISTED_PER_BUCKET = 10

/**
 * Receivables by age on `today`: every issued, unpaid invoice with money due, in the bucket of its
 * days past due (none, or no due date: `current`), each bucket with its 10 most overdue invoices; the
 * overdue money by who owes it (the account, else "No account"), most first.
 */
export async function agingReport(db: Db, orgId: string, today: string): Promise<AgingReport> {
  const owed = sql`owed AS (SELECT i.id, i.invoice_number, i.client_name, i.due_date::text AS due_date, i.amount_due, i.account, a.name AS account_name,
      greatest(coalesce(${today}::date - i.due_date, 0), 0) AS days_overdue
    FROM invoices i LEFT JOIN accounts a ON a.id = i.account WHERE i.org_id = ${orgId} AND ${unpaidSql} AND i.amount_due > 0),
    bucketed AS (SELECT owed.*, CASE WHEN days_overdue = 0 THEN 'current' WHEN days_overdue <= 30 THEN '1_30_days' WHEN days_overdue <= 60 THEN '31_60_days'
      WHEN days_overdue <= 90 THEN '61_90_days' ELSE 'over_90_days' END AS bucket FROM owed)`
  const [buckets, listed, accounts] = await Promise.all([
    sql<{ bucket: AgingBucket; count: string; amount: string }>`WITH ${owed} SELECT bucket, count(*) AS count, ${money(sql`sum(amount_due)`)} AS amount FROM bucketed GROUP BY bucket`.execute(db),
    sql<AgingInvoice & { bucket: AgingBucket; amount_due: string }>`WITH ${owed} SELECT bucket, id, invoice_number, client_name, due_date, amount_due::numeric(30, 2)::text AS amount_due, days_overdue
      FROM (SELECT *, row_number() OVER (PARTITION BY bucket ORDER BY days_overdue DESC, due_date, id) AS n FROM bucketed) listed
      WHERE n <= ${LISTED_PER_BUCKET} ORDER BY bucket, n`.execute(db),
    sql<AgingAccount & { count: string }>`WITH ${owed} SELECT account::text AS id, coalesce(max(account_name), 'No account') AS name, count(*) AS count,
        max(days_overdue) AS oldest_days, ${money(sql`sum(amount_due)`)} AS amount
      FROM bucketed WHERE days_overdue > 0 GROUP BY account ORDER BY sum(amount_due) DESC, name`.execute(db),
  ])
  const summaries = Object.fromEntries(AGING_BUCKETS.map((bucket) => {
    const found = buckets.rows.find((row) => row.bucket === bucket)
    const invoices = listed.rows.filter((row) => row.bucket === bucket).map(({ bucket: _bucket, ...row }) => row)
    return [bucket, { count: Number(found?.count ?? 0), amount: found?.amount ?? '0.00', invoices }]
  })) as Record<AgingBucket, AgingSummary>
  const overdueBuckets = AGING_BUCKETS.filter((bucket) => bucket !== 'current').map((bucket) => summaries[bucket])
  const all = Object.values(summaries)
  return {
    ...summaries,
    overdue: { count: sumCounts(overdueBuckets), amount: sumAmounts(overdueBuckets) },
    by_account: accounts.rows.map((row) => ({ ...row, count: Number(row.count), oldest_days: Number(row.oldest_days) })),
    total: { count: sumCounts(all), amount: sumAmounts(all) },
  }
}

const sumCounts = (summaries: readonly AgingSummary[]) => summaries.reduce((n, s) => n + s.count, 0)
const sumAmounts = (summaries: readonly AgingSummary[]) => sumMoney(summaries.map((s) => s.amount))
