import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { organizationById } from '../../identity/organizations.ts'
import { daysSince } from '../../projections/opportunity/aging.ts'
import { casesAwaitingReply, casesClosedOn, invoicesDueSoon, overdueInvoices } from '../../projections/dashboard/cases-invoices.ts'
import type { AwaitingCase, DueInvoice } from '../../projections/dashboard/cases-invoices.ts'
import { dealsClosingSoon, quietDeals } from '../../projections/dashboard/dashboard.ts'
import type { QuietDeal } from '../../projections/dashboard/dashboard.ts'
import { openTasksDue, taskConditions, tasksClearedOn } from '../../projections/task/tasks.ts'
import type { TaskRow } from '../../projections/task/tasks.ts'
import type { Deps } from '../../deps.ts'
import { viewerOf } from '../kernel/auth.ts'
import { authErrors } from '../kernel/schemas/common.ts'
import { addDays, dateIn, moneyLine, weekday } from './dashboard-views.ts'
import { Coverage, Money, coverage } from './schemas.ts'

const Tone = z.enum(['rust', 'clay', 'slate', 'moss'])
const Today = z.object({
  queue: z
    .array(
      z.object({
        id: z.string().describe('`case-<id>`, `invoice-<id>`, `deal-<id>` or `task-<id>`'),
        tone: Tone,
        due: z.string().describe('Cases: "Overdue" (first-response target missed) or "Today"; invoices: "Overdue"; deals: "Stalled" (red aging) or "Aging" (past the warning threshold); tasks: "Overdue" or "Today"'),
        title: z.string(),
        detail: z.string().describe("One prebuilt line: for a case its priority, account and that it awaits a first reply; for an invoice its total, account and due date; for a deal days without a stage move, amount, stage; for a task its due date and priority"),
        action: z.string(),
        href: z.string().describe('An internal path of the web app'),
      }),
    )
    .describe('The most urgent eight, in the original\'s ranks: cases past their first-response target, overdue invoices, stalled deals, cases still within it, overdue tasks, tasks due today, aging deals; within a rank the oldest case, the longest overdue invoice, the longest unmoved deal, the soonest task first'),
  summary: z.object({
    count: z.number().int().describe('Everything that wants the caller now (the sum of the sources), not only what the queue shows'),
    shown: z.number().int().describe('The queue length'),
    sources: z.array(z.object({ label: z.string(), count: z.number().int(), href: z.string() })).describe('Each non-empty source with its full count and its list: tickets awaiting a reply, overdue invoices, quiet deals, tasks due'),
    quiet_deals: z.number().int().describe('Open deals past their stage warning threshold (warning_days, else expected_days) or stalled'),
    quiet_value: Money.describe("Their amounts in the organization's currency"),
    cleared_yesterday: z.number().int().describe("Tasks marked Completed whose last change was yesterday (the original's proxy: tasks record no completion time) and cases closed yesterday (their closed_on)"),
  }),
  later: z
    .array(z.object({ id: z.string().describe('`deal-<id>`, `task-<id>` or `invoice-<id>`'), day: z.string().describe('Short weekday'), title: z.string(), meta: z.string() }))
    .describe("Open deals expected to close (closed_on), open tasks and unpaid invoices due from tomorrow to seven days ahead, in the organization's time zone; at most six, soonest first"),
  ...Coverage,
})

const QUEUE_LIMIT = 8
const SOURCE_LIMIT = 25
const LATER_LIMIT = 6
const NOTE =
  "The web app's home page reads it as is. Today is the organization's calendar day (its time zone). Each source follows its list's visibility (an admin sees all; a member the cases they created, are assigned to or watch, and the deals, tasks and invoices they created or are assigned to); deals follow the deal list's aging rule (§3.2), cases the SLA clock of the case list. Invoice totals are in the invoice's own currency."

/** The queue's ranks (the original's): what is late and owed outranks what is merely slow. */
const RANK = { breachedCase: 0, overdueInvoice: 1, stalledDeal: 2, case: 3, overdueTask: 4, taskToday: 5, agingDeal: 6 } as const
type Item = z.infer<typeof Today>['queue'][number] & { rank: number }

const caseItem = (c: AwaitingCase): Item => ({
  rank: c.breached ? RANK.breachedCase : RANK.case,
  id: `case-${c.id}`,
  tone: c.breached || c.priority === 'High' || c.priority === 'Urgent' ? 'rust' : 'clay',
  due: c.breached ? 'Overdue' : 'Today',
  title: c.name,
  detail: `${c.priority} · ${c.account_name ?? 'No account'} · awaiting first reply`,
  action: 'Reply',
  href: `/tickets/${c.id}`,
})

const invoiceItem = (invoice: DueInvoice): Item => ({
  rank: RANK.overdueInvoice,
  id: `invoice-${invoice.id}`,
  tone: 'clay',
  due: 'Overdue',
  title: invoice.title,
  detail: `${moneyLine(invoice.total_amount, invoice.currency)} · ${invoice.account_name ?? 'No account'} · due ${invoice.due_date}`,
  action: 'Send a reminder',
  href: `/invoices/${invoice.id}`,
})

