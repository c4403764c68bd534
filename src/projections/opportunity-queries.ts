import { sql } from 'kysely'
import type { Kysely, RawBuilder } from 'kysely'
import { containsPattern } from '../db/like.ts'
import type { OpportunityView } from './opportunities.ts'
import { anyOf } from './records.ts'

/**
 * The deal list, its totals and the board (§4.3, §2.3, §4.6) read one filter, built here once, so
 * a filter narrows all three identically by construction. Every condition is plain SQL over the
 * deals read model joined to its stage (for thresholds); aging is computed from `now`, a parameter.
 * Malformed values match nothing (a condition of `false`), never an error.
 */
export type DealFilter = {
  name?: string
  search?: string
  account?: string[]
  stage?: string
  leadSource?: string
  tags?: string[]
  assignedTo?: string[]
  createdFrom?: string
  createdTo?: string
  closedFrom?: string
  closedTo?: string
  amountFrom?: string
  amountTo?: string
  pipeline?: string[]
  open?: boolean
  rotten?: boolean
  /** cf_<key> filters given (custom fields are not built yet: any of them matches nothing). */
  customFields?: Record<string, string>
}

/** Who is asking: a non-admin sees only deals they created or are assigned to (§4.3), in rows, counts and totals. */
export type Viewer = { orgId: string; profileId: string | null; isAdmin: boolean }

const NOTHING = sql<boolean>`false`
const isDate = (v: string) => /^\d{4}-\d{2}-\d{2}$/.test(v) && !Number.isNaN(Date.parse(`${v}T00:00:00Z`))
const isDecimal = (v: string) => /^-?\d{1,15}(\.\d{1,10})?$/.test(v)

/** `o.stage_changed_at` far enough back for the deal to be stalled (§3.2): ceil(expected_days × 1.5) whole days. */
export const stalled = (now: Date) =>
  sql<boolean>`(o.stage_kind = 'open' AND s.expected_days IS NOT NULL AND o.stage_changed_at <= ${now}::timestamptz - make_interval(days => ceil(s.expected_days * 1.5)::int))`

function bound(column: RawBuilder<unknown>, op: '>=' | '<=' | '<', value: string | undefined, valid: (v: string) => boolean, cast: string): RawBuilder<boolean> | undefined {
  if (value === undefined) return undefined
  return valid(value) ? sql<boolean>`${column} ${sql.raw(op)} ${value}::${sql.raw(cast)}` : NOTHING
}

