import { sql } from 'kysely'
import type { RawBuilder } from 'kysely'
import type { Db } from '../../db/database.ts'

/**
 * The cases analytics (the original's cases/analytics.py): aggregates over the analytics read model
 * (sla-figures.ts), joined to the cases the caller may see and filtered as asked (`conditions` on
 * the cases row `c`, from queries.ts `caseConditions`). Durations are the SLA clock's business time
 * (pauses not counted) and breaches its own, judged at `now` by the rule of
 * commands/case/sla-figures.ts `isBreachedBy`: never wall-clock elapsed time. Percentiles interpolate
 * linearly, as the original's. Days are the organization's, in its time zone.
 */
export type Window = { from: Date; to: Date; timezone: string; now: Date }
type Scope = { conditions: RawBuilder<boolean>[]; window: Window }

const HOUR_MS = 3_600_000
const all = (conditions: RawBuilder<boolean>[]) => sql.join(conditions, sql` AND `)
/**
 * The visible, filtered cases `c` with their figures `f` (and `joins`, such as each assignee). Every
 * caller narrows the cases to a window's, a few percent of the organization's; each one's figures
 * are then fetched by key. (As a plain join the planner hashed the whole figures table per request,
 * 18 ms of 20 at 20k cases; LIMIT 1 keeps the subquery apart so it stays a lookup.)
 */
export const figuresFrom = (conditions: RawBuilder<boolean>[], joins = sql``) =>
  sql`cases c LEFT JOIN LATERAL (SELECT * FROM case_sla_figures WHERE case_id = c.id LIMIT 1) f ON true ${joins} WHERE ${all(conditions)}`

/** Business hours to the first response or to resolution, once fulfilled. */
export const hoursOf = (p: 'frt' | 'res') => sql<number | null>`CASE WHEN ${sql.raw(`f.${p}_state`)} = 'fulfilled' THEN ${sql.raw(`f.${p}_used_ms`)} / ${HOUR_MS}::float8 END`
/** The clock's breach at `now` (sla-figures.ts `isBreachedBy`): one on record, or a running deadline passed. */
export const breachedSql = (p: 'frt' | 'res', now: Date) => sql<boolean>`COALESCE(${sql.raw(`f.${p}_breached_at`)} IS NOT NULL OR ${sql.raw(`f.${p}_deadline`)} < ${now}::timestamptz, false)`
export const metSql = (p: 'frt' | 'res') => sql<boolean>`COALESCE(${sql.raw(`f.${p}_state`)} = 'fulfilled' AND ${sql.raw(`f.${p}_breached_at`)} IS NULL, false)`
export const median = (value: RawBuilder<unknown>) => sql<number | null>`percentile_cont(0.5) WITHIN GROUP (ORDER BY ${value})`
const p90 = (value: RawBuilder<unknown>) => sql<number | null>`percentile_cont(0.9) WITHIN GROUP (ORDER BY ${value})`

export const createdIn = (w: Window) => sql<boolean>`c.created_at >= ${w.from}::timestamptz AND c.created_at < ${w.to}::timestamptz`
/** Resolved in the window: the resolution instance fulfilled (closing) in it. */
export const resolvedIn = (w: Window) => sql<boolean>`c.id IN (SELECT case_id FROM case_sla_figures WHERE res_state = 'fulfilled' AND res_fulfilled_at >= ${w.from}::timestamptz AND res_fulfilled_at < ${w.to}::timestamptz)`
export const breachedIn = (p: 'frt' | 'res', now: Date) => sql<boolean>`c.id IN (SELECT case_id FROM case_sla_figures f WHERE ${breachedSql(p, now)})`
/** Open at the end of the organization's day `day`: created before it ends, not resolved by then. */
export const openAtEndOf = (day: string, timezone: string) => {
  const end = sql`((${day}::date + 1)::timestamp AT TIME ZONE ${timezone})`
  return sql<boolean>`c.created_at < ${end} AND (c.resolved_at IS NULL OR c.resolved_at > ${end})`
}
export const localDay = (instant: RawBuilder<unknown>, w: Window) => sql`((${instant}) AT TIME ZONE ${w.timezone})::date`
/** The organization's days the window touches, first to last. */
export const days = (w: Window) => sql`SELECT generate_series(${localDay(sql`${w.from}::timestamptz`, w)}, ${localDay(sql`${w.to}::timestamptz - interval '1 second'`, w)}, interval '1 day')::date AS day WHERE ${w.to}::timestamptz > ${w.from}::timestamptz`

export type FrtFigures = { median_hours: number | null; p90_hours: number | null; count: number; breach_count: number; series: { bucket: string; median: number | null; count: number }[]; case_ids: string[]; breach_case_ids: string[] }

