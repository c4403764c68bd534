import { sql } from 'kysely'
import type { Transaction } from 'kysely'
import type { LineItem } from '../../commands/opportunity/line-items.ts'
import { opportunityStreams } from '../../commands/opportunity/opportunity.ts'
import { evolvePipeline, initialPipelineState, pipelineStreams } from '../../commands/pipeline/pipeline.ts'
import type { PipelineEvent, PipelineState } from '../../commands/pipeline/pipeline.ts'
import type { Database, Db } from '../../db/database.ts'
import { ValidationError } from '../../errors.ts'
import type { EventStore, RecordedEvent } from '../../eventstore/event-store.ts'
import { dealAsOf, opportunityViewAsOf } from '../../projections/opportunity/opportunity-history.ts'
import { atOf } from '../../projections/kernel/stream-history.ts'
import type { OpportunityView } from '../../projections/opportunity/opportunities.ts'

/**
 * The deal board as it stood at an instant (issue 17): every deal of the organization that existed
 * then is folded from its own stream up to that instant, and the board's query (the same filters,
 * visibility, columns and card cap as today's board) runs over those rows in a temporary table.
 * The work is bounded by an event budget counted as the streams are read: past it the request is
 * refused, never answered with part of the board.
 */

type AsOfDeps = { db: Db; store: EventStore }

/** Streams read at once: enough to hide the round trips, few enough to leave the pool to others. */
const PARALLEL_READS = 8

const overBudget = (budget: number) =>
  new ValidationError({ as_of: [`The board as of this instant needs more than ${budget} events replayed (AS_OF_EVENT_BUDGET); narrow the pipeline's history or ask for a later instant of a smaller organization.`] })

/** The pipeline folded up to `at`: its columns then (undefined when it did not exist yet or was deleted by then). */
export async function pipelineAsOf(store: EventStore, pipelineId: string, at: Date): Promise<PipelineState | undefined> {
  let state = initialPipelineState()
  for (const recorded of await store.readStream(pipelineStreams.stream(pipelineId))) {
    if (Date.parse(atOf(recorded)) > at.getTime()) break
    state = evolvePipeline(state, { type: recorded.type, data: recorded.data } as PipelineEvent)
  }
  return state.exists && !state.deleted ? state : undefined
}

export type DealsAsOf = { rows: OpportunityView[]; lineItems: Map<string, LineItem[]> }

/**
 * The organization's deals as they stood at `at` (deleted ones included while they lived), with
 * their line items then. Refuses with 400 as soon as the events read pass `budget`.
 */
export async function dealsAsOf(deps: AsOfDeps, orgId: string, at: Date, budget: number): Promise<DealsAsOf> {
  // Deals created by then, live or deleted since: the read model keeps deleted rows (soft delete).
  const { rows: candidates } = await sql<{ id: string; revision: string }>`SELECT id, revision FROM opportunities WHERE org_id = ${orgId} AND created_at <= ${at}::timestamptz ORDER BY id`.execute(deps.db)
  // Each stream holds at least revision + 1 events: refuse up front what cannot fit, before reading.
  if (candidates.reduce((n, c) => n + Number(c.revision) + 1, 0) > budget) throw overBudget(budget)
  let read = 0
  const streams = new Map<string, RecordedEvent[]>()
  let next = 0
  const reader = async () => {
    while (next < candidates.length) {
      const { id } = candidates[next++]!
      const events = await deps.store.readStream(opportunityStreams.stream(id))
      read += events.length
      if (read > budget) throw overBudget(budget)
      streams.set(id, events)
    }
  }
  await Promise.all(Array.from({ length: Math.min(PARALLEL_READS, candidates.length) }, reader))
  const result: DealsAsOf = { rows: [], lineItems: new Map() }
  for (const { id } of candidates) {
    const then = dealAsOf(streams.get(id)!, at)
    if (!then) continue
    result.rows.push(opportunityViewAsOf(id, then, undefined))
    result.lineItems.set(id, then.state.lineItems)
  }
  return result
}

/**
 * Runs `read` over the rows in a temporary table shaped like `opportunities`, dropped when the
 * transaction ends, so the board's own SQL (filters, visibility, stage joins) reads the past.
 * `stalls_at` is derived from the stage's current thresholds, as the detail's `as_of` shows them.
 */
export async function withDealsTable<T>(db: Db, rows: readonly OpportunityView[], read: (trx: Transaction<Database>, table: string) => Promise<T>): Promise<T> {
  return db.transaction().execute(async (trx) => {
    await sql`CREATE TEMP TABLE deals_as_of (LIKE opportunities INCLUDING DEFAULTS) ON COMMIT DROP`.execute(trx)
    await sql`INSERT INTO deals_as_of SELECT * FROM jsonb_populate_recordset(NULL::deals_as_of, ${JSON.stringify(rows)}::jsonb)`.execute(trx)
    await sql`UPDATE deals_as_of o SET stalls_at = o.stage_changed_at + make_interval(days => ceil(s.expected_days * 1.5)::int)
      FROM pipeline_stages s WHERE s.id = o.stage_id AND o.stage_kind = 'open' AND s.expected_days IS NOT NULL`.execute(trx)
    return read(trx, 'deals_as_of')
  })
}
