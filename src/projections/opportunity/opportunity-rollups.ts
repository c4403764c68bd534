import { sql } from 'kysely'
import type { PipelineEvent } from '../../commands/pipeline/pipeline.ts'
import type { Db } from '../../db/database.ts'

/**
 * What the deals read model keeps beside its rows so the default list, totals and board need no
 * scan of an organization's deals (issue 6 performance):
 * - `deal_stage_rotting`: each stage's expected_days, copied from the pipeline events by this same
 *   projector (a read model never reads another one's tables, so each rebuilds alone), from which
 *   every deal row carries `stalls_at`, the instant it turns red (§3.2): rotten=true and
 *   stalled_count are then `stalls_at <= now`, an index range.
 * - `deal_totals`: count, amount and weighted sums per (organization, stage, currency), moved by
 *   each deal change as the difference between the deal's contribution before and after it, so
 *   applying an event twice moves nothing the second time. The stage is keyed as the deal rows
 *   hold it (id, code and kind), so the rollups answer open=true exactly, and name every stage
 *   code the organization's deals hold (what a stage filter can match, queries.ts).
 * - `deal_stall_days`: how many deals turn red on each (UTC) day, per organization and pipeline,
 *   moved the same way. stalled_count at `now` is then the buckets of the days before today plus
 *   an index range over today's deals, however many deals have ever stalled.
 */
export async function createRollupTables(db: Db): Promise<void> {
  await sql`CREATE TABLE deal_stage_rotting (stage_id uuid PRIMARY KEY, pipeline_id uuid NOT NULL, expected_days integer)`.execute(db)
  await sql`CREATE INDEX deal_stage_rotting_pipeline ON deal_stage_rotting (pipeline_id)`.execute(db)
  // `currency` '' is a deal without one; `priced` counts the deals with an amount (a sum of none is "0").
  await sql`CREATE TABLE deal_totals (org_id uuid NOT NULL, stage_id uuid NOT NULL, stage text NOT NULL, stage_kind text NOT NULL, currency text NOT NULL, n bigint NOT NULL, priced bigint NOT NULL,
    amount_sum numeric NOT NULL, weighted_sum numeric NOT NULL, PRIMARY KEY (org_id, stage_id, stage, stage_kind, currency))`.execute(db)
  await sql`CREATE TABLE deal_stall_days (org_id uuid NOT NULL, pipeline_id uuid NOT NULL, day date NOT NULL, n bigint NOT NULL, PRIMARY KEY (org_id, pipeline_id, day))`.execute(db)
  await sql`CREATE INDEX opportunities_stalls_at ON opportunities (org_id, stalls_at) WHERE NOT is_deleted AND stalls_at IS NOT NULL`.execute(db)
}

/** The UTC day a deal turns red, as SQL over its `stalls_at`. */
const stallDay = (stallsAt: ReturnType<typeof sql>) => sql`(${stallsAt} AT TIME ZONE 'UTC')::date`

const ADD_STALL_DAYS = sql`ON CONFLICT (org_id, pipeline_id, day) DO UPDATE SET n = deal_stall_days.n + EXCLUDED.n`

/** Moves the stall-day buckets of the live, stalling deals matched by `where` (over `opportunities o2`) by `sign`. */
const moveStallDays = (where: ReturnType<typeof sql>, sign: 1 | -1) =>
  sql`INSERT INTO deal_stall_days SELECT o2.org_id, o2.pipeline_id, ${stallDay(sql`o2.stalls_at`)}, count(*) * ${sign} FROM opportunities o2
    WHERE ${where} AND NOT o2.is_deleted AND o2.stalls_at IS NOT NULL GROUP BY 1, 2, 3 ${ADD_STALL_DAYS}`