const dealItem = (deal: QuietDeal, now: Date, currency: string): Item => ({
  rank: deal.rotten ? RANK.stalledDeal : RANK.agingDeal,
  id: `deal-${deal.id}`,
  tone: deal.rotten ? 'rust' : 'clay',
  due: deal.rotten ? 'Stalled' : 'Aging',
  title: deal.name,
  detail: `No movement for ${daysSince(deal.stage_changed_at, now) ?? 0} days · ${moneyLine(deal.amount, deal.currency ?? currency)} · ${deal.stage_label ?? deal.stage}`,
  action: 'Open the deal',
  href: `/pipeline/${deal.id}`,
})

const taskItem = (task: TaskRow, today: string): Item => {
  const overdue = task.due_date! < today
  return { rank: overdue ? RANK.overdueTask : RANK.taskToday, id: `task-${task.id}`, tone: overdue ? 'clay' : 'slate', due: overdue ? 'Overdue' : 'Today', title: task.title, detail: `Due ${task.due_date} · ${task.priority}`, action: 'Open the task', href: `/tasks/${task.id}` }
}

/** The original's Today view: cases awaiting a first reply, overdue invoices, quiet deals and tasks due, folded into one ranked queue, and what falls due later this week. */
export function todayRoutes(deps: Deps): FastifyPluginAsyncZod {
  const { db, clock } = deps
  return async (app) => {
    app.get('/api/dashboard/today/', { schema: { tags: ['dashboard'], summary: 'Today: one prioritised queue of what wants the caller now, and what is due later this week', description: NOTE, response: { 200: Today, ...authErrors } } }, async (request) => {
      const viewer = viewerOf(request)
      const now = clock()
      const org = await organizationById(db, viewer.orgId)
      const currency = org.default_currency
      const today = dateIn(org.timezone, now)
      const week = { today, until: addDays(today, 7) }
      const yesterday = addDays(today, -1)
      const tasks = taskConditions(viewer, {})
      const [cases, invoices, quiet, dueTasks, closing, laterTasks, laterInvoices, clearedTasks, clearedCases] = await Promise.all([
        casesAwaitingReply(db, viewer, now, SOURCE_LIMIT),
        overdueInvoices(db, viewer, today, SOURCE_LIMIT),
        quietDeals(db, viewer, now, currency, SOURCE_LIMIT),
        openTasksDue(db, tasks, { until: today }, SOURCE_LIMIT),
        dealsClosingSoon(db, viewer, now, week, 10),
        openTasksDue(db, tasks, { after: today, until: week.until }, 10),
        invoicesDueSoon(db, viewer, week, 10),
        tasksClearedOn(db, tasks, yesterday, org.timezone),
        casesClosedOn(db, viewer, yesterday),
      ])
      // Array sort is stable: within a rank each source keeps its query's order.
      const queue = [...cases.rows.map(caseItem), ...invoices.rows.map(invoiceItem), ...quiet.rows.map((deal) => dealItem(deal, now, currency)), ...dueTasks.rows.map((task) => taskItem(task, today))]
        .sort((x, y) => x.rank - y.rank)
        .slice(0, QUEUE_LIMIT)
        .map(({ rank: _rank, ...item }) => item)
      const sources = [
        { label: 'tickets awaiting a reply', count: cases.count, href: '/tickets' },
        { label: 'overdue invoices', count: invoices.count, href: '/invoices' },
        { label: 'quiet deals', count: quiet.count, href: '/pipeline' },
        { label: 'tasks due', count: dueTasks.count, href: '/tasks' },
      ].filter((source) => source.count > 0)
      const later = [
        ...closing.map((deal) => ({ date: deal.closed_on, id: `deal-${deal.id}`, day: weekday(deal.closed_on), title: `${deal.name} expected to close`, meta: `${deal.stage_label ?? deal.stage} · ${moneyLine(deal.amount, deal.currency ?? currency)}` })),
        ...laterTasks.rows.map((task) => ({ date: task.due_date!, id: `task-${task.id}`, day: weekday(task.due_date!), title: task.title, meta: `Task · ${task.priority}` })),
        ...laterInvoices.map((invoice) => ({ date: invoice.due_date, id: `invoice-${invoice.id}`, day: weekday(invoice.due_date), title: `${invoice.title} due`, meta: moneyLine(invoice.total_amount, invoice.currency) })),
      ]
        .sort((x, y) => x.date.localeCompare(y.date))
        .slice(0, LATER_LIMIT)
        .map(({ date: _date, ...item }) => item)
      return {
        queue,
        summary: { count: sources.reduce((n, s) => n + s.count, 0), shown: queue.length, sources, quiet_deals: quiet.count, quiet_value: quiet.value, cleared_yesterday: clearedTasks + clearedCases },
        later,
        ...coverage,
      }
    })
  }
}
