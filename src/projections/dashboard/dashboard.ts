import { sql } from 'kysely'
import type { RawBuilder } from 'kysely'
import { CLOSED_LEAD_STATUSES } from '../../commands/lead/lead.ts'
import { goalOf, visibleTo } from '../goal/goals.ts'
import type { GoalView } from '../goal/goals.ts'
import { leadConditions } from '../lead/leads.ts'
import { dealQuery, stalled } from '../opportunity/queries.ts'
import type { Viewer } from '../opportunity/queries.ts'
import { visibleSql } from '../../visibility/policy.ts'
import type { Db } from '../../db/database.ts'

/**
 * The dashboard's numbers (the original's home and Today views), read from the deals, leads,
 * accounts, contacts and goals read models. Deals and leads are narrowed by the conditions their
 * own lists build (dealQuery, leadConditions), so every count here is the count the list shows
 * with the same visibility. Money is summed in SQL numeric and answered as decimal strings; a
 * deal with no currency counts in the organization's default, as in the deal list's totals.
 */

const where = (conditions: RawBuilder<boolean>[]) => sql.join(conditions, sql` AND `)
/** Nothing priced sums to "0" (as the deal list's totals answer), otherwise the sum rounded to cents. */
const money = (column: RawBuilder<unknown>) => sql<string>`coalesce(round(${column}, 2)::text, '0')`
const inCurrency = (currency: string) => sql<boolean>`coalesce(nullif(o.currency, ''), ${currency}) = ${currency}`
const OPEN_LEAD = sql<boolean>`NOT (l.status = ANY(${[...CLOSED_LEAD_STATUSES]}::text[]))`
/** The original's hot leads: rated hot and still being worked. */
const HOT_LEAD = sql<boolean>`lower(l.rating) = 'hot' AND l.status IN ('assigned', 'in process')`

const dealConditions = (viewer: Viewer, now: Date) => dealQuery(viewer, {}, now).conditions
const leadsOf = (viewer: Viewer) => leadConditions(viewer, {})

export type RecordCounts = { accounts: number; contacts: number; open_leads: number; all_leads: number; converted_leads: number; hot_leads: number; opportunities: number }

/** The counts the lists answer: accounts and contacts (every member reads them all), open leads and deals as the caller's lists show them. */
export async function recordCounts(db: Db, viewer: Viewer, now: Date): Promise<RecordCounts> {
  const { rows } = await sql<Record<keyof RecordCounts, string>>`SELECT
      (SELECT count(*) FROM accounts WHERE org_id = ${viewer.orgId} AND NOT is_deleted AND ${visibleSql('Account', viewer)}) AS accounts,
      (SELECT count(*) FROM contacts WHERE org_id = ${viewer.orgId} AND NOT is_deleted AND ${visibleSql('Contact', viewer)}) AS contacts,
      (SELECT count(*) FROM opportunities o WHERE ${where(dealConditions(viewer, now))}) AS opportunities,
      l.open_leads, l.all_leads, l.converted_leads, l.hot_leads
    FROM (SELECT count(*) FILTER (WHERE ${OPEN_LEAD}) AS open_leads, count(*) AS all_leads, count(*) FILTER (WHERE l.status = 'converted') AS converted_leads,
        count(*) FILTER (WHERE ${HOT_LEAD}) AS hot_leads
      FROM leads l WHERE ${where(leadsOf(viewer))}) l`.execute(db)
  const row = rows[0]!
  return Object.fromEntries(Object.entries(row).map(([key, value]) => [key, Number(value)])) as RecordCounts
}

export type HotLead = { id: string; first_name: string; last_name: string | null; is_erased: boolean; company_name: string | null; rating: string | null; next_follow_up: string | null; last_contacted: string | null }

/** The ten newest hot leads the caller may see. */
export async function hotLeads(db: Db, viewer: Viewer, limit: number): Promise<HotLead[]> {
  const { rows } = await sql<HotLead>`SELECT l.id, l.first_name, l.last_name, l.is_erased, l.company_name, l.rating, l.next_follow_up::text AS next_follow_up, l.last_contacted::text AS last_contacted FROM leads l
    WHERE ${where([...leadsOf(viewer), HOT_LEAD])} ORDER BY l.created_at DESC, l.id LIMIT ${limit}`.execute(db)
  return rows
}