/** `stalls_at` of the deals matched by `where`, from their stage's expected_days (null: never rots, or not open). */
export const setStallsAt = (where: ReturnType<typeof sql>) =>
  sql`UPDATE opportunities o SET stalls_at = CASE WHEN o.stage_kind = 'open' AND r.expected_days IS NOT NULL THEN o.stage_changed_at + make_interval(days => ceil(r.expected_days * 1.5)::int) END
    FROM (SELECT o2.id, r2.expected_days FROM opportunities o2 LEFT JOIN deal_stage_rotting r2 ON r2.stage_id = o2.stage_id WHERE ${where}) r WHERE o.id = r.id`

export const refreshStallsAt = (db: Db, dealId: string) => setStallsAt(sql`o2.id = ${dealId}`).execute(db)

/** Keeps `deal_stage_rotting` (and the stalls_at of the stage's deals) in step with a pipeline's events. */
export async function applyPipelineEvent(db: Db, pipelineId: string, event: PipelineEvent): Promise<void> {
  const upsert = (stageId: string, expectedDays: number | null) =>
    sql`INSERT INTO deal_stage_rotting VALUES (${stageId}, ${pipelineId}, ${expectedDays}) ON CONFLICT (stage_id) DO UPDATE SET expected_days = EXCLUDED.expected_days`.execute(db)
  switch (event.type) {
    case 'PipelineCreated':
      for (const stage of event.data.stages) await upsert(stage.id, stage.expected_days)
      return
    case 'StageAdded':
      await upsert(event.data.stage.id, event.data.stage.expected_days)
      return
    case 'StageUpdated':
      if (event.data.expected_days === undefined) return
      await sql`UPDATE deal_stage_rotting SET expected_days = ${event.data.expected_days} WHERE stage_id = ${event.data.stage_id}`.execute(db)
      {
        // Every deal of the stage may turn red on another day: its buckets move out and back in.
        const inStage = sql`o2.stage_id = ${event.data.stage_id} AND NOT o2.is_deleted`
        await moveStallDays(inStage, -1).execute(db)
        await setStallsAt(inStage).execute(db)
        await moveStallDays(inStage, 1).execute(db)
      }
      return
    case 'StageRemoved':
      await sql`DELETE FROM deal_stage_rotting WHERE stage_id = ${event.data.stage_id}`.execute(db)
      return
    case 'PipelineDeleted':
      await sql`DELETE FROM deal_stage_rotting WHERE pipeline_id = ${pipelineId}`.execute(db)
      return
    default:
      return
  }
}

type Contribution = { org_id: string; stage_id: string; stage: string; stage_kind: string; pipeline_id: string; currency: string; amount: string | null; probability: number | null; stall_day: string | null }

/** A live deal's contribution to the rollups, as SQL over `opportunities` (a row, or none when deleted). */
const contributionQuery = (dealId: string) => sql`SELECT org_id, stage_id, stage, stage_kind, pipeline_id, coalesce(currency, '') AS currency, amount::text AS amount, probability, ${stallDay(sql`stalls_at`)}::text AS stall_day
  FROM opportunities WHERE id = ${dealId} AND NOT is_deleted`

async function contributionOf(db: Db, dealId: string): Promise<Contribution | undefined> {
  return (await sql<Contribution>`${contributionQuery(dealId)}`.execute(db)).rows[0]
}

const ADD_TOTALS = sql`ON CONFLICT (org_id, stage_id, stage, stage_kind, currency) DO UPDATE SET n = deal_totals.n + EXCLUDED.n, priced = deal_totals.priced + EXCLUDED.priced,
  amount_sum = deal_totals.amount_sum + EXCLUDED.amount_sum, weighted_sum = deal_totals.weighted_sum + EXCLUDED.weighted_sum`

/**
 * Runs a change of one deal's row and moves `deal_totals` and `deal_stall_days` by the difference
 * it made: the contribution before (read first) taken away and the one after added, in ONE
 * statement that reads the row as changed (a move or an edit was six statements besides the
 * change). Contributions under one key are summed first (an upsert may touch a row once per
 * statement); a key whose sums cancel out is left alone.
 */
