import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { GOAL_TYPES, goalStatus } from '../../commands/goal/goal.ts'
import { organizationById } from '../../identity/organizations.ts'
import { recentActivity } from '../../projections/activity/dashboard-activity.ts'
import type { RecordKinds } from '../../projections/record/record-kinds.ts'
import { currentGoals, followUpsOn, hotLeads, pipelineByStage, recordCounts, revenue } from '../../projections/dashboard/dashboard.ts'
import { openTasksDue, taskConditions, taskTotals } from '../../projections/task/tasks.ts'
import { Task, tasksOf } from '../tasks/task-views.ts'
import type { Deps } from '../../deps.ts'
import { viewerOf } from '../kernel/auth.ts'
import { Erased, erasedMark } from '../kernel/relations.ts'
import { authErrors } from '../kernel/schemas/common.ts'
import { activityBody, activitySchema } from '../activities/activity-views.ts'
import { dateIn, monthOf, moneyNumber } from './dashboard-views.ts'
import { Coverage, Money, coverage } from './schemas.ts'

const TAGS = ['dashboard']
const MoneyNumber = z.number().describe("Summed in SQL numeric, rounded exactly to the currency's decimals and written as a JSON number (the original's clients parse numbers here); 0 when nothing is priced")

const VISIBILITY_NOTE =
  'Every member may call it. Visibility follows each list: accounts and contacts count the whole organization (every member reads them); leads, deals and tasks count what the caller\'s own lists show (an admin sees all, a member the ones they created or are assigned to). Cases and invoices have no figures here, as in the original: they are in /api/dashboard/today/ and in the recent activity.'

const StageEntry = z.object({ count: z.number().int().describe('Every deal of the stage, any currency'), value: MoneyNumber.describe("Sum of the amounts in the organization's currency (a JSON number)"), label: z.string(), kind: z.enum(['open', 'won', 'lost']) })

const GoalSummary = z.object({
  id: z.uuid(),
  name: z.string(),
  goal_type: z.enum(GOAL_TYPES),
  target_value: Money,
  progress_value: Money.describe('Won amount in the goal\'s currency (REVENUE) or won deals (DEALS_CLOSED), as the goals module answers it'),
  progress_percent: z.number().int().describe('progress_value / target_value × 100, rounded down, at most 100'),
  status: z.enum(['completed', 'on_track', 'at_risk', 'behind']).describe('As the goals module answers it: completed at 100%; otherwise against the share of the period elapsed by today, on_track at or above it, at_risk from 80% of it, else behind'),
})

const homeOf = (kinds: RecordKinds) => z.object({
  accounts_count: z.number().int().describe('Live accounts of the organization, as /api/accounts/ counts them'),
  contacts_count: z.number().int().describe('Live contacts of the organization, as /api/contacts/ counts them'),
  leads_count: z.number().int().describe("Open leads (neither converted nor closed) the caller may see: /api/leads/ open_leads.leads_count"),
  opportunities_count: z.number().int().describe('Deals the caller may see, every stage: /api/opportunities/ opportunities_count'),
  urgent_counts: z.object({
    overdue_tasks: z.number().int().describe("Open tasks (New, In Progress) due before today (the organization's day) that the caller may see"),
    tasks_due_today: z.number().int().describe('Open tasks due today that the caller may see'),
    followups_today: z.number().int().describe("Open leads the caller may see whose next_follow_up is today (the organization's day)"),
    hot_leads: z.number().int().describe('Open leads rated hot, status assigned or in process'),
  }),
  pipeline_by_stage: z.record(z.string(), StageEntry).describe("By stage code over every pipeline: the default pipeline's stages first (in order, with zero deals too), then other codes"),
  revenue_metrics: z.object({
    pipeline_value: MoneyNumber.describe("Deals in an open-kind stage, in the organization's currency"),
    open_opportunities_count: z.number().int().describe('Deals in an open-kind stage, any currency'),
    weighted_pipeline: MoneyNumber.describe('Σ amount × probability / 100 over the same deals as pipeline_value'),
    won_this_month: MoneyNumber.describe("Deals in a won-kind stage with closed_on in the current month (the organization's time zone), in its currency"),
    conversion_rate: z.number().describe('Converted leads / all leads the caller may see × 100, one decimal; 0 without leads'),
    currency: z.string().describe("The organization's default currency"),
    other_currency_count: z.number().int().describe('Deals in another currency, left out of the sums'),
  }),
  hot_leads: z
    .array(z.object({ id: z.uuid(), first_name: z.string(), last_name: z.string().nullable(), erased: Erased, company: z.string().nullable(), rating: z.string().nullable(), next_follow_up: z.string().nullable().describe('YYYY-MM-DD'), last_contacted: z.string().nullable().describe('YYYY-MM-DD') }))
    .describe('The ten newest hot leads the caller may see'),
  tasks: z.array(Task).describe('The ten open tasks with a due date due soonest (overdue first) that the caller may see, as /api/tasks/ answers them'),
  activities: z.array(activitySchema(kinds)).describe("The organization's ten latest changes of the records the caller may see, of every kind the modules declare (accounts, contacts, leads, deals, tasks, cases, invoices: creations, changes, stage moves, conversions, deletions, comments), newest first: /api/activities/'s first ten"),
  goal_summary: z.array(GoalSummary).describe("Up to three of the caller's active goals whose period holds today (the organization's time zone): assigned to them or to a team of theirs, and for an admin the whole organization's goals; ending soonest first"),
  ...Coverage,
})

