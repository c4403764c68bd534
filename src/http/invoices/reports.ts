import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { todayOf } from '../../commands/invoice/write-invoice.ts'
import { isIsoDate } from '../../db/date-range.ts'
import type { Deps } from '../../deps.ts'
import { ValidationError } from '../../errors.ts'
import { AGING_BUCKETS, REVENUE_GROUPS, agingReport, invoiceDashboard, revenueReport } from '../../projections/invoice/reports.ts'
import { requireAdmin } from '../kernel/auth.ts'
import { ErrorBody, authErrors } from '../kernel/schemas/common.ts'

const TAGS = ['invoices']
const errors = { 400: ErrorBody, ...authErrors } as const
const Amount = z.string().describe('A decimal string with two places')
const Count = z.number().int()
const WHO = 'Admins only (403 otherwise): org-wide roll-ups of every invoice, which a member\'s scoped list would never show them.'

const Dashboard = z.object({
  summary: z.object({ total_invoiced: Amount.describe('Issued, not cancelled'), total_paid: Amount, total_due: Amount }),
  invoice_count: Count,
  average_days_to_pay: Count.describe('From issue date to the day it was paid, over paid invoices, rounded'),
  status_counts: z.record(z.string(), Count).describe('Invoices per status as of today (Overdue read from the clock)'),
  overdue: z.object({ count: Count, amount: Amount }),
  recent_activity: z.object({ revenue_30d: Amount.describe('Payments dated in the last 30 days'), invoiced_30d: Amount, invoices_created_30d: Count, invoices_paid_30d: Count }),
  estimates: z.object({ pending: Count, accepted: Count, declined: Count }),
})

const day = z.string().refine(isIsoDate, 'Expected a real date, YYYY-MM-DD.')
const RevenueQuery = z.object({
  start_date: day.optional().describe('Default: 365 days before today'),
  end_date: day.optional().describe('Default: today'),
  group_by: z.enum(REVENUE_GROUPS).default('month'),
})
const RevenueTotals = z.object({ invoiced: Amount, revenue: Amount, count: Count })
const Revenue = z.object({
  start_date: z.string(),
  end_date: z.string(),
  group_by: z.enum(REVENUE_GROUPS),
  data: z.array(RevenueTotals.extend({ period: z.string().describe('The first day of the period') })),
  total: RevenueTotals,
})

const Summary = z.object({
  count: Count,
  amount: Amount,
  invoices: z.array(z.object({ id: z.uuid(), invoice_number: z.string().nullable(), client_name: z.string(), due_date: z.string().nullable(), amount_due: Amount, days_overdue: Count })).describe('At most 10, most overdue first'),
})
const Aging = z.object({
  ...Object.fromEntries(AGING_BUCKETS.map((bucket) => [bucket, Summary])) as Record<(typeof AGING_BUCKETS)[number], typeof Summary>,
  overdue: z.object({ count: Count, amount: Amount }),
  by_account: z.array(z.object({ id: z.uuid().nullable(), name: z.string(), count: Count, oldest_days: Count, amount: Amount })),
  total: z.object({ count: Count, amount: Amount }),
})

const daysBefore = (day: string, days: number) => new Date(Date.parse(day) - days * 86_400_000).toISOString().slice(0, 10)

/** The invoice reports (the original's reports views, the web app's /invoices/reports page), from the read models. */
export function invoiceReportRoutes(deps: Deps): FastifyPluginAsyncZod {
  const { db, clock } = deps
  return async (app) => {
    app.get('/api/invoices/reports/dashboard/', { schema: { tags: TAGS, summary: 'The invoice dashboard: totals, statuses, overdue money, the last 30 days and the estimates', description: WHO, response: { 200: Dashboard, ...errors } } }, async (request) => {
      const { orgId } = requireAdmin(request)
      return invoiceDashboard(db, orgId, todayOf(clock()))
    })

    app.get('/api/invoices/reports/revenue/', { schema: { tags: TAGS, summary: 'Invoiced (by issue date) and collected (payments by payment date) per day, week, month or year', description: `${WHO} The window is the last 365 days unless given.`, querystring: RevenueQuery, response: { 200: Revenue, ...errors } } }, async (request) => {
      const { orgId } = requireAdmin(request)
      const today = todayOf(clock())
      const { start_date = daysBefore(today, 365), end_date = today, group_by } = request.query
      if (start_date > end_date) throw new ValidationError({ end_date: ['The end date cannot be before the start date.'] })
      return { start_date, end_date, group_by, ...(await revenueReport(db, orgId, { from: start_date, to: end_date, group: group_by })) }
    })

    app.get('/api/invoices/reports/aging/', { schema: { tags: TAGS, summary: 'Receivables by days past due (current, 1-30, 31-60, 61-90, over 90), and overdue money by account', description: WHO, response: { 200: Aging, ...errors } } }, async (request) => {
      const { orgId } = requireAdmin(request)
      return agingReport(db, orgId, todayOf(clock()))
    })
  }
}