/** First response over the cases created in the window: business hours to it, and breaches (answered late, or unanswered past the target at `now`). One scan: the whole window and each of its days. */
export async function frtFigures(db: Db, { conditions, window: w }: Scope): Promise<FrtFigures> {
  const scoped = sql`SELECT c.id, c.created_at, ${localDay(sql`c.created_at`, w)} AS day, ${hoursOf('frt')} AS hours, ${breachedSql('frt', w.now)} AS breached FROM ${figuresFrom([...conditions, createdIn(w)])}`
  const whole = (aggregate: RawBuilder<unknown>) => sql`CASE WHEN GROUPING(day) = 1 THEN ${aggregate} END`
  type Row = Omit<FrtFigures, 'series'> & { bucket: string | null }
  const { rows } = await sql<Row>`WITH w AS (${scoped}),
      g AS (SELECT day, GROUPING(day) = 1 AS whole, ${median(sql`hours`)} AS median_hours, ${p90(sql`hours`)} AS p90_hours, count(hours)::int AS count, count(*) FILTER (WHERE breached)::int AS breach_count,
          ${whole(sql`COALESCE(array_agg(id), '{}')`)} AS case_ids, ${whole(sql`COALESCE(array_agg(id) FILTER (WHERE breached), '{}')`)} AS breach_case_ids
        FROM w GROUP BY GROUPING SETS ((), (day)))
    SELECT NULL AS bucket, median_hours, p90_hours, count, breach_count, case_ids, breach_case_ids FROM g WHERE whole
    UNION ALL
    SELECT d.day::text, g.median_hours, NULL, COALESCE(g.count, 0), NULL, NULL, NULL FROM (${days(w)}) d LEFT JOIN g ON g.day = d.day AND NOT g.whole`.execute(db)
  const { bucket: _, ...totals } = rows.find((row) => row.bucket === null)!
  const series = rows.filter((row) => row.bucket !== null).map((row) => ({ bucket: row.bucket!, median: row.median_hours, count: row.count }))
  return { ...totals, series: series.sort((a, b) => (a.bucket < b.bucket ? -1 : 1)) }
}

type Spread = { mean_hours: number | null; median_hours: number | null; p90_hours: number | null; count: number }
export type MttrFigures = Spread & { by_priority: Record<string, Spread>; case_ids: string[] }

/** Time to resolution over the cases resolved in the window: business hours, pauses not counted. One scan: overall and by priority. */
export async function mttrFigures(db: Db, { conditions, window: w }: Scope): Promise<MttrFigures> {
  const scoped = sql`SELECT c.id, c.priority, c.created_at, ${hoursOf('res')} AS hours FROM ${figuresFrom([...conditions, resolvedIn(w)])}`
  const { rows } = await sql<Spread & { priority: string | null; case_ids: string[] | null }>`WITH w AS (${scoped})
    SELECT CASE WHEN GROUPING(priority) = 0 THEN priority END AS priority, avg(hours) AS mean_hours, ${median(sql`hours`)} AS median_hours, ${p90(sql`hours`)} AS p90_hours, count(*)::int AS count,
      CASE WHEN GROUPING(priority) = 1 THEN COALESCE(array_agg(id), '{}') END AS case_ids
    FROM w GROUP BY GROUPING SETS ((), (priority)) ORDER BY priority NULLS FIRST`.execute(db)
  const [{ case_ids, priority: _, ...overall }, ...byPriority] = rows as [(typeof rows)[number], ...typeof rows]
  return { ...overall, by_priority: Object.fromEntries(byPriority.map(({ priority, case_ids: _ids, ...figures }) => [priority!, figures])), case_ids: case_ids ?? [] }
}

export type BacklogDay = { date: string; open_count: number; urgent_count: number }

/**
 * Open and open Urgent cases at the end of each of the window's days. One pass: each case adds one
 * from the day it opened and takes one away from the day it was resolved (a case resolved at
 * exactly midnight still counts as open that day, as the original's `resolved_at > end_of_day`);
 * a running sum over the days gives each day's figure.
 */
export async function backlogFigures(db: Db, { conditions, window: w }: Scope): Promise<BacklogDay[]> {
  const first = localDay(sql`${w.from}::timestamptz`, w)
  const end = sql`((${localDay(sql`${w.to}::timestamptz - interval '1 second'`, w)} + 1)::timestamp AT TIME ZONE ${w.timezone})`
  const urgent = sql`(c.priority = 'Urgent')::int`
  const { rows } = await sql<BacklogDay>`WITH deltas AS (
      SELECT GREATEST(${localDay(sql`c.created_at`, w)}, ${first}) AS day, 1 AS n, ${urgent} AS u FROM cases c WHERE ${all(conditions)} AND c.created_at < ${end}
      UNION ALL
      SELECT GREATEST(${localDay(sql`c.resolved_at - interval '1 microsecond'`, w)}, ${first}), -1, -${urgent} FROM cases c WHERE ${all(conditions)} AND c.resolved_at <= ${end}),
    per_day AS (SELECT day, sum(n) AS n, sum(u) AS u FROM deltas GROUP BY day),
    d AS (${days(w)})
    SELECT d.day::text AS date, (sum(COALESCE(p.n, 0)) OVER (ORDER BY d.day))::int AS open_count, (sum(COALESCE(p.u, 0)) OVER (ORDER BY d.day))::int AS urgent_count
    FROM d LEFT JOIN per_day p ON p.day = d.day ORDER BY d.day`.execute(db)
  return rows
}

