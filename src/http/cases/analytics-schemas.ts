import { z } from 'zod'
import type { Bound } from '../../projections/case/sla-analytics.ts'
import { Case } from './case-views.ts'

/**
 * The cases analytics' query and answers (the original's analytics_views.py and the shapes its web
 * app's /tickets/analytics and its phone app's analytics screen read). Hours and minutes are the
 * SLA clock's business time.
 */
const DAY = /^\d{4}-\d{2}-\d{2}$/
/** A real calendar day (not 2026-02-30, which Date would roll over into March). */
export const isDay = (value: string) => {
  const day = new Date(`${value}T00:00:00Z`)
  return DAY.test(value) && !Number.isNaN(day.getTime()) && day.toISOString().startsWith(value)
}

/** YYYY-MM-DD (the organization's day), an ISO-8601 time without offset (its wall clock) or with one (an instant); blank is none; anything else is refused. */
const BoundParam = z
  .string()
  .optional()
  .transform((value, ctx): Bound | undefined => {
    const text = value?.trim()
    if (!text) return undefined
    if (isDay(text)) return { kind: 'day', value: text }
    if (z.iso.datetime({ offset: true }).safeParse(text).success) return { kind: 'instant', value: text }
    if (z.iso.datetime({ local: true }).safeParse(text).success && isDay(text.slice(0, 10))) return { kind: 'local', value: text }
    ctx.addIssue({ code: 'custom', message: `'${text}' is not a valid date. Use YYYY-MM-DD or an ISO-8601 timestamp.` })
    return z.NEVER
  })
const BlankOrUuid = z.union([z.literal(''), z.uuid()]).optional().transform((value) => value || undefined)

export const AnalyticsQuery = z.object({
  from: BoundParam.describe('Start of the window: YYYY-MM-DD (the organization\'s midnight) or ISO-8601; default 30 days before `to`'),
  to: BoundParam.describe('End of the window: YYYY-MM-DD (that whole day included) or ISO-8601; default now'),
  team: BlankOrUuid.describe("Only one team's cases"),
  agent: BlankOrUuid.describe("Only one assignee's cases (a profile id)"),
  priority: z.string().optional().describe('Only cases of this priority'),
})

export const METRICS = ['frt', 'mttr', 'sla', 'backlog', 'agents'] as const
export const DrilldownQuery = AnalyticsQuery.extend({
  metric: z.string().describe(`Which figure's cases: ${METRICS.join(', ')}`),
  bucket: z.string().optional().describe('Which part of it: breach (frt), frt_breach or resolution_breach (sla), a day YYYY-MM-DD (backlog, required), a profile id (agents, required)'),
})
export const ExportQuery = DrilldownQuery.extend({ fmt: z.string().optional().describe('csv, the only format') })

export const ServiceQuery = z.object({
  days: z
    .string()
    .optional()
    .transform((value, ctx) => {
      const text = value?.trim()
      if (!text) return undefined
      if (/^-?\d+$/.test(text)) return Number(text)
      ctx.addIssue({ code: 'custom', message: `'${text}' is not a whole number of days.` })
      return z.NEVER
    })
    .describe('The window: the last N whole days of the organization, today included (default 14, clamped to 1–90)'),
})

const Hours = z.number().nullable()
const Count = z.number().int()
const Ids = z.array(z.string())
const Spread = z.object({ mean_hours: Hours, median_hours: Hours, p90_hours: Hours, count: Count })

export const FrtAnswer = z.object({ median_hours: Hours, p90_hours: Hours, count: Count.describe('Cases answered'), breach_count: Count, series: z.array(z.object({ bucket: z.string(), median: Hours, count: Count })), case_ids: Ids, breach_case_ids: Ids })
export const MttrAnswer = Spread.extend({ by_priority: z.record(z.string(), Spread), case_ids: Ids })
export const BacklogAnswer = z.object({ series: z.array(z.object({ date: z.string(), open_count: Count, urgent_count: Count })) })
export const AgentsAnswer = z.object({ results: z.array(z.object({ profile_id: z.string(), name: z.string(), email: z.string(), handled: Count, avg_frt_hours: Hours, csat_avg: z.number().nullable(), breach_rate: z.number() })) })
export const SlaAnswer = z.object({
  total: Count,
  frt_breach_count: Count,
  resolution_breach_count: Count,
  frt_breach_rate: z.number().nullable(),
  resolution_breach_rate: z.number().nullable(),
  by_priority: z.record(z.string(), z.object({ total: Count, frt_breach_rate: z.number().nullable(), resolution_breach_rate: z.number().nullable() })),
  frt_breach_case_ids: Ids,
  resolution_breach_case_ids: Ids,
})
export const ServiceAnswer = z.object({
  totals: z.object({ opened: Count, closed: Count, open_now: Count, median_resolution_hours: Count, window_days: Count, business_hours_applied: z.boolean(), calendar_name: z.string().nullable() }),
  volume: z.array(z.object({ date: z.string(), opened: Count, closed: Count })),
  first_response: z.array(z.object({ priority: z.string(), target_minutes: Count, median_minutes: Count.nullable(), met: Count, missed: Count })),
  by_type: z.array(z.object({ case_type: z.string(), count: Count })),
  by_agent: z.array(z.object({ id: z.string().nullable(), name: z.string(), open: Count, closed_this_week: Count, median_first_response_minutes: Count.nullable(), breached: Count })),
})
export const DrilldownAnswer = z.object({ count: Count.describe('How many cases the figure counts'), results: z.array(Case).describe('The newest of them, at most 1000') })
