import { sql } from 'kysely'
import type { RawBuilder } from 'kysely'
import type { Db } from '../../db/database.ts'
import { openNow, openPerAssignee, openUnassigned } from './case-counts.ts'
import { breachedSql, days, hoursOf, localDay, median, metSql } from './sla-analytics.ts'
import type { Window } from './sla-analytics.ts'

/**
 * The service-desk overview (the original's compute_service_overview behind the web app's
 * /tickets/analytics): totals, daily volume, first-response attainment by priority, the case-type
 * mix and the per-agent table, over the same analytics read model and the same clock as the
 * per-metric figures (sla-analytics.ts). Over the organization's whole queue (the route is
 * admin-only), and never a scan of it: the cases opened in the window and those resolved in it are
 * two ranges of the figures' indexes, which hold every column read here (sla-figures.ts: its rows
 * carry the case's facts, so no case row is read), and the open ones are counted by the cases read
 * model as they change (case-counts.ts).
 */
const frtMinutes = sql`${hoursOf('frt')} * 60`
/** Each row's assignees, or one null profile for none (over the opened and resolved rows below). */
const eachAssignee = sql`LEFT JOIN LATERAL unnest(assigned_to) AS a(profile_id) ON true`
/** The organization's cases the overview counts, as the cases' admin view with merged duplicates left out (the predicate of the figures' two indexes). */
const counted = (orgId: string) => sql`f.org_id = ${orgId} AND NOT f.is_deleted AND f.status <> 'Duplicate'`

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

/**
 * One statement: the window's openings and the resolutions since the earlier of the window's start
 * and a week ago are each read once (MATERIALIZED) and every figure is aggregated from those rows,
 * as JSON. (Five statements read the window five times: 35 ms at a 2,500-case window, as the bench
 * has at 100k cases.)
 */
export async function serviceFigures(db: Db, orgId: string, w: Window): Promise<ServiceFigures> {
  const weekAgo = new Date(w.now.getTime() - 7 * 24 * 3_600_000)
  const since = weekAgo < w.from ? weekAgo : w.from
  const json = (rows: RawBuilder<unknown>) => sql`COALESCE(json_agg(${rows}), '[]')`
  const { rows } = await sql<ServiceFigures>`WITH
      opened AS MATERIALIZED (SELECT f.priority, COALESCE(f.case_type, 'Uncategorized') AS case_type, f.assigned_to, ${localDay(sql`f.created_at`, w)} AS day,
          ${frtMinutes} AS frt_minutes, ${metSql('frt')} AS met, ${breachedSql('frt', w.now)} AS missed
        FROM case_sla_figures f WHERE ${counted(orgId)} AND f.created_at >= ${w.from}::timestamptz AND f.created_at < ${w.to}::timestamptz),
      resolved AS MATERIALIZED (SELECT f.assigned_to, f.res_fulfilled_at AS at, ${localDay(sql`f.res_fulfilled_at`, w)} AS day, ${hoursOf('res')} AS hours
        FROM case_sla_figures f WHERE ${counted(orgId)} AND f.res_state = 'fulfilled' AND f.res_fulfilled_at >= ${since}::timestamptz AND f.res_fulfilled_at < ${w.to}::timestamptz),
      closed AS (SELECT * FROM resolved WHERE at >= ${w.from}::timestamptz),
      -- A case counts for each of its assignees, an unassigned one under a null profile: the open counts, the week's resolutions and the window's openings, summed per profile.
      per_source AS (
        SELECT profile_id, open, 0 AS closed_this_week, NULL::float8 AS median, 0 AS breached FROM ${openPerAssignee(orgId)} o
        UNION ALL SELECT NULL, u.n, 0, NULL, 0 FROM (SELECT ${openUnassigned(orgId)} AS n) u WHERE u.n > 0
        UNION ALL SELECT a.profile_id, 0, count(*), NULL, 0 FROM resolved ${eachAssignee} WHERE at >= ${weekAgo}::timestamptz GROUP BY 1
        UNION ALL SELECT a.profile_id, 0, 0, ${median(sql`frt_minutes`)}, count(*) FILTER (WHERE missed) FROM opened ${eachAssignee} GROUP BY 1)
    SELECT
      json_build_object('opened', (SELECT count(*) FROM opened), 'closed', (SELECT count(*) FROM closed), 'open_now', ${openNow(orgId)},
        'median_resolution_hours', (SELECT ${median(sql`hours`)} FROM closed)) AS totals,
      (SELECT ${json(sql`json_build_object('date', d.day::text, 'opened', COALESCE(o.n, 0), 'closed', COALESCE(x.n, 0)) ORDER BY d.day`)} FROM (${days(w)}) d
        LEFT JOIN (SELECT day, count(*) AS n FROM opened GROUP BY 1) o ON o.day = d.day LEFT JOIN (SELECT day, count(*) AS n FROM closed GROUP BY 1) x ON x.day = d.day) AS volume,
      (SELECT ${json(sql`p`)} FROM (SELECT priority, ${median(sql`frt_minutes`)} AS median_minutes, count(*) FILTER (WHERE met) AS met, count(*) FILTER (WHERE missed) AS missed FROM opened GROUP BY 1) p) AS first_response,
      (SELECT ${json(sql`t ORDER BY t.count DESC, t.case_type`)} FROM (SELECT case_type, count(*) AS count FROM opened GROUP BY 1) t) AS by_type,
      (SELECT ${json(sql`a`)} FROM (SELECT profile_id, sum(open) AS open, sum(closed_this_week) AS closed_this_week, max(median) AS median_first_response_minutes, sum(breached) AS breached
        FROM per_source GROUP BY 1) a) AS by_agent`.execute(db)
  return rows[0]!
}
