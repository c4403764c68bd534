import { sql } from 'kysely'
import type { RawBuilder } from 'kysely'
import type { Viewer } from './queries.ts'
import { visibleSql } from '../../visibility/policy.ts'
import type { StageChangeRow } from './stage-changes.ts'
import type { Db } from '../../db/database.ts'

/**
 * Reads of the stage-change ledger (stage-changes.ts): the feed, page by page or by keyset for a
 * stream of any size, and the per-stage analytics, in SQL. Visibility is the deal list's, as of
 * now: the deals read model (`opportunities`) is joined by deal id, so a deleted deal's rows are
 * left out and a non-admin sees only the rows of deals they created or are assigned to.
 * Malformed filter values match nothing; blank ones are no filter.
 */
export type StageChangeFilter = { pipeline?: string; from?: string; to?: string; actor?: string; atFrom?: string; atTo?: string }

const NOTHING = sql<boolean>`false`
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const DATE = /^\d{4}-\d{2}-\d{2}$/
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i
const DAY_MS = 86_400_000

/** A date (a whole UTC day) or an ISO instant as [first instant, bound is inclusive of the day's end]; undefined when malformed. */
function instantOf(value: string, end: boolean): { at: string; op: '>=' | '<=' | '<' } | undefined {
  if (DATE.test(value)) {
    const start = Date.parse(`${value}T00:00:00Z`)
    if (Number.isNaN(start) || new Date(start).toISOString().slice(0, 10) !== value) return undefined
    return end ? { at: new Date(start + DAY_MS).toISOString(), op: '<' } : { at: new Date(start).toISOString(), op: '>=' }
  }
  const parsed = INSTANT.test(value) ? Date.parse(value) : Number.NaN
  if (Number.isNaN(parsed)) return undefined
  return { at: new Date(parsed).toISOString(), op: end ? '<=' : '>=' }
}

const given = (value: string | undefined) => (value === undefined || value.trim() === '' ? undefined : value.trim())

/** `column` within [from, to]: `to` as a date includes that whole (UTC) day. */
export function atRange(column: RawBuilder<unknown>, from: string | undefined, to: string | undefined): RawBuilder<boolean>[] {
  return ([[given(from), false], [given(to), true]] as const).flatMap(([value, end]) => {
    if (value === undefined) return []
    const bound = instantOf(value, end)
    return [bound ? sql<boolean>`${column} ${sql.raw(bound.op)} ${bound.at}::timestamptz` : NOTHING]
  })
}

const uuidIs = (column: RawBuilder<unknown>, value: string) => (UUID.test(value) ? sql<boolean>`${column} = ${value.toLowerCase()}::uuid` : NOTHING)

/** The ledger rows of the organization's live deals the viewer may see (`c` the ledger, `o` the deal). */
function visible(viewer: Viewer): RawBuilder<boolean>[] {
  const conditions = [sql<boolean>`c.org_id = ${viewer.orgId}`, sql<boolean>`o.org_id = ${viewer.orgId}`, sql<boolean>`NOT o.is_deleted`]
  conditions.push(visibleSql('Opportunity', viewer, 'o'))
  return conditions
}

function feedConditions(viewer: Viewer, filter: StageChangeFilter): RawBuilder<boolean>[] {
  const conditions = visible(viewer)
  const pipeline = given(filter.pipeline)
  if (pipeline !== undefined) conditions.push(UUID.test(pipeline) ? sql<boolean>`(c.pipeline_id = ${pipeline.toLowerCase()}::uuid OR c.from_pipeline_id = ${pipeline.toLowerCase()}::uuid)` : NOTHING)
  const from = given(filter.from)
  if (from !== undefined) conditions.push(sql<boolean>`c.from_stage = ${from}`)
  const to = given(filter.to)
  if (to !== undefined) conditions.push(sql<boolean>`c.to_stage = ${to}`)
  const actor = given(filter.actor)
  if (actor !== undefined) conditions.push(uuidIs(sql`c.actor_id`, actor))
  conditions.push(...atRange(sql`c.at`, filter.atFrom, filter.atTo))
  return conditions
}

const where = (conditions: RawBuilder<boolean>[]) => sql.join(conditions, sql` AND `)
const FROM = sql`stage_changes c JOIN opportunities o ON o.id = c.deal_id`
const COLUMNS = sql`c.event_id, c.position_commit::text AS position_commit, c.position_prepare::text AS position_prepare, c.org_id, c.deal_id, c.event_type, c.deal_name, c.pipeline_id,
  c.from_pipeline_id, c.from_stage, c.from_stage_id, c.from_kind, c.to_stage, c.to_stage_id, c.to_kind, c.amount::text AS amount, c.currency, c.actor_id, c.at, c.days_in_previous_stage`
const ORDER = sql`ORDER BY c.position_commit, c.position_prepare`

/** One page of the feed, oldest first (log order), and the count of the whole filtered set. */
export async function listStageChanges(db: Db, viewer: Viewer, filter: StageChangeFilter, page: { limit: number; offset: number }): Promise<{ count: number; rows: StageChangeRow[] }> {
  const conditions = where(feedConditions(viewer, filter))
  const [rows, count] = await Promise.all([
    sql<StageChangeRow>`SELECT ${COLUMNS} FROM ${FROM} WHERE ${conditions} ${ORDER} LIMIT ${page.limit} OFFSET ${page.offset}`.execute(db),
    sql<{ n: string }>`SELECT count(*) AS n FROM ${FROM} WHERE ${conditions}`.execute(db),
  ])
  return { count: Number(count.rows[0]!.n), rows: rows.rows }
}

