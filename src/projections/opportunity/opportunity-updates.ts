import { sql } from 'kysely'
import { opportunityStreams } from '../../commands/opportunity/opportunity.ts'
import type { OpportunityEvent } from '../../commands/opportunity/opportunity.ts'
import type { RecordedEvent } from '../../eventstore/event-store.ts'
import { updateRows } from '../../db/insert-rows.ts'
import { addRollupDeltas, setStallsAt } from './opportunity-rollups.ts'
import type { RollupDelta } from './opportunity-rollups.ts'
import { domainEventOf } from '../../events/versions.ts'
import type { Db } from '../../db/database.ts'

/**
 * A page's changes of existing deals (edits, stage changes, positions, deletions: what board
 * moves and PATCHes write) applied in four statements however many there are, instead of four
 * per event (issue 20): the deals' rows as they stand (one read), each deal's final columns (one
 * UPDATE, and one more for stalls_at after stage changes), and the rollups moved by every change's before/after difference (one INSERT, see
 * addRollupDeltas). The changes are folded here, in log order, from the rows read, so the rows
 * left are the ones `apply` leaves one event at a time.
 */
export const DEAL_UPDATES: ReadonlySet<string> = new Set(['OpportunityUpdated', 'OpportunityStageChanged', 'OpportunityPositioned', 'OpportunityDeleted'])

type Update = Extract<OpportunityEvent, { type: 'OpportunityUpdated' | 'OpportunityStageChanged' | 'OpportunityPositioned' | 'OpportunityDeleted' }>

/** What the rollups read of a deal (opportunity-rollups.ts `contributionQuery`), and whether it still counts. */
type Counted = Pick<RollupDelta, 'org_id' | 'stage_id' | 'stage' | 'stage_kind' | 'pipeline_id' | 'currency' | 'amount' | 'probability'> & { is_deleted: boolean }
/** The day a deal turns red: as read, or after a stage change of the page, from that change (the stage's rotting days are joined in SQL). */
type Stall = Pick<RollupDelta, 'stall_day' | 'stall_stage_id' | 'stall_kind' | 'stall_at'>
type Deal = { counted: Counted; stall: Stall; set: Record<string, unknown> }

async function dealsAsTheyStand(db: Db, ids: readonly string[]): Promise<Map<string, Deal>> {
  const { rows } = await sql<Counted & { id: string; stall_day: string | null }>`SELECT id, org_id, stage_id, stage, stage_kind, pipeline_id, coalesce(currency, '') AS currency, amount::text AS amount, probability,
      (stalls_at AT TIME ZONE 'UTC')::date::text AS stall_day, is_deleted
    FROM opportunities WHERE id = ANY(${ids}::uuid[])`.execute(db)
  return new Map(rows.map(({ id, stall_day, ...counted }) => [id, { counted, stall: { stall_day, stall_stage_id: null, stall_kind: null, stall_at: null }, set: {} }]))
}

const ROLLED_UP = new Set(['currency', 'amount', 'probability'])

/** One event on the deal's folded state, as applyRow writes it: the columns it sets, and what the rollups then read. */
function fold(deal: Deal, revision: bigint, event: Update): void {
  const stamp = { revision: revision.toString(), updated_at: new Date(event.data.at).toISOString() }
  switch (event.type) {
    case 'OpportunityUpdated':
      for (const [key, change] of Object.entries(event.data.changes)) {
        deal.set[key] = change.to
        if (ROLLED_UP.has(key)) (deal.counted as Record<string, unknown>)[key] = key === 'currency' ? (change.to ?? '') : change.to
      }
      break
    case 'OpportunityStageChanged': {
      const { to, at } = event.data
      Object.assign(deal.set, to, { stage_changed_at: at })
      Object.assign(deal.counted, to)
      deal.stall = { stall_day: null, stall_stage_id: to.stage_id, stall_kind: to.stage_kind, stall_at: at }
      break
    }
    case 'OpportunityPositioned':
      deal.set.kanban_order = event.data.kanban_order
      break
    case 'OpportunityDeleted':
      deal.set.is_deleted = true
      deal.counted.is_deleted = true
      break
  }
  Object.assign(deal.set, stamp)
}

const contribution = (step: number, sign: 1 | -1, deal: Deal): RollupDelta[] => {
  const { is_deleted, ...counted } = deal.counted
  return is_deleted ? [] : [{ step, sign, ...counted, ...deal.stall }]
}

export async function applyDealUpdates(db: Db, run: readonly RecordedEvent[]): Promise<void> {
  const deals = await dealsAsTheyStand(db, [...new Set(run.map((e) => opportunityStreams.idOf(e.streamName)))])
  const deltas: RollupDelta[] = []
  run.forEach((recorded, step) => {
    const deal = deals.get(opportunityStreams.idOf(recorded.streamName))
    if (!deal) return
    deltas.push(...contribution(step, -1, deal))
    fold(deal, recorded.revision, domainEventOf<Update>(recorded))
    deltas.push(...contribution(step, 1, deal))
  })
  await updateRows(db, 'opportunities', 'id', [...deals].map(([key, deal]) => ({ key, set: deal.set })))
  const staged = [...deals].filter(([, deal]) => deal.stall.stall_at !== null).map(([id]) => id)
  // Only a stage change moves stalls_at, and only it sets the stage and its time: the final row's are the last change's.
  if (staged.length) await setStallsAt(sql`o2.id = ANY(${staged}::uuid[])`).execute(db)
  await addRollupDeltas(db, deltas)
}
