import { sql } from 'kysely'
import type { RawBuilder } from 'kysely'
import type { CustomValues } from '../../commands/custom-field/values.ts'
import { isIsoDate } from '../../db/date-range.ts'
import { containsPattern } from '../../db/like.ts'
import type { OpportunityView } from './opportunities.ts'
import { anyOf } from '../kernel/records.ts'
import { ruleFor, visibleSql } from '../../visibility/policy.ts'
import type { Viewer } from '../../visibility/policy.ts'
import type { Timed } from '../kernel/stamped-cache.ts'
import type { Db } from '../../db/database.ts'

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
  /** cf_<key> filters as the values a deal must hold (containment), or null when one is unknown or malformed (matches nothing). */
  customFields?: CustomValues | null
}

/** Who is asking: they see the deals the visibility policy shows them (§4.3), in rows, counts and totals. */
export type { Viewer }

const NOTHING = sql<boolean>`false`
const isDecimal = (v: string) => /^-?\d{1,15}(\.\d{1,10})?$/.test(v)

/** Stalled (§3.2): the deal's `stalls_at` (its stage_changed_at + ceil(expected_days × 1.5) days, see opportunity-rollups.ts) has passed. */
export const stalled = (now: Date) => sql<boolean>`(o.stalls_at IS NOT NULL AND o.stalls_at <= ${now}::timestamptz)`

function bound(column: RawBuilder<unknown>, op: '>=' | '<=' | '<', value: string | undefined, valid: (v: string) => boolean, cast: string): RawBuilder<boolean> | undefined {
  if (value === undefined) return undefined
  return valid(value) ? sql<boolean>`${column} ${sql.raw(op)} ${value}::${sql.raw(cast)}` : NOTHING
}

