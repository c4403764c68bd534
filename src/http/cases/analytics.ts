import type { FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import type { z } from 'zod'
import { FIRST_RESPONSE_HOURS } from '../../commands/case/sla.ts'
import { CASE_PRIORITIES } from '../../commands/case/fields.ts'
import type { Deps } from '../../deps.ts'
import { ForbiddenError } from '../../errors.ts'
import { lookupsOf } from '../../lookups/lookups.ts'
import { displayName, membersByIds } from '../../identity/users.ts'
import { businessCalendarOf } from '../../projections/business-hours/queries.ts'
import { agentFigures, backlogFigures, frtFigures, mttrFigures, slaFigures } from '../../projections/case/sla-analytics.ts'
import { lastDays, serviceFigures } from '../../projections/case/service-analytics.ts'
import { viewerOfIdentity } from '../../visibility/policy.ts'
import { scopeOf } from './analytics-scope.ts'
import { identityOf } from '../kernel/auth.ts'
import { ErrorBody, authErrors } from '../kernel/schemas/common.ts'
import { AgentsAnswer, AnalyticsQuery, BacklogAnswer, FrtAnswer, MttrAnswer, ServiceAnswer, ServiceQuery, SlaAnswer } from './analytics-schemas.ts'
import { caseAnalyticsDrilldownRoutes } from './analytics-drilldown.ts'

const TAGS = ['cases-analytics']
const errors = { 400: ErrorBody, ...authErrors } as const
const rate = (n: number, of: number): number | null => (of ? n / of : null)

/**
 * The cases analytics (the original's AnalyticsFrtView … AnalyticsServiceView): every figure comes
 * from the analytics read model, the one SLA clock's reading of each case's SLA events
 * (projections/case/sla-figures.ts), so FRT, MTTR, breaches, backlog and the agents' table agree
 * with each case's breach badge and with a recomputation from the log. Drilldown and CSV export in
 * analytics-drilldown.ts.
 */
export function caseAnalyticsRoutes(deps: Deps): FastifyPluginAsyncZod {
  const { db } = deps
  const scope = (request: FastifyRequest, query: z.infer<typeof AnalyticsQuery>) => scopeOf(deps, request, query)
  const schema = (summary: string, response: z.ZodType) => ({ tags: TAGS, summary, querystring: AnalyticsQuery, response: { 200: response, ...errors } })

  return async (app) => {
    app.get('/api/cases/analytics/frt/', { schema: schema('First response over the cases opened in the window: median and p90 business hours, breaches, a daily series', FrtAnswer) }, async (request) => frtFigures(db, await scope(request, request.query)))

    app.get('/api/cases/analytics/mttr/', { schema: schema('Time to resolution over the cases resolved in the window, in business hours (pauses not counted), overall and by priority', MttrAnswer) }, async (request) => mttrFigures(db, await scope(request, request.query)))

    app.get('/api/cases/analytics/backlog/', { schema: schema("Open and open Urgent cases at the end of each of the window's days", BacklogAnswer) }, async (request) => ({ series: await backlogFigures(db, await scope(request, request.query)) }))

    app.get('/api/cases/analytics/sla/', { schema: schema('Breaches of the first-response and resolution targets over the cases opened in the window, overall and by priority', SlaAnswer) }, async (request) => {
      const figures = await slaFigures(db, await scope(request, request.query))
      const byPriority = Object.fromEntries(Object.entries(figures.by_priority).map(([priority, p]) => [priority, { total: p.total, frt_breach_rate: rate(p.frt_breach_count, p.total), resolution_breach_rate: rate(p.resolution_breach_count, p.total) }]))
      return { ...figures, frt_breach_rate: rate(figures.frt_breach_count, figures.total), resolution_breach_rate: rate(figures.resolution_breach_count, figures.total), by_priority: byPriority }
    })

    app.get('/api/cases/analytics/agents/', { schema: { ...schema('Per assignee over the cases opened in the window: handled, mean business hours to first response, mean CSAT rating, breach rate (of two targets a case)', AgentsAnswer), description: 'A case with several assignees counts for each.' } }, async (request) => {
      const { orgId } = identityOf(request)
      const figures = await agentFigures(db, await scope(request, request.query))
      const members = new Map((await membersByIds(db, orgId, figures.map((f) => f.profile_id))).map((m) => [m.id, m]))
      const results = figures.map(({ breach_count, ...f }) => {
        const member = members.get(f.profile_id)
        return { ...f, name: member ? displayName(member) : '', email: member?.email ?? '', breach_rate: breach_count / Math.max(1, 2 * f.handled) }
      })
      return { results: results.sort((a, b) => b.handled - a.handled || a.email.localeCompare(b.email)) }
    })

    app.get('/api/cases/analytics/service/', { schema: { tags: TAGS, summary: 'The service desk at a glance (admins): totals, daily volume, first-response attainment by priority, the case-type mix and the per-agent table', querystring: ServiceQuery, response: { 200: ServiceAnswer, ...errors } } }, async (request) => {
      const identity = identityOf(request)
      const viewer = viewerOfIdentity(identity)
      if (!viewer.isAdmin) throw new ForbiddenError('Admin access required')
      const days = Math.max(1, Math.min(request.query.days ?? 14, 90))
      const org = await lookupsOf(deps).organization(identity.orgId)
      const now = deps.clock()
      const [calendar, window] = await Promise.all([businessCalendarOf(db, identity.orgId), lastDays(db, org.timezone, now, days).then((range) => ({ ...range, timezone: org.timezone, now }))])
      const figures = await serviceFigures(db, identity.orgId, window)
      const members = new Map((await membersByIds(db, identity.orgId, figures.by_agent.flatMap((a) => (a.profile_id ? [a.profile_id] : [])))).map((m) => [m.id, displayName(m)]))
      const round = (n: number | null) => (n === null ? null : Math.round(n))
      const agentRow = ({ profile_id: id, ...a }: (typeof figures.by_agent)[number]) => ({ id, name: id === null ? 'Unassigned' : (members.get(id) ?? id), ...a, median_first_response_minutes: round(a.median_first_response_minutes) })
      const agents = figures.by_agent.filter((a) => a.profile_id !== null).map(agentRow)
      // The unassigned line only when it carries a figure, as the original's.
      const unassigned = figures.by_agent.filter((a) => a.profile_id === null && (a.open || a.closed_this_week || a.median_first_response_minutes !== null || a.breached)).map(agentRow)
      const byPriority = new Map(figures.first_response.map((r) => [r.priority, r]))
      return {
        totals: { ...figures.totals, median_resolution_hours: round(figures.totals.median_resolution_hours) ?? 0, window_days: days, business_hours_applied: Object.values(calendar.week).some((shifts) => shifts.length > 0), calendar_name: calendar.name },
        volume: figures.volume,
        // Worst priority first, each one even with no case, so the card keeps its shape.
        first_response: [...CASE_PRIORITIES].reverse().map((priority) => ({ priority, target_minutes: FIRST_RESPONSE_HOURS[priority] * 60, median_minutes: round(byPriority.get(priority)?.median_minutes ?? null), met: byPriority.get(priority)?.met ?? 0, missed: byPriority.get(priority)?.missed ?? 0 })),
        by_type: figures.by_type,
        by_agent: [...agents.sort((a, b) => b.open - a.open || a.name.toLowerCase().localeCompare(b.name.toLowerCase())), ...unassigned],
      }
    })

    await app.register(caseAnalyticsDrilldownRoutes(deps))
  }
}