export async function withTotals(db: Db, dealId: string, change: () => Promise<void>): Promise<void> {
  const before = await contributionOf(db, dealId)
  await change()
  const taken = before
    ? sql`UNION ALL SELECT ${before.org_id}::uuid, ${before.stage_id}::uuid, ${before.stage}, ${before.stage_kind}, ${before.pipeline_id}::uuid, ${before.currency}, ${before.amount}::numeric, ${before.probability}::integer, ${before.stall_day}::date, -1`
    : sql``
  await sql`WITH deltas (org_id, stage_id, stage, stage_kind, pipeline_id, currency, amount, probability, stall_day, sign) AS (
      SELECT org_id, stage_id, stage, stage_kind, pipeline_id, currency, amount::numeric, probability, stall_day::date, 1 FROM (${contributionQuery(dealId)}) after
      ${taken}),
    summed AS (
      SELECT org_id, stage_id, stage, stage_kind, currency, sum(sign) AS n, sum(CASE WHEN amount IS NULL THEN 0 ELSE sign END) AS priced,
        sum(coalesce(amount, 0) * sign) AS amount_sum, sum(coalesce(amount, 0) * sign * coalesce(probability, 0) / 100) AS weighted_sum
      FROM deltas GROUP BY 1, 2, 3, 4, 5),
    totals AS (
      INSERT INTO deal_totals
      SELECT * FROM summed WHERE (n, priced, amount_sum, weighted_sum) <> (0, 0, 0, 0)
      ${ADD_TOTALS})
    INSERT INTO deal_stall_days
    SELECT org_id, pipeline_id, stall_day, sum(sign) FROM deltas WHERE stall_day IS NOT NULL GROUP BY 1, 2, 3 HAVING sum(sign) <> 0
    ${ADD_STALL_DAYS}`.execute(db)
}

const DEAL_COLUMNS = [
  'id', 'org_id', 'name', 'account', 'pipeline_id', 'stage', 'stage_id', 'stage_kind', 'opportunity_type', 'currency', 'amount', 'probability', 'closed_on', 'lead_source',
  'description', 'is_active', 'closed_by', 'created_by', 'kanban_order', 'stage_changed_at', 'revision', 'is_deleted', 'created_at', 'updated_at', 'contacts', 'tags', 'teams', 'assigned_to',
]

/**
 * A run of created deals in one statement: the rows, with stalls_at from their stage, and the
 * totals and stall days of the rows actually inserted (a replayed creation inserts nothing, so adds nothing).
 * `rows` carry the columns above as JSON; jsonb_populate_recordset types them by the table.
 */
export async function insertCreatedDeals(db: Db, rows: readonly Record<string, unknown>[]): Promise<void> {
  const columns = sql.join(DEAL_COLUMNS.map((c) => sql.ref(c)))
  const values = sql.join(DEAL_COLUMNS.map((c) => sql.ref(`i.${c}`)))
  await sql`
    WITH input AS (SELECT * FROM jsonb_populate_recordset(NULL::opportunities, ${JSON.stringify(rows)}::jsonb)),
    inserted AS (
      INSERT INTO opportunities (${columns}, custom_fields, stalls_at)
      SELECT ${values}, coalesce(i.custom_fields, '{}'), CASE WHEN i.stage_kind = 'open' AND r.expected_days IS NOT NULL THEN i.stage_changed_at + make_interval(days => ceil(r.expected_days * 1.5)::int) END
      FROM input i LEFT JOIN deal_stage_rotting r ON r.stage_id = i.stage_id
      ON CONFLICT (id) DO NOTHING
      RETURNING org_id, stage_id, stage, stage_kind, pipeline_id, coalesce(currency, '') AS currency, amount, probability, stalls_at),
    totals AS (
      INSERT INTO deal_totals
      SELECT org_id, stage_id, stage, stage_kind, currency, count(*), count(amount), coalesce(sum(amount), 0), coalesce(sum(amount * coalesce(probability, 0) / 100), 0) FROM inserted GROUP BY 1, 2, 3, 4, 5
      ${ADD_TOTALS})
    INSERT INTO deal_stall_days
    SELECT org_id, pipeline_id, ${stallDay(sql`stalls_at`)}, count(*) FROM inserted WHERE stalls_at IS NOT NULL GROUP BY 1, 2, 3
    ${ADD_STALL_DAYS}`.execute(db)
}