export type AgentFigures = { profile_id: string; handled: number; avg_frt_hours: number | null; csat_avg: number | null; breach_count: number }

/** Per assignee over the cases created in the window (a case with two assignees counts for each): handled, mean business hours to first response, mean CSAT rating, breaches of either instance. */
export async function agentFigures(db: Db, { conditions, window: w }: Scope): Promise<AgentFigures[]> {
  const { rows } = await sql<AgentFigures>`SELECT a.profile_id, count(*)::int AS handled, avg(${hoursOf('frt')}) AS avg_frt_hours, avg(s.rating)::float8 AS csat_avg,
      (count(*) FILTER (WHERE ${breachedSql('frt', w.now)}) + count(*) FILTER (WHERE ${breachedSql('res', w.now)}))::int AS breach_count
    FROM ${figuresFrom([...conditions, createdIn(w)], sql`CROSS JOIN LATERAL unnest(c.assigned_to) AS a(profile_id) LEFT JOIN case_csat s ON s.case_id = c.id`)}
    GROUP BY a.profile_id`.execute(db)
  return rows
}

type Rates = { total: number; frt_breach_count: number; resolution_breach_count: number }
export type SlaFigures = Rates & { by_priority: Record<string, Rates>; frt_breach_case_ids: string[]; resolution_breach_case_ids: string[] }

/** Breaches of each instance over the cases created in the window, overall and by priority (one scan, by priority, summed here). */
export async function slaFigures(db: Db, { conditions, window: w }: Scope): Promise<SlaFigures> {
  type Row = Rates & { priority: string; frt_ids: string[]; res_ids: string[] }
  const { rows } = await sql<Row>`WITH w AS (SELECT c.id, c.priority, c.created_at, ${breachedSql('frt', w.now)} AS frt, ${breachedSql('res', w.now)} AS res FROM ${figuresFrom([...conditions, createdIn(w)])})
    SELECT priority, count(*)::int AS total, count(*) FILTER (WHERE frt)::int AS frt_breach_count, count(*) FILTER (WHERE res)::int AS resolution_breach_count,
      COALESCE(array_agg(id) FILTER (WHERE frt), '{}') AS frt_ids, COALESCE(array_agg(id) FILTER (WHERE res), '{}') AS res_ids
    FROM w GROUP BY priority ORDER BY priority`.execute(db)
  const sum = (key: keyof Rates) => rows.reduce((total, row) => total + row[key], 0)
  return {
    total: sum('total'),
    frt_breach_count: sum('frt_breach_count'),
    resolution_breach_count: sum('resolution_breach_count'),
    by_priority: Object.fromEntries(rows.map(({ priority, total, frt_breach_count, resolution_breach_count }) => [priority, { total, frt_breach_count, resolution_breach_count }])),
    frt_breach_case_ids: rows.flatMap((row) => row.frt_ids),
    resolution_breach_case_ids: rows.flatMap((row) => row.res_ids),
  }
}

/** A window's end as asked: a whole day of the organization (YYYY-MM-DD), its wall-clock time (no offset), or an instant. */
export type Bound = { kind: 'day' | 'local' | 'instant'; value: string }
const DEFAULT_DAYS = 30

/** The instants of a window in the organization's time zone: a day `to` is included whole; absent, `to` is now and `from` 30 days before it. */
export async function windowOf(db: Db, bounds: { from?: Bound; to?: Bound }, timezone: string, now: Date): Promise<Window> {
  const instant = (bound: Bound | undefined, endOfDay: boolean) => {
    if (!bound) return sql`NULL::timestamptz`
    if (bound.kind === 'instant') return sql`${bound.value}::timestamptz`
    if (bound.kind === 'local') return sql`(${bound.value}::timestamp AT TIME ZONE ${timezone})`
    return sql`((${bound.value}::date + ${endOfDay ? 1 : 0}::int)::timestamp AT TIME ZONE ${timezone})`
  }
  const { rows } = await sql<{ from: Date | null; to: Date | null }>`SELECT ${instant(bounds.from, false)} AS "from", ${instant(bounds.to, true)} AS "to"`.execute(db)
  const to = rows[0]!.to ?? now
  return { from: rows[0]!.from ?? new Date(to.getTime() - DEFAULT_DAYS * 86_400_000), to, timezone, now }
}
