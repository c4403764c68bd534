import { sql } from 'kysely'
import type { RawBuilder } from 'kysely'
import { OPEN_STATUSES } from '../../commands/case/fields.ts'
import type { Db } from '../../db/database.ts'
import { breachedSql, createdIn, days, figuresFrom, hoursOf, localDay, median, metSql } from './sla-analytics.ts'
import type { Window } from './sla-analytics.ts'

/**
 * The service-desk overview (the original's compute_service_overview behind the web app's
 * /tickets/analytics): totals, daily volume, first-response attainment by priority, the case-type
 * mix and the per-agent table, over the same analytics read model and the same clock as the
 * per-metric figures (sla-analytics.ts). Over the organization's whole queue: the route is admin-only.
 */
const OPEN = sql<boolean>`c.status = ANY(${[...OPEN_STATUSES]}::text[])`
const resolvedBetween = (from: Date | RawBuilder<unknown>, to: Date) => sql<boolean>`COALESCE(f.res_state = 'fulfilled' AND f.res_fulfilled_at >= ${from}::timestamptz AND f.res_fulfilled_at < ${to}::timestamptz, false)`
const frtMinutes = sql`${hoursOf('frt')} * 60`

/** The organization's last `count` whole days, today the last: [start of the first, start of tomorrow). */
export async function lastDays(db: Db, timezone: string, now: Date, count: number): Promise<{ from: Date; to: Date }> {
  const today = sql`(${now}::timestamptz AT TIME ZONE ${timezone})::date`
  const { rows } = await sql<{ from: Date; to: Date }>`SELECT ((${today} + 1 - ${count}::int)::timestamp AT TIME ZONE ${timezone}) AS "from", ((${today} + 1)::timestamp AT TIME ZONE ${timezone}) AS "to"`.execute(db)
  return rows[0]!
}

export type ServiceTotals = { opened: number; closed: number; open_now: number; median_resolution_hours: number | null }
export type ServiceFigures = {
  totals: ServiceTotals
  volume: { date: string; opened: number; closed: number }[]
  first_response: { priority: string; median_minutes: number | null; met: number; missed: number }[]
  by_type: { case_type: string; count: number }[]
  by_agent: { profile_id: string | null; open: number; closed_this_week: number; median_first_response_minutes: number | null; breached: number }[]
}

export async function serviceFigures(db: Db, conditions: RawBuilder<boolean>[], w: Window): Promise<ServiceFigures> {
  const from = figuresFrom(conditions)
  const created = createdIn(w)
  const resolved = resolvedBetween(w.from, w.to)
  const weekAgo = new Date(w.now.getTime() - 7 * 24 * 3_600_000)
  const [totals, volume, firstResponse, byType, byAgent] = await Promise.all([
    sql<ServiceTotals>`SELECT count(*) FILTER (WHERE ${created})::int AS opened, count(*) FILTER (WHERE ${resolved})::int AS closed, count(*) FILTER (WHERE ${OPEN})::int AS open_now,
        ${median(hoursOf('res'))} FILTER (WHERE ${resolved}) AS median_resolution_hours FROM ${from}`.execute(db),
    sql<ServiceFigures['volume'][number]>`WITH d AS (${days(w)}),
        opened AS (SELECT ${localDay(sql`c.created_at`, w)} AS day, count(*) AS n FROM ${from} AND ${created} GROUP BY 1),
        closed AS (SELECT ${localDay(sql`f.res_fulfilled_at`, w)} AS day, count(*) AS n FROM ${from} AND ${resolved} GROUP BY 1)
      SELECT d.day::text AS date, COALESCE(o.n, 0)::int AS opened, COALESCE(x.n, 0)::int AS closed FROM d LEFT JOIN opened o ON o.day = d.day LEFT JOIN closed x ON x.day = d.day ORDER BY d.day`.execute(db),
    sql<ServiceFigures['first_response'][number]>`SELECT c.priority, ${median(frtMinutes)} AS median_minutes, count(*) FILTER (WHERE ${metSql('frt')})::int AS met, count(*) FILTER (WHERE ${breachedSql('frt', w.now)})::int AS missed
      FROM ${from} AND ${created} GROUP BY c.priority`.execute(db),
    sql<ServiceFigures['by_type'][number]>`SELECT COALESCE(c.case_type, 'Uncategorized') AS case_type, count(*)::int AS count FROM ${from} AND ${created} GROUP BY 1 ORDER BY 2 DESC, 1`.execute(db),
    // A case counts for each of its assignees; an unassigned one under a null profile.
    sql<ServiceFigures['by_agent'][number]>`SELECT a.profile_id, count(*) FILTER (WHERE ${OPEN})::int AS open, count(*) FILTER (WHERE ${resolvedBetween(weekAgo, w.to)})::int AS closed_this_week,
        ${median(frtMinutes)} FILTER (WHERE ${created}) AS median_first_response_minutes, count(*) FILTER (WHERE ${created} AND ${breachedSql('frt', w.now)})::int AS breached
      FROM ${figuresFrom([...conditions, sql<boolean>`(${OPEN} OR ${created} OR ${resolvedBetween(weekAgo, w.to)})`], sql`LEFT JOIN LATERAL unnest(c.assigned_to) AS a(profile_id) ON true`)} GROUP BY a.profile_id`.execute(db),
  ])
  return { totals: totals.rows[0]!, volume: volume.rows, first_response: firstResponse.rows, by_type: byType.rows, by_agent: byAgent.rows }
}