/**
 * The whole filtered feed in log order, `pageSize` rows per query, each page after the last one's
 * position (a keyset, not an offset), so memory stays flat and late pages cost what early ones do.
 */
export async function* stageChangePages(db: Db, viewer: Viewer, filter: StageChangeFilter, pageSize = 1000): AsyncGenerator<StageChangeRow[]> {
  const conditions = feedConditions(viewer, filter)
  let after: { commit: string; prepare: string } | null = null
  for (;;) {
    const keyset: RawBuilder<boolean>[] = after ? [sql<boolean>`(c.position_commit, c.position_prepare) > (${after.commit}::bigint, ${after.prepare}::bigint)`] : []
    const { rows } = await sql<StageChangeRow>`SELECT ${COLUMNS} FROM ${FROM} WHERE ${where([...conditions, ...keyset])} ${ORDER} LIMIT ${pageSize}`.execute(db)
    if (rows.length) yield rows
    if (rows.length < pageSize) return
    const last = rows.at(-1)!
    after = { commit: last.position_commit, prepare: last.position_prepare }
  }
}

/** Per stage of a pipeline; see StageMetrics in http/opportunities/stage-change-schemas.ts for each definition. */
export type StageMetricsRow = {
  stage_id: string
  entered: number
  exited_forward: number
  won: number
  lost: number
  reached_won: number
  completed_stays: number
  median_days: number | null
  p90_days: number | null
}

/**
 * Stays of the viewer's visible deals in the stages of `pipelineId` that began within the range,
 * each ending at the deal's next ledger row (window over the deal's whole ledger, so a stay
 * entered in range is followed past its end). Forward means an open stage of the same pipeline
 * with a higher current position, or any won stage (a lost stage never is). Durations are exact (fractional) days.
 */
export async function stageMetrics(db: Db, viewer: Viewer, pipelineId: string, range: { from?: string; to?: string }): Promise<Map<string, StageMetricsRow>> {
  const { rows } = await sql<Record<keyof StageMetricsRow, string | number | null>>`
    WITH ledger AS (
      SELECT c.deal_id, c.position_commit, c.position_prepare, c.pipeline_id, c.to_stage_id, c.to_kind, c.at,
        lead(c.pipeline_id) OVER deal AS next_pipeline_id, lead(c.to_stage_id) OVER deal AS next_stage_id, lead(c.to_kind) OVER deal AS next_kind, lead(c.at) OVER deal AS exited_at
      FROM ${FROM} WHERE ${where(visible(viewer))}
      WINDOW deal AS (PARTITION BY c.deal_id ORDER BY c.position_commit, c.position_prepare)
    ),
    stays AS (
      SELECT l.*, s.position AS stage_order, n.position AS next_order, extract(epoch FROM l.exited_at - l.at)::double precision / 86400 AS days,
        EXISTS (SELECT 1 FROM ledger w WHERE w.deal_id = l.deal_id AND w.to_kind = 'won' AND (w.position_commit, w.position_prepare) >= (l.position_commit, l.position_prepare)) AS reached_won
      FROM ledger l JOIN pipeline_stages s ON s.id = l.to_stage_id LEFT JOIN pipeline_stages n ON n.id = l.next_stage_id
      WHERE l.pipeline_id = ${pipelineId}::uuid AND s.pipeline_id = ${pipelineId}::uuid ${sql.join(atRange(sql`l.at`, range.from, range.to).map((c) => sql` AND ${c}`), sql``)}
    )
    SELECT to_stage_id AS stage_id,
      count(DISTINCT deal_id) AS entered,
      count(DISTINCT deal_id) FILTER (WHERE next_kind = 'won' OR (next_kind = 'open' AND next_pipeline_id = pipeline_id AND next_order > stage_order)) AS exited_forward,
      count(DISTINCT deal_id) FILTER (WHERE next_kind = 'won') AS won,
      count(DISTINCT deal_id) FILTER (WHERE next_kind = 'lost') AS lost,
      count(DISTINCT deal_id) FILTER (WHERE reached_won) AS reached_won,
      count(days) AS completed_stays,
      percentile_cont(0.5) WITHIN GROUP (ORDER BY days) AS median_days,
      percentile_cont(0.9) WITHIN GROUP (ORDER BY days) AS p90_days
    FROM stays GROUP BY to_stage_id`.execute(db)
  const numberOr = (v: string | number | null) => (v === null ? null : Number(v))
  return new Map(
    rows.map((r) => [
      String(r.stage_id),
      {
        stage_id: String(r.stage_id),
        entered: Number(r.entered),
        exited_forward: Number(r.exited_forward),
        won: Number(r.won),
        lost: Number(r.lost),
        reached_won: Number(r.reached_won),
        completed_stays: Number(r.completed_stays),
        median_days: numberOr(r.median_days),
        p90_days: numberOr(r.p90_days),
      },
    ]),
  )
}
