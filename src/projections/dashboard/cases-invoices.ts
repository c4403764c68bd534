import { sql } from 'kysely'
import type { RawBuilder } from 'kysely'
import { OPEN_STATUSES } from '../../commands/case/fields.ts'
import { caseConditions, firstResponseBreached } from '../case/queries.ts'
import { invoiceConditions, overdueSql, unpaidSql } from '../invoice/queries.ts'
import type { Viewer } from '../../visibility/policy.ts'
import type { Db } from '../../db/database.ts'

/**
 * Today's tickets and invoices (the original's Today view), narrowed by the conditions their own
 * lists build (caseConditions, invoiceConditions), so a member sees here what their lists show:
 * the cases they created, are assigned to or watch, the invoices they created or are assigned to.
 * Days are the organization's calendar days, given by the caller.
 */

const where = (conditions: RawBuilder<boolean>[]) => sql.join(conditions, sql` AND `)
const counted = async (db: Db, from: RawBuilder<unknown>) => Number((await sql<{ n: string }>`SELECT count(*) AS n FROM ${from}`.execute(db)).rows[0]!.n)

export type AwaitingCase = { id: string; name: string; priority: string; account_name: string | null; breached: boolean }

/**
 * Open cases nobody has answered yet (no first response), with whether the first-response target
 * is missed at `now` (the SLA clock's stored deadlines, as the case list's is_sla_first_response_breached):
 * the breached ones first, then the oldest; at most `limit`, with the count of all of them.
 */
export async function casesAwaitingReply(db: Db, viewer: Viewer, now: Date, limit: number): Promise<{ count: number; rows: AwaitingCase[] }> {
  const from = sql`cases c WHERE ${where([...caseConditions(viewer, { status: [...OPEN_STATUSES] }), sql`c.first_response_at IS NULL`])}`
  const [rows, count] = await Promise.all([
    sql<AwaitingCase>`SELECT c.id, c.name, c.priority, (SELECT a.name FROM accounts a WHERE a.id = c.account) AS account_name, ${firstResponseBreached(now)} AS breached
      FROM ${from} ORDER BY breached DESC, c.created_at, c.id LIMIT ${limit}`.execute(db),
    counted(db, from),
  ])
  return { count, rows: rows.rows }
}

/** Cases the caller may see closed on `day` (their closing date, YYYY-MM-DD). */
export const casesClosedOn = (db: Db, viewer: Viewer, day: string): Promise<number> =>
  counted(db, sql`cases c WHERE ${where([...caseConditions(viewer, { status: ['Closed'] }), sql`c.closed_on = ${day}::date`])}`)

export type DueInvoice = { id: string; title: string; total_amount: string; currency: string; account_name: string | null; due_date: string }

const INVOICE_COLUMNS = sql`i.id, i.invoice_title AS title, i.total_amount::text AS total_amount, i.currency,
  (SELECT a.name FROM accounts a WHERE a.id = i.account) AS account_name, i.due_date::text AS due_date`

/** Invoices overdue on `today` (issued, unpaid, due before it), the longest overdue first; at most `limit`, with the count of all of them. */
export async function overdueInvoices(db: Db, viewer: Viewer, today: string, limit: number): Promise<{ count: number; rows: DueInvoice[] }> {
  const from = sql`invoices i WHERE ${where([...invoiceConditions(viewer, {}, today), overdueSql(today)])}`
  const [rows, count] = await Promise.all([sql<DueInvoice>`SELECT ${INVOICE_COLUMNS} FROM ${from} ORDER BY i.due_date, i.id LIMIT ${limit}`.execute(db), counted(db, from)])
  return { count, rows: rows.rows }
}

/** Unpaid invoices due after `today` and up to `until` (inclusive), soonest first. */
export async function invoicesDueSoon(db: Db, viewer: Viewer, window: { today: string; until: string }, limit: number): Promise<DueInvoice[]> {
  const { rows } = await sql<DueInvoice>`SELECT ${INVOICE_COLUMNS} FROM invoices i
    WHERE ${where([...invoiceConditions(viewer, {}, window.today), unpaidSql, sql`i.due_date > ${window.today}::date`, sql`i.due_date <= ${window.until}::date`])}
    ORDER BY i.due_date, i.id LIMIT ${limit}`.execute(db)
  return rows
}