// `created_at__lte=2026-11-22` includes the whole of that (UTC) day.
const nextDay = (date: string) => (isIsoDate(date) ? new Date(Date.parse(`${date}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10) : date)

/**
 * The filtered set a request reads: its SQL conditions; whether the rollups (deal_totals) can
 * answer counts and sums instead of a scan: a viewer who sees every deal (visibility/policy.ts:
 * an admin) with no filter but, at most, the pipeline and open=true; the text of a stage filter,
 * which the live read model narrows by index (liveConditions);
 * and whether the set itself depends on `now` (rotten=true), so no part of it may be kept.
 */
export type DealQuery = { conditions: RawBuilder<boolean>[]; now: Date; rollup: Rollup | null; stage: { orgId: string; text: string } | null; clocked: boolean }
type Rollup = { orgId: string; pipelines: string[] | undefined; openOnly: boolean }

export function dealQuery(viewer: Viewer, filter: DealFilter, now: Date): DealQuery {
  const { pipeline, open, customFields, ...rest } = filter
  const filtered = Object.values(rest).some((v) => v !== undefined && v !== false) || customFields !== undefined
  const rollup = ruleFor('Opportunity', viewer) === 'all' && !filtered && (pipeline === undefined || pipeline.length > 0) ? { orgId: viewer.orgId, pipelines: pipeline, openOnly: open === true } : null
  return { conditions: dealConditions(viewer, filter, now), now, rollup, stage: filter.stage ? { orgId: viewer.orgId, text: filter.stage } : null, clocked: filter.rotten === true }
}

/**
 * `query.conditions` and, over the live read model, the stage codes its stage filter can match:
 * the organization's codes in the rollups (which hold every live deal's code) containing the text.
 * Implied by the contains-condition, so the rows are the same; but `stage = ANY(codes)` lets the
 * index on (org_id, stage) range over the matching deals and answer their totals from the index
 * alone, where a contains-condition reads every deal of the organization. The codes are read first,
 * as values, so the planner sees how few they are.
 */
async function liveConditions(db: Db, query: DealQuery, memo: Memo = uncached): Promise<RawBuilder<boolean>[]> {
  const stage = query.stage
  if (!stage) return query.conditions
  const codes = await memo('codes', async () => ({ value: (await sql<{ stage: string }>`SELECT DISTINCT t.stage FROM deal_totals t WHERE t.org_id = ${stage.orgId} AND strpos(t.stage, ${stage.text}) > 0`.execute(db)).rows.map((r) => r.stage) }))
  return [...query.conditions, sql<boolean>`o.stage = ANY(${codes}::text[])`]
}

/**
 * What a list keeps of its filtered set between requests (stamped-cache.ts): a part (`codes`,
 * `totals`) of the set the caller's key names, loaded by `load` when not kept. A value holding for
 * some instants only (a stalled count) says which.
 */
export type Memo = <T>(part: string, load: () => Promise<Timed<T>>) => Promise<T>
const uncached: Memo = async (_part, load) => (await load()).value

function dealConditions(viewer: Viewer, filter: DealFilter, now: Date): RawBuilder<boolean>[] {
  const conditions: (RawBuilder<boolean> | undefined)[] = [sql`o.org_id = ${viewer.orgId}`, sql`NOT o.is_deleted`]
  conditions.push(visibleSql('Opportunity', viewer, 'o'))
  for (const text of [filter.name, filter.search]) if (text) conditions.push(sql`o.name ILIKE ${containsPattern(text)}`)
  // Case-sensitive contains (§4.3): `stage=CLOSED` matches CLOSED_WON and CLOSED_LOST, `stage=closed` neither.
  if (filter.stage) conditions.push(sql`strpos(o.stage, ${filter.stage}) > 0`)
  if (filter.leadSource) conditions.push(sql`strpos(o.lead_source, ${filter.leadSource}) > 0`)
  if (filter.account) conditions.push(filter.account.length ? sql`o.account = ANY(${filter.account}::uuid[])` : NOTHING)
  if (filter.pipeline) conditions.push(filter.pipeline.length ? sql`o.pipeline_id = ANY(${filter.pipeline}::uuid[])` : NOTHING)
  if (filter.tags) conditions.push(anyOf('o.tags', filter.tags))
  if (filter.assignedTo) conditions.push(anyOf('o.assigned_to', filter.assignedTo))
  conditions.push(
    bound(sql`o.created_at`, '>=', filter.createdFrom, isIsoDate, 'timestamptz'),
    bound(sql`o.created_at`, '<', filter.createdTo && nextDay(filter.createdTo), isIsoDate, 'timestamptz'),
    bound(sql`o.closed_on`, '>=', filter.closedFrom, isIsoDate, 'date'),
    bound(sql`o.closed_on`, '<=', filter.closedTo, isIsoDate, 'date'),
    bound(sql`o.amount`, '>=', filter.amountFrom, isDecimal, 'numeric'),
    bound(sql`o.amount`, '<=', filter.amountTo, isDecimal, 'numeric'),
  )
  if (filter.open) conditions.push(sql`o.stage_kind = 'open'`)
  if (filter.rotten) conditions.push(stalled(now))
  if (filter.customFields === null) conditions.push(NOTHING)
  else if (filter.customFields) conditions.push(sql`o.custom_fields @> ${JSON.stringify(filter.customFields)}::jsonb`)
  return conditions.filter((c): c is RawBuilder<boolean> => c !== undefined)
}

const where = (conditions: RawBuilder<boolean>[]) => sql.join(conditions, sql` AND `)
/** The deals read model, or a table shaped like it (the board as of an instant reads one of its own). */
const dealsFrom = (table = 'opportunities') => sql`${sql.table(table)} o LEFT JOIN pipeline_stages s ON s.id = o.stage_id`
/** What every deal read adds to the row: closed_on as a plain date, and its stage's label and rotting thresholds. */
const STAGE_COLUMNS = sql`o.closed_on::text AS closed_on, s.label AS stage_label, s.expected_days, s.warning_days`
const COLUMNS = sql`o.*, ${STAGE_COLUMNS}`

/** What a board card shows (http/opportunities/opportunity-views.ts): a board reads up to 600 rows, so only these columns (a third of the row's width to fetch and parse). */
const CARD_DEAL_COLUMNS = ['id', 'name', 'pipeline_id', 'stage', 'stage_id', 'stage_kind', 'amount', 'currency', 'probability', 'kanban_order', 'account', 'assigned_to', 'tags', 'stage_changed_at', 'created_by', 'created_at', 'updated_at'] as const
export type CardRow = Pick<OpportunityView, (typeof CARD_DEAL_COLUMNS)[number] | 'closed_on' | 'stage_label' | 'expected_days' | 'warning_days'>
const CARD_COLUMNS = sql`${sql.join(CARD_DEAL_COLUMNS.map((column) => sql.ref(`o.${column}`)))}, ${STAGE_COLUMNS}`

/** The rollup rows of the query's organization (and pipelines, and open stages), by stage and currency. */
function rollupRows(rollup: Rollup) {
  const open = rollup.openOnly ? sql`AND t.stage_kind = 'open'` : sql``
  return rollup.pipelines
    ? sql`(SELECT t.* FROM deal_totals t JOIN deal_stage_rotting r ON r.stage_id = t.stage_id WHERE t.org_id = ${rollup.orgId} AND r.pipeline_id = ANY(${rollup.pipelines}::uuid[]) ${open})`
    : sql`(SELECT t.* FROM deal_totals t WHERE t.org_id = ${rollup.orgId} ${open})`
}

export type Totals = {
  count: number
  amount_sum: string | null
  weighted_sum: string | null
  by_currency: { currency: string; amount_sum: string; weighted_sum: string }[]
  stalled_count: number
}

type CurrencyRow = { currency: string; n: string; priced: string; amount_sum: string | null; weighted_sum: string | null; stalled?: string; next_stall?: Date | null }

/**
 * Per-currency sums: from the rollups, or by one scan of the filtered deals (a deal with no currency
 * counts in the default), which also counts the stalled ones so the set is read once, and finds
 * the next instant one turns red (until which the count holds).
 */
function currencyRows(db: Db, query: DealQuery, conditions: RawBuilder<boolean>[], defaultCurrency: string) {
  if (query.rollup) {
    return sql<CurrencyRow>`SELECT coalesce(nullif(t.currency, ''), ${defaultCurrency}) AS currency, sum(t.n) AS n, sum(t.priced) AS priced, round(sum(t.amount_sum), 2)::text AS amount_sum, round(sum(t.weighted_sum), 2)::text AS weighted_sum
      FROM ${rollupRows(query.rollup)} t GROUP BY 1 HAVING sum(t.n) > 0 ORDER BY 1`.execute(db)
  }
  return sql<CurrencyRow>`SELECT coalesce(o.currency, ${defaultCurrency}) AS currency, count(*) AS n, count(o.amount) AS priced, round(sum(o.amount), 2)::text AS amount_sum, round(sum(o.amount * coalesce(o.probability, 0) / 100), 2)::text AS weighted_sum,
      count(*) FILTER (WHERE ${stalled(query.now)}) AS stalled, min(o.stalls_at) FILTER (WHERE o.stalls_at > ${query.now}::timestamptz) AS next_stall
    FROM opportunities o WHERE ${where(conditions)} GROUP BY 1 ORDER BY 1`.execute(db)
}

/**
 * Stalled deals of the whole organization (or its pipelines), for the rollup path: the stall-day
 * buckets before today (UTC) plus an index range over the deals turning red today up to `now`.
 * The same with open=true: only a deal in an open stage has a stalls_at (opportunity-rollups.ts). With the
 * next instant a deal turns red.
 */
async function stalledFromRollups(db: Db, rollup: Rollup, now: Date): Promise<{ n: number; next: Date | null }> {
  const { orgId, pipelines } = rollup
  const today = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()))
  const inPipelines = (column: RawBuilder<unknown>) => (pipelines ? sql`AND ${column} = ANY(${pipelines}::uuid[])` : sql``)
  const live = sql`o.org_id = ${orgId} AND NOT o.is_deleted ${inPipelines(sql`o.pipeline_id`)}`
  const { rows } = await sql<{ n: string; next: Date | null }>`SELECT
      (SELECT coalesce(sum(d.n), 0) FROM deal_stall_days d WHERE d.org_id = ${orgId} ${inPipelines(sql`d.pipeline_id`)} AND d.day < ${today.toISOString().slice(0, 10)}::date)
    + (SELECT count(*) FROM opportunities o WHERE ${live} AND o.stalls_at >= ${today}::timestamptz AND ${stalled(now)}) AS n,
      (SELECT min(o.stalls_at) FROM opportunities o WHERE ${live} AND o.stalls_at > ${now}::timestamptz) AS next`.execute(db)
  return { n: Number(rows[0]!.n), next: rows[0]!.next }
}

// Nothing priced sums to "0" (where-the-spec-is-silent.md), not "0.00".
const money = (sum: string | null, priced: string) => (Number(priced) > 0 && sum !== null ? sum : '0')

/**
 * §2.3 totals over the whole filtered set, computed and rounded to cents in SQL numeric: one entry
 * per currency by code; the overall sums only when one currency is present (null otherwise). The
 * stalled count holds from `now` until the next deal of the set turns red.
 */
async function totalsOf(db: Db, query: DealQuery, conditions: RawBuilder<boolean>[], defaultCurrency: string): Promise<Timed<Totals>> {
  const [{ rows: currencies }, rolledUpStalled] = await Promise.all([currencyRows(db, query, conditions, defaultCurrency), query.rollup ? stalledFromRollups(db, query.rollup, query.now) : undefined])
  const byCurrency = currencies.map((r) => ({ currency: r.currency, amount_sum: money(r.amount_sum, r.priced), weighted_sum: money(r.weighted_sum, r.priced) }))
  const single = byCurrency.length <= 1
  const nextStalls = rolledUpStalled ? [rolledUpStalled.next] : currencies.map((r) => r.next_stall)
  const totals = {
    count: currencies.reduce((n, r) => n + Number(r.n), 0),
    amount_sum: single ? (byCurrency[0]?.amount_sum ?? '0') : null,
    weighted_sum: single ? (byCurrency[0]?.weighted_sum ?? '0') : null,
    by_currency: byCurrency,
    stalled_count: rolledUpStalled?.n ?? currencies.reduce((n, r) => n + Number(r.stalled ?? 0), 0),
  }
  return { value: totals, from: query.now.getTime(), until: Math.min(...nextStalls.map((at) => at?.getTime() ?? Infinity)) }
}

/**
 * One page of the filtered deals, newest first, with the totals of the whole filtered set (whose
 * count is the set's count). `memo` keeps the set's stage codes and totals between requests; with
 * rotten=true the set itself changes with the clock, so nothing of it is kept.
 */
export async function listDeals(db: Db, query: DealQuery, page: { limit: number; offset: number }, defaultCurrency: string, memo: Memo = uncached): Promise<{ count: number; rows: OpportunityView[]; totals: Totals }> {
  const kept = query.clocked ? uncached : memo
  const conditions = await liveConditions(db, query, kept)
  const [rows, totals] = await Promise.all([
    sql<OpportunityView>`SELECT ${COLUMNS} FROM ${dealsFrom()} WHERE ${where(conditions)} ORDER BY o.created_at DESC, o.id LIMIT ${page.limit} OFFSET ${page.offset}`.execute(db),
    kept('totals', () => totalsOf(db, query, conditions, defaultCurrency)),
  ])
  return { count: totals.count, rows: rows.rows, totals }
}

/**
 * The board's cards: at most `perColumn` per stage (an index walk per column), by kanban order, and
 * every column's full count. Over another `table` (the board as of an instant), by the query's
 * conditions alone: the live read model's rollups do not describe it. The cards are selected by
 * `shape` from the limited rows `c`: as rows by default, or as what it makes of them (card-json.ts:
 * one row of JSON text per column).
 */
export async function boardDeals<Row = CardRow>(db: Db, query: DealQuery, stageIds: readonly string[], perColumn: number, table = 'opportunities', shape: (limited: RawBuilder<unknown>) => RawBuilder<unknown> = asRows): Promise<{ rows: Row[]; counts: Map<string, number> }> {
  const conditions = table === 'opportunities' ? await liveConditions(db, query) : query.conditions
  const counts = query.rollup
    ? sql<{ stage_id: string; n: string }>`SELECT t.stage_id, sum(t.n) AS n FROM ${rollupRows(query.rollup)} t GROUP BY t.stage_id`
    : sql<{ stage_id: string; n: string }>`SELECT o.stage_id, count(*) AS n FROM ${sql.table(table)} o WHERE ${where(conditions)} GROUP BY o.stage_id`
  const limited = sql`unnest(${[...stageIds]}::uuid[]) AS column_stage(id) CROSS JOIN LATERAL (
      SELECT ${CARD_COLUMNS} FROM ${dealsFrom(table)} WHERE o.stage_id = column_stage.id AND ${where(conditions)} ORDER BY o.kanban_order, o.id LIMIT ${perColumn}) c`
  const [cards, columnCounts] = await Promise.all([sql<Row>`${shape(limited)}`.execute(db), counts.execute(db)])
  return { rows: cards.rows, counts: new Map(columnCounts.rows.map((r) => [r.stage_id, Number(r.n)])) }
}

const asRows = (limited: RawBuilder<unknown>) => sql`SELECT c.* FROM ${limited} ORDER BY c.kanban_order, c.id`