/**
 * The home dashboard (the original's home view; its Today view is today.ts) over the deals, leads,
 * accounts, contacts, tasks and goals read models and the recent-activity read model (over the
 * record `kinds` the manifests declare, modules/dashboard.ts). Read-only; every member may call it.
 */
export function dashboardRoutes(deps: Deps, kinds: RecordKinds): FastifyPluginAsyncZod {
  const { db, clock } = deps
  return async (app) => {
    app.get('/api/dashboard/', { schema: { tags: TAGS, summary: 'The home dashboard: counts, pipeline by stage, revenue, hot leads, goals and recent activity', description: `${VISIBILITY_NOTE} Money is in the organization's default currency: pipeline_by_stage values and the revenue_metrics sums are JSON numbers rounded exactly to its decimals (the original's clients parse numbers there), goal figures decimal strings.`, response: { 200: homeOf(kinds), ...authErrors } } }, async (request) => {
      const viewer = viewerOf(request)
      const now = clock()
      const org = await organizationById(db, viewer.orgId)
      const currency = org.default_currency
      const today = dateIn(org.timezone, now)
      const tasks = taskConditions(viewer, {})
      const [counts, stages, money, hot, activities, goals, taskCounts, upcoming, followUps] = await Promise.all([
        recordCounts(db, viewer, now),
        pipelineByStage(db, viewer, now, currency),
        revenue(db, viewer, now, currency, monthOf(today)),
        hotLeads(db, viewer, 10),
        recentActivity(db, kinds, viewer, 10),
        currentGoals(db, viewer, today, 3),
        taskTotals(db, tasks, today),
        openTasksDue(db, tasks, {}, 10),
        followUpsOn(db, viewer, today),
      ])
      return {
        accounts_count: counts.accounts,
        contacts_count: counts.contacts,
        leads_count: counts.open_leads,
        opportunities_count: counts.opportunities,
        urgent_counts: { overdue_tasks: taskCounts.overdue, tasks_due_today: taskCounts.due_today, followups_today: followUps, hot_leads: counts.hot_leads },
        pipeline_by_stage: Object.fromEntries(stages.map((s) => [s.code, { count: s.count, value: moneyNumber(s.value, currency), label: s.label, kind: s.kind as 'open' | 'won' | 'lost' }])),
        revenue_metrics: {
          pipeline_value: moneyNumber(money.pipeline_value, currency),
          open_opportunities_count: money.open_count,
          weighted_pipeline: moneyNumber(money.weighted_pipeline, currency),
          won_this_month: moneyNumber(money.won_this_month, currency),
          conversion_rate: counts.all_leads ? Math.round((counts.converted_leads * 1000) / counts.all_leads) / 10 : 0,
          currency,
          other_currency_count: money.other_currency_count,
        },
        hot_leads: hot.map((lead) => ({ id: lead.id, first_name: lead.first_name, last_name: lead.last_name, ...erasedMark(lead), company: lead.company_name, rating: lead.rating?.toUpperCase() ?? null, next_follow_up: lead.next_follow_up, last_contacted: lead.last_contacted })),
        tasks: await tasksOf(db, viewer, upcoming.rows, today),
        activities: activities.map((row) => activityBody(row, now)),
        goal_summary: goals.map((goal) => ({
          id: goal.id,
          name: goal.name,
          goal_type: goal.goal_type,
          target_value: goal.target_amount,
          progress_value: goal.progress_value,
          progress_percent: goal.progress_percent,
          status: goalStatus(goal.progress_percent, { start: goal.period_start, end: goal.period_end }, today),
        })),
        ...coverage,
      }
    })

  }
}