/**
 * One deal's contribution taken away (`sign` -1) or added (1) by the `step`-th change of a page;
 * its stall day is either known (`stall_day`) or, after a stage change, that of `stall_at` in the
 * stage `stall_stage_id` of kind `stall_kind` (computed here, as setStallsAt computes stalls_at).
 */
export type RollupDelta = {
  step: number
  sign: 1 | -1
  org_id: string
  stage_id: string
  stage: string
  stage_kind: string
  pipeline_id: string
  currency: string
  amount: string | null
  probability: number | null
  stall_day: string | null
  stall_stage_id: string | null
  stall_kind: string | null
  stall_at: string | null
}

/**
 * The rollup moves of a page of changes in one statement, leaving the rows `withTotals` leaves
 * change by change: each change's deltas are summed per key and a key whose sums cancel out within
 * that change is dropped (as there), then the changes' sums are added up per key, so a key touched
 * by one change keeps its row even when a later change of the page takes it back to zero.
 */
export async function addRollupDeltas(db: Db, deltas: readonly RollupDelta[]): Promise<void> {
  if (!deltas.length) return
  await sql`WITH deltas AS (
      SELECT d.step, d.sign, d.org_id, d.stage_id, d.stage, d.stage_kind, d.pipeline_id, d.currency, d.amount::numeric(15, 2) AS amount, d.probability,
        CASE WHEN d.stall_at IS NULL THEN d.stall_day
          WHEN d.stall_kind = 'open' AND r.expected_days IS NOT NULL THEN ${stallDay(sql`(d.stall_at + make_interval(days => ceil(r.expected_days * 1.5)::int))`)} END AS stall_day
      FROM jsonb_to_recordset(${JSON.stringify(deltas)}::jsonb) AS d (step integer, sign integer, org_id uuid, stage_id uuid, stage text, stage_kind text, pipeline_id uuid, currency text,
        amount text, probability integer, stall_day date, stall_stage_id uuid, stall_kind text, stall_at timestamptz)
      LEFT JOIN deal_stage_rotting r ON r.stage_id = d.stall_stage_id),
    per_change AS (
      SELECT step, org_id, stage_id, stage, stage_kind, currency, sum(sign) AS n, sum(CASE WHEN amount IS NULL THEN 0 ELSE sign END) AS priced,
        sum(coalesce(amount, 0) * sign) AS amount_sum, sum(coalesce(amount, 0) * sign * coalesce(probability, 0) / 100) AS weighted_sum
      FROM deltas GROUP BY 1, 2, 3, 4, 5, 6),
    totals AS (
      INSERT INTO deal_totals
      SELECT org_id, stage_id, stage, stage_kind, currency, sum(n), sum(priced), sum(amount_sum), sum(weighted_sum) FROM per_change
      WHERE (n, priced, amount_sum, weighted_sum) <> (0, 0, 0, 0) GROUP BY 1, 2, 3, 4, 5
      ${ADD_TOTALS})
    INSERT INTO deal_stall_days
    SELECT org_id, pipeline_id, stall_day, sum(n) FROM (
      SELECT step, org_id, pipeline_id, stall_day, sum(sign) AS n FROM deltas WHERE stall_day IS NOT NULL GROUP BY 1, 2, 3, 4 HAVING sum(sign) <> 0) per_change
    GROUP BY 1, 2, 3
    ${ADD_STALL_DAYS}`.execute(db)
}