/** Open leads the caller may see whose next follow-up is `today` (YYYY-MM-DD). */
export async function followUpsOn(db: Db, viewer: Viewer, today: string): Promise<number> {
  const { rows } = await sql<{ n: string }>`SELECT count(*) AS n FROM leads l WHERE ${where([...leadsOf(viewer), OPEN_LEAD, sql<boolean>`l.next_follow_up = ${today}::date`])}`.execute(db)
  return Number(rows[0]!.n)
}

export type StageSummary = { code: string; label: string; kind: string; count: number; value: string }

/**
 * The caller's deals by stage code, over every pipeline: the default pipeline's stages first, in
 * their order (with zero deals too), then any other code by name. `value` sums amounts in the
 * organization's currency only; `count` counts every deal of the stage.
 */
export async function pipelineByStage(db: Db, viewer: Viewer, now: Date, currency: string): Promise<StageSummary[]> {
  const [stages, deals] = await Promise.all([
    sql<{ code: string; label: string; kind: string }>`SELECT s.code, s.label, s.kind FROM pipeline_stages s JOIN pipelines p ON p.id = s.pipeline_id
      WHERE p.org_id = ${viewer.orgId} AND p.is_default ORDER BY s.position, s.code`.execute(db),
    sql<{ code: string; label: string | null; kind: string; n: string; value: string }>`SELECT o.stage AS code, min(s.label) AS label, min(o.stage_kind) AS kind, count(*) AS n,
        ${money(sql`sum(o.amount) FILTER (WHERE ${inCurrency(currency)})`)} AS value
      FROM opportunities o LEFT JOIN pipeline_stages s ON s.id = o.stage_id WHERE ${where(dealConditions(viewer, now))} GROUP BY o.stage ORDER BY o.stage`.execute(db),
  ])
  const byCode = new Map(deals.rows.map((row) => [row.code, row]))
  const summaries = stages.rows.map(({ code, label, kind }) => {
    const found = byCode.get(code)
    byCode.delete(code)
    return { code, label, kind, count: Number(found?.n ?? 0), value: found?.value ?? '0' }
  })
  for (const row of byCode.values()) summaries.push({ code: row.code, label: row.label ?? row.code, kind: row.kind, count: Number(row.n), value: row.value })
  return summaries
}

export type Revenue = { pipeline_value: string; open_count: number; weighted_pipeline: string; won_this_month: string; other_currency_count: number }

/**
 * Open deals (stage kind open) and their value and weighted value (amount × probability / 100, as
 * the deal list weighs it) in the organization's currency; wins (stage kind won) closed in the
 * month `[monthStart, nextMonthStart)`; how many deals are in another currency.
 */
export async function revenue(db: Db, viewer: Viewer, now: Date, currency: string, month: { from: string; to: string }): Promise<Revenue> {
  const open = sql<boolean>`o.stage_kind = 'open'`
  const { rows } = await sql<{ pipeline_value: string; open_count: string; weighted_pipeline: string; won_this_month: string; other_currency_count: string }>`SELECT
      ${money(sql`sum(o.amount) FILTER (WHERE ${open} AND ${inCurrency(currency)})`)} AS pipeline_value,
      count(*) FILTER (WHERE ${open}) AS open_count,
      ${money(sql`sum(o.amount * coalesce(o.probability, 0) / 100) FILTER (WHERE ${open} AND ${inCurrency(currency)})`)} AS weighted_pipeline,
      ${money(sql`sum(o.amount) FILTER (WHERE o.stage_kind = 'won' AND o.closed_on >= ${month.from}::date AND o.closed_on < ${month.to}::date AND ${inCurrency(currency)})`)} AS won_this_month,
      count(*) FILTER (WHERE NOT ${inCurrency(currency)}) AS other_currency_count
    FROM opportunities o WHERE ${where(dealConditions(viewer, now))}`.execute(db)
  const row = rows[0]!
  return { ...row, open_count: Number(row.open_count), other_currency_count: Number(row.other_currency_count) }
}

