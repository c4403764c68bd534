import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import type { RawBuilder } from 'kysely'
import { z } from 'zod'
import type { Deps } from '../../deps.ts'
import { ValidationError } from '../../errors.ts'
import { listCases } from '../../projections/case/queries.ts'
import { breachedIn, createdIn, openAtEndOf, resolvedIn } from '../../projections/case/sla-analytics.ts'
import { anyOf } from '../../projections/kernel/records.ts'
import { viewerOfIdentity } from '../../visibility/policy.ts'
import { identityOf } from '../kernel/auth.ts'
import { csvLine } from '../kernel/csv.ts'
import { isUuid } from '../kernel/relations.ts'
import { ErrorBody, authErrors } from '../kernel/schemas/common.ts'
import { scopeOf } from './analytics-scope.ts'
import type { AnalyticsScope } from './analytics-scope.ts'
import { DrilldownAnswer, DrilldownQuery, ExportQuery, METRICS, isDay } from './analytics-schemas.ts'
import { casesOf } from './case-views.ts'

const TAGS = ['cases-analytics']
const errors = { 400: ErrorBody, ...authErrors } as const
const SHOWN = 1000
/** A whole export at most: the figures' windows are weeks of cases, not the log. */
const EXPORTED = 100_000
const CSV_COLUMNS = ['ID', 'Name', 'Status', 'Priority', 'Created', 'First response', 'Resolved', 'FRT SLA hrs', 'Resolution SLA hrs']

/**
 * The cases behind a figure (the original's case_ids_for_metric), as the same read model counts
 * them: frt (opened in the window; `breach`: breached), mttr (resolved in it), sla (opened in it;
 * `frt_breach`, `resolution_breach`), backlog (open at the end of the day `bucket`), agents (opened
 * in it and assigned to the profile `bucket`).
 */
function metricCondition({ window: w }: AnalyticsScope, metric: string, bucket: string | undefined): RawBuilder<boolean>[] {
  const given = bucket?.trim() || undefined
  switch (metric as (typeof METRICS)[number]) {
    case 'frt':
      return [createdIn(w), ...(given === 'breach' ? [breachedIn('frt', w.now)] : [])]
    case 'mttr':
      return [resolvedIn(w)]
    case 'sla':
      return [createdIn(w), ...(given === 'frt_breach' ? [breachedIn('frt', w.now)] : given === 'resolution_breach' ? [breachedIn('res', w.now)] : [])]
    case 'backlog':
      if (!given || !isDay(given)) throw new ValidationError({ bucket: ['backlog drilldown requires a bucket=YYYY-MM-DD'] })
      return [openAtEndOf(given, w.timezone)]
    case 'agents':
      if (!given || !isUuid(given)) throw new ValidationError({ bucket: ['agents drilldown requires a bucket=<profile_id>'] })
      return [createdIn(w), anyOf('c.assigned_to', [given.toLowerCase()])]
  }
  throw new ValidationError({ metric: [`unknown metric: ${metric}; expected one of ${METRICS.join(', ')}`] })
}

const iso = (at: Date | null) => at?.toISOString() ?? null

/** The drilldown (the figure's cases, as the case list answers them) and its CSV export. */
export function caseAnalyticsDrilldownRoutes(deps: Deps): FastifyPluginAsyncZod {
  const { db } = deps
  return async (app) => {
    app.get('/api/cases/analytics/drilldown/', { schema: { tags: TAGS, summary: "The cases behind a figure: how many, and the newest 1000 as the case list answers them", querystring: DrilldownQuery, response: { 200: DrilldownAnswer, ...errors } } }, async (request) => {
      const scope = await scopeOf(deps, request, request.query)
      const { count, rows } = await listCases(db, [...scope.conditions, ...metricCondition(scope, request.query.metric, request.query.bucket)], { limit: SHOWN, offset: 0 })
      return { count, results: await casesOf(deps, viewerOfIdentity(identityOf(request)), rows, deps.clock()) }
    })

    app.get('/api/cases/analytics/export/', { schema: { tags: TAGS, summary: "The cases behind a figure as CSV, newest first, with a header row", description: "`fmt` is csv, the only format (named so as not to collide with the original's `format`). A cell that could start a spreadsheet formula is prefixed with `'`.", querystring: ExportQuery, response: { 200: z.string().describe('text/csv'), ...errors } } }, async (request, reply) => {
      const { metric, bucket, fmt } = request.query
      if ((fmt?.trim() || 'csv') !== 'csv') throw new ValidationError({ fmt: ['only fmt=csv is supported'] })
      const scope = await scopeOf(deps, request, request.query)
      const { rows } = await listCases(db, [...scope.conditions, ...metricCondition(scope, metric, bucket)], { limit: EXPORTED, offset: 0 })
      const lines = rows.map((c) => csvLine([c.id, c.name, c.status, c.priority, iso(c.created_at), iso(c.first_response_at), iso(c.resolved_at), c.sla_first_response_hours, c.sla_resolution_hours]))
      reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="cases-${metric.replace(/[^a-z_]/gi, '')}-${(bucket?.trim() || 'all').replace(/[^\w-]/g, '')}.csv"`)
      return reply.send(csvLine(CSV_COLUMNS) + lines.join(''))
    })
  }
}