// `created_at__lte=2026-11-22` includes the whole of that (UTC) day.
const nextDay = (date: string) => (isDate(date) ? new Date(Date.parse(`${date}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10) : date)

export function dealConditions(viewer: Viewer, filter: DealFilter, now: Date): RawBuilder<boolean>[] {
  const conditions: (RawBuilder<boolean> | undefined)[] = [sql`o.org_id = ${viewer.orgId}`, sql`NOT o.is_deleted`]
  if (!viewer.isAdmin) conditions.push(viewer.profileId === null ? NOTHING : sql`(o.created_by = ${viewer.profileId} OR ${viewer.profileId}::uuid = ANY(o.assigned_to))`)
  for (const text of [filter.name, filter.search]) if (text) conditions.push(sql`o.name ILIKE ${containsPattern(text)}`)
  // Case-sensitive contains (§4.3): `stage=CLOSED` matches CLOSED_WON and CLOSED_LOST, `stage=closed` neither.
  if (filter.stage) conditions.push(sql`strpos(o.stage, ${filter.stage}) > 0`)
  if (filter.leadSource) conditions.push(sql`strpos(o.lead_source, ${filter.leadSource}) > 0`)
  if (filter.account) conditions.push(filter.account.length ? sql`o.account = ANY(${filter.account}::uuid[])` : NOTHING)
  if (filter.pipeline) conditions.push(filter.pipeline.length ? sql`o.pipeline_id = ANY(${filter.pipeline}::uuid[])` : NOTHING)
  if (filter.tags) conditions.push(anyOf('o.tags', filter.tags))
  if (filter.assignedTo) conditions.push(anyOf('o.assigned_to', filter.assignedTo))
  conditions.push(
    bound(sql`o.created_at`, '>=', filter.createdFrom, isDate, 'timestamptz'),
    bound(sql`o.created_at`, '<', filter.createdTo && nextDay(filter.createdTo), isDate, 'timestamptz'),
    bound(sql`o.closed_on`, '>=', filter.closedFrom, isDate, 'date'),
    bound(sql`o.closed_on`, '<=', filter.closedTo, isDate, 'date'),
    bound(sql`o.amount`, '>=', filter.amountFrom, isDecimal, 'numeric'),
    bound(sql`o.amount`, '<=', filter.amountTo, isDecimal, 'numeric'),
  )
  if (filter.open) conditions.push(sql`o.stage_kind = 'open'`)
  if (filter.rotten) conditions.push(stalled(now))
  if (filter.customFields && Object.keys(filter.customFields).length) conditions.push(NOTHING)
  return conditions.filter((c): c is RawBuilder<boolean> => c !== undefined)
}

const where = (conditions: RawBuilder<boolean>[]) => sql.join(conditions, sql` AND `)
const FROM = sql`opportunities o LEFT JOIN pipeline_stages s ON s.id = o.stage_id`
const COLUMNS = sql`o.*, o.closed_on::text AS closed_on, s.label AS stage_label, s.expected_days, s.warning_days`

/** One page of the filtered deals, newest first, and the count of the whole set. */
export async function listDeals(db: Kysely<any>, conditions: RawBuilder<boolean>[], page: { limit: number; offset: number }): Promise<{ count: number; rows: OpportunityView[] }> {
  const [rows, count] = await Promise.all([
    sql<OpportunityView>`SELECT ${COLUMNS} FROM ${FROM} WHERE ${where(conditions)} ORDER BY o.created_at DESC, o.id LIMIT ${page.limit} OFFSET ${page.offset}`.execute(db),
    sql<{ n: string }>`SELECT count(*) AS n FROM ${FROM} WHERE ${where(conditions)}`.execute(db),
  ])
  return { count: Number(count.rows[0]!.n), rows: rows.rows }
}

export type Totals = {
  count: number
  amount_sum: string | null
  weighted_sum: string | null
  by_currency: { currency: string; amount_sum: string; weighted_sum: string }[]
  stalled_count: number
}

/**
 * §2.3 over the whole filtered set, in SQL numeric: one grouping-sets query gives each currency's
 * sums and the overall ones. A deal with no currency counts in the organization's default; the
 * overall sums are null when more than one currency is present; nothing priced sums to "0".
 */
export async function dealTotals(db: Kysely<any>, conditions: RawBuilder<boolean>[], defaultCurrency: string, now: Date): Promise<Totals> {
  const { rows } = await sql<{ currency: string | null; overall: boolean; n: string; amount_sum: string; weighted_sum: string; stalled: string; currencies: string }>`
    SELECT f.currency, grouping(f.currency) = 1 AS overall, count(*) AS n,
      coalesce(round(sum(f.amount), 2)::text, '0') AS amount_sum,
      coalesce(round(sum(f.amount * coalesce(f.probability, 0) / 100), 2)::text, '0') AS weighted_sum,
      count(*) FILTER (WHERE f.stalled) AS stalled, count(DISTINCT f.currency) AS currencies
    FROM (SELECT o.amount, o.probability, coalesce(o.currency, ${defaultCurrency}) AS currency, ${stalled(now)} AS stalled FROM ${FROM} WHERE ${where(conditions)}) f
    GROUP BY GROUPING SETS ((f.currency), ())
    ORDER BY overall, f.currency`.execute(db)
  const all = rows.find((r) => r.overall)!
  const single = Number(all.currencies) <= 1
  return {
    count: Number(all.n),
    amount_sum: single ? all.amount_sum : null,
    weighted_sum: single ? all.weighted_sum : null,
    by_currency: rows.filter((r) => !r.overall).map((r) => ({ currency: r.currency!, amount_sum: r.amount_sum, weighted_sum: r.weighted_sum })),
    stalled_count: Number(all.stalled),
  }
}

/** The board's cards: at most `perColumn` per stage in kanban order, and every column's full count. */
export async function boardDeals(db: Kysely<any>, conditions: RawBuilder<boolean>[], perColumn: number): Promise<{ rows: OpportunityView[]; counts: Map<string, number> }> {
  const [cards, counts] = await Promise.all([
    sql<OpportunityView>`SELECT * FROM (SELECT ${COLUMNS}, row_number() OVER (PARTITION BY o.stage_id ORDER BY o.kanban_order, o.id) AS column_rank FROM ${FROM} WHERE ${where(conditions)}) c
      WHERE c.column_rank <= ${perColumn} ORDER BY c.kanban_order, c.id`.execute(db),
    sql<{ stage_id: string; n: string }>`SELECT o.stage_id, count(*) AS n FROM ${FROM} WHERE ${where(conditions)} GROUP BY o.stage_id`.execute(db),
  ])
  return { rows: cards.rows, counts: new Map(counts.rows.map((r) => [r.stage_id, Number(r.n)])) }
}
