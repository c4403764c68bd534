import { sql } from 'kysely'
import type { RawBuilder } from 'kysely'
import type { Db } from '../../db/database.ts'
import { caseConditions } from './queries.ts'
import { breachedSql, createdIn, days, figuresFrom, hoursOf, localDay, median, metSql } from './sla-analytics.ts'
import type { Window } from './sla-analytics.ts'

/**
 * The service-desk overview (the original's compute_service_overview behind the web app's
 * /tickets/analytics): totals, daily volume, first-response attainment by priority, the case-type
 * mix and the per-agent table, over the same analytics read model and the same clock as the
 * per-metric figures (sla-analytics.ts). Over the organization's whole queue (the route is
 * admin-only), and never a scan of it: the cases opened in the window are a range of the cases'
 * creation index, those resolved in it a range of the figures' resolution index, and the open ones
 * are counted by the cases read model as they change (open-counts.ts).
 */
const frtMinutes = sql`${hoursOf('frt')} * 60`
const eachAssignee = sql`LEFT JOIN LATERAL unnest(c.assigned_to) AS a(profile_id) ON true`

/** The cases whose resolution was fulfilled (closing) in [from, to), with their figures `f` (and `joins`). */
const resolvedFrom = (conditions: RawBuilder<boolean>[], from: Date, to: Date, joins = sql``) =>
  sql`case_sla_figures f JOIN cases c ON c.id = f.case_id ${joins} WHERE f.res_state = 'fulfilled' AND f.res_fulfilled_at >= ${from}::timestamptz AND f.res_fulfilled_at < ${to}::timestamptz AND ${sql.join(conditions, sql` AND `)}`

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

export async function serviceFigures(db: Db, orgId: string, w: Window): Promise<ServiceFigures> {
  // An admin's view: every live case of the organization but merged duplicates, as the open counts count them.
  const conditions = caseConditions({ orgId, profileId: null, isAdmin: true }, { hideMerged: true })
  const opened = (joins = sql``) => figuresFrom([...conditions, createdIn(w)], joins)
  const weekAgo = new Date(w.now.getTime() - 7 * 24 * 3_600_000)
  const [totals, volume, firstResponse, byType, byAgent] = await Promise.all([
    sql<ServiceTotals>`SELECT (SELECT count(*) FROM ${opened()})::int AS opened, count(*)::int AS closed, COALESCE((SELECT open FROM case_open_totals WHERE org_id = ${orgId}), 0) AS open_now,
        ${median(hoursOf('res'))} AS median_resolution_hours FROM ${resolvedFrom(conditions, w.from, w.to)}`.execute(db),
    sql<ServiceFigures['volume'][number]>`WITH d AS (${days(w)}),
        opened AS (SELECT ${localDay(sql`c.created_at`, w)} AS day, count(*) AS n FROM ${opened()} GROUP BY 1),
        closed AS (SELECT ${localDay(sql`f.res_fulfilled_at`, w)} AS day, count(*) AS n FROM ${resolvedFrom(conditions, w.from, w.to)} GROUP BY 1)
      SELECT d.day::text AS date, COALESCE(o.n, 0)::int AS opened, COALESCE(x.n, 0)::int AS closed FROM d LEFT JOIN opened o ON o.day = d.day LEFT JOIN closed x ON x.day = d.day ORDER BY d.day`.execute(db),
    sql<ServiceFigures['first_response'][number]>`SELECT c.priority, ${median(frtMinutes)} AS median_minutes, count(*) FILTER (WHERE ${metSql('frt')})::int AS met, count(*) FILTER (WHERE ${breachedSql('frt', w.now)})::int AS missed
      FROM ${opened()} GROUP BY c.priority`.execute(db),
    sql<ServiceFigures['by_type'][number]>`SELECT COALESCE(c.case_type, 'Uncategorized') AS case_type, count(*)::int AS count FROM ${opened()} GROUP BY 1 ORDER BY 2 DESC, 1`.execute(db),
    // A case counts for each of its assignees, an unassigned one under a null profile: the open counts, the week's resolutions and the window's openings, summed per profile.
    sql<ServiceFigures['by_agent'][number]>`SELECT profile_id, sum(open)::int AS open, sum(closed_this_week)::int AS closed_this_week, max(median) AS median_first_response_minutes, sum(breached)::int AS breached FROM (
        SELECT profile_id, open, 0 AS closed_this_week, NULL::float8 AS median, 0 AS breached FROM case_open_assignees WHERE org_id = ${orgId} AND open > 0
        UNION ALL SELECT NULL, unassigned, 0, NULL, 0 FROM case_open_totals WHERE org_id = ${orgId} AND unassigned > 0
        UNION ALL SELECT a.profile_id, 0, count(*), NULL, 0 FROM ${resolvedFrom(conditions, weekAgo, w.to, eachAssignee)} GROUP BY 1
        UNION ALL SELECT a.profile_id, 0, 0, ${median(frtMinutes)}, count(*) FILTER (WHERE ${breachedSql('frt', w.now)}) FROM ${opened(eachAssignee)} GROUP BY 1) per_source
      GROUP BY profile_id`.execute(db),
  ])
  return { totals: totals.rows[0]!, volume: volume.rows, first_response: firstResponse.rows, by_type: byType.rows, by_agent: byAgent.rows }
}