/**
 * The caller's active goals whose period holds `today` (the original's goal summary): assigned to
 * their profile or to a team they are in, and for an admin the whole organization's goals too; at
 * most `limit`, ending soonest first.
 */
export async function currentGoals(db: Db, viewer: Viewer, today: string, limit: number): Promise<GoalView[]> {
  const mine = viewer.profileId === null ? sql<boolean>`false` : visibleTo(viewer.profileId)
  const { rows } = await sql<{ id: string }>`SELECT g.id FROM goals g WHERE g.org_id = ${viewer.orgId} AND g.is_active
      AND g.period_start <= ${today}::date AND g.period_end >= ${today}::date
      AND (${mine} OR ${viewer.isAdmin ? sql`g.owner_type = 'org'` : sql`false`})
    ORDER BY g.period_end, lower(g.name), g.id LIMIT ${limit}`.execute(db)
  const goals = await Promise.all(rows.map((row) => goalOf(db, viewer.orgId, row.id)))
  return goals.filter((goal): goal is GoalView => goal !== undefined)
}

export type QuietDeal = { id: string; name: string; amount: string | null; currency: string | null; stage: string; stage_label: string | null; stage_changed_at: Date; rotten: boolean }

/**
 * Quiet deals (§3.2 aging, as the deal list computes it): open deals past their stage's warning
 * threshold (warning_days, else expected_days) or stalled (red, `rotten=true` in the list). Red
 * ones first, then the longest unmoved; at most `limit`, with the count and value (in the
 * organization's currency) of all of them.
 */
export async function quietDeals(db: Db, viewer: Viewer, now: Date, currency: string, limit: number): Promise<{ count: number; value: string; rows: QuietDeal[] }> {
  const quiet = sql<boolean>`o.stage_kind = 'open' AND (${stalled(now)}
    OR (coalesce(s.warning_days, s.expected_days) IS NOT NULL AND o.stage_changed_at + make_interval(days => coalesce(s.warning_days, s.expected_days)) <= ${now}::timestamptz))`
  const from = sql`opportunities o LEFT JOIN pipeline_stages s ON s.id = o.stage_id WHERE ${where([...dealConditions(viewer, now), quiet])}`
  const [rows, total] = await Promise.all([
    sql<QuietDeal>`SELECT o.id, o.name, o.amount::text AS amount, o.currency, o.stage, s.label AS stage_label, o.stage_changed_at, ${stalled(now)} AS rotten
      FROM ${from} ORDER BY ${stalled(now)} DESC, o.stage_changed_at, o.id LIMIT ${limit}`.execute(db),
    sql<{ n: string; value: string }>`SELECT count(*) AS n, ${money(sql`sum(o.amount) FILTER (WHERE ${inCurrency(currency)})`)} AS value FROM ${from}`.execute(db),
  ])
  return { count: Number(total.rows[0]!.n), value: total.rows[0]!.value, rows: rows.rows }
}

export type ClosingDeal = { id: string; name: string; amount: string | null; currency: string | null; stage: string; stage_label: string | null; closed_on: string }

/** Open deals the caller may see expected to close after `today` and up to `until` (inclusive), soonest first. */
export async function dealsClosingSoon(db: Db, viewer: Viewer, now: Date, window: { today: string; until: string }, limit: number): Promise<ClosingDeal[]> {
  const { rows } = await sql<ClosingDeal>`SELECT o.id, o.name, o.amount::text AS amount, o.currency, o.stage, s.label AS stage_label, o.closed_on::text AS closed_on
    FROM opportunities o LEFT JOIN pipeline_stages s ON s.id = o.stage_id
    WHERE ${where([...dealConditions(viewer, now), sql`o.stage_kind = 'open'`, sql`o.closed_on > ${window.today}::date`, sql`o.closed_on <= ${window.until}::date`])}
    ORDER BY o.closed_on, o.id LIMIT ${limit}`.execute(db)
  return rows
}
