import { sql } from 'kysely'
import { opportunityStreams } from '../../commands/opportunity/opportunity.ts'
import type { OpportunityEvent } from '../../commands/opportunity/opportunity.ts'
import type { RecordedEvent } from '../../eventstore/event-store.ts'
import { applyInRuns } from '../kernel/projector.ts'
import { domainEventOf } from '../../events/versions.ts'
import type { Projector } from '../kernel/projector.ts'
import type { StageChangeDealRow as DealRow, StageChangeRow } from './tables.ts'
import type { Db } from '../../db/database.ts'

export type { StageChangeRow } from './tables.ts'

async function createTables(db: Db): Promise<void> {
  await sql`CREATE TABLE stage_change_deals (deal_id uuid PRIMARY KEY, org_id uuid NOT NULL, name text NOT NULL, amount numeric(15, 2), currency text, stage_entered_at timestamptz NOT NULL)`.execute(db)
  await sql`CREATE TABLE stage_changes (
    event_id uuid PRIMARY KEY, position_commit bigint NOT NULL, position_prepare bigint NOT NULL, org_id uuid NOT NULL, deal_id uuid NOT NULL, event_type text NOT NULL,
    deal_name text NOT NULL, pipeline_id uuid NOT NULL, from_pipeline_id uuid, from_stage text, from_stage_id uuid, from_kind text,
    to_stage text NOT NULL, to_stage_id uuid NOT NULL, to_kind text NOT NULL, amount numeric(15, 2), currency text, actor_id uuid, at timestamptz NOT NULL, days_in_previous_stage integer)`.execute(db)
  await sql`CREATE INDEX stage_changes_org_position ON stage_changes (org_id, position_commit, position_prepare)`.execute(db)
  await sql`CREATE INDEX stage_changes_deal_position ON stage_changes (deal_id, position_commit, position_prepare)`.execute(db)
  await sql`CREATE INDEX stage_changes_pipeline ON stage_changes (pipeline_id, at)`.execute(db)
}

type Created = Extract<OpportunityEvent, { type: 'OpportunityCreated' }>

function creationRow(recorded: RecordedEvent, event: Created): StageChangeRow {
  const { data } = event
  return {
    event_id: recorded.id,
    position_commit: recorded.position.commit.toString(),
    position_prepare: recorded.position.prepare.toString(),
    org_id: data.org_id,
    deal_id: opportunityStreams.idOf(recorded.streamName),
    event_type: 'OpportunityCreated',
    deal_name: data.name,
    pipeline_id: data.pipeline_id,
    from_pipeline_id: null,
    from_stage: null,
    from_stage_id: null,
    from_kind: null,
    to_stage: data.stage,
    to_stage_id: data.stage_id,
    to_kind: data.stage_kind,
    amount: data.amount,
    currency: data.currency,
    actor_id: data.created_by ?? recorded.metadata.actorId ?? null,
    at: new Date(data.at),
    days_in_previous_stage: null,
  }
}

/**
 * Creations, one or a run of them (a replay, a page under load): the deal's copy and its first
 * entry in one statement (the page's round trips are what a create costs, docs/performance.md).
 */
async function applyCreations(db: Db, run: readonly RecordedEvent[]): Promise<void> {
  const rows = run.map((recorded) => creationRow(recorded, domainEventOf<Created>(recorded)))
  await sql`WITH c AS (
      SELECT * FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS c (event_id uuid, position_commit bigint, position_prepare bigint, org_id uuid, deal_id uuid,
        deal_name text, pipeline_id uuid, to_stage text, to_stage_id uuid, to_kind text, amount numeric(15, 2), currency text, actor_id uuid, at timestamptz)),
    deals AS (
      INSERT INTO stage_change_deals (deal_id, org_id, name, amount, currency, stage_entered_at) SELECT deal_id, org_id, deal_name, amount, currency, at FROM c
      ON CONFLICT (deal_id) DO NOTHING)
    INSERT INTO stage_changes (event_id, position_commit, position_prepare, org_id, deal_id, event_type, deal_name, pipeline_id, to_stage, to_stage_id, to_kind, amount, currency, actor_id, at)
    SELECT event_id, position_commit, position_prepare, org_id, deal_id, 'OpportunityCreated', deal_name, pipeline_id, to_stage, to_stage_id, to_kind, amount, currency, actor_id, at FROM c
    ON CONFLICT (event_id) DO NOTHING`.execute(db)
}

const FOLLOWED = new Set<string>(['name', 'amount', 'currency'])

async function apply(db: Db, recorded: RecordedEvent): Promise<void> {
  const event = domainEventOf<OpportunityEvent>(recorded)
  const dealId = opportunityStreams.idOf(recorded.streamName)
  switch (event.type) {
    case 'OpportunityCreated':
      return applyCreations(db, [recorded])
    case 'OpportunityUpdated': {
      const changes = Object.fromEntries(Object.entries(event.data.changes).filter(([key]) => FOLLOWED.has(key)).map(([key, change]) => [key, change.to]))
      if (Object.keys(changes).length) await db.updateTable('stage_change_deals').set(changes).where('deal_id', '=', dealId).execute()
      return
    }
    case 'OpportunityStageChanged': {
      const { from, to, by, at } = event.data
      // The row copies the deal as it is now, before its stay is moved on; a replayed event inserts nothing and moves the stay to the same instant.
      await sql`INSERT INTO stage_changes (event_id, position_commit, position_prepare, org_id, deal_id, event_type, deal_name, pipeline_id, from_pipeline_id, from_stage, from_stage_id, from_kind,
          to_stage, to_stage_id, to_kind, amount, currency, actor_id, at, days_in_previous_stage)
        SELECT ${recorded.id}::uuid, ${recorded.position.commit.toString()}::bigint, ${recorded.position.prepare.toString()}::bigint, d.org_id, d.deal_id, 'OpportunityStageChanged',
          d.name, ${to.pipeline_id}::uuid, ${from.pipeline_id}::uuid, ${from.stage}, ${from.stage_id}::uuid, ${from.stage_kind}, ${to.stage}, ${to.stage_id}::uuid, ${to.stage_kind},
          d.amount, d.currency, ${by ?? recorded.metadata.actorId ?? null}::uuid, ${at}::timestamptz,
          greatest(0, floor(extract(epoch FROM ${at}::timestamptz - d.stage_entered_at) / 86400))::integer
        FROM stage_change_deals d WHERE d.deal_id = ${dealId}
        ON CONFLICT (event_id) DO NOTHING`.execute(db)
      await db.updateTable('stage_change_deals').set({ stage_entered_at: new Date(at) }).where('deal_id', '=', dealId).execute()
      return
    }
    default:
      return
  }
}

type Changed = Extract<OpportunityEvent, { type: 'OpportunityUpdated' | 'OpportunityStageChanged' }>

/**
 * A page's edits and stage changes in two statements, whatever their number (issue 20): the deals
 * as the ledger holds them (one read), then every stage change's row and each deal's final copy
 * (one statement). The events are folded here in log order, so each row copies the deal as `apply`
 * one event at a time would have found it.
 */
async function applyChanges(db: Db, run: readonly RecordedEvent[]): Promise<void> {
  const ids = [...new Set(run.map((e) => opportunityStreams.idOf(e.streamName)))]
  const { rows } = await sql<Omit<DealRow, 'stage_entered_at'> & { stage_entered_at: string }>`SELECT deal_id, org_id, name, amount::text AS amount, currency, stage_entered_at::text AS stage_entered_at
    FROM stage_change_deals WHERE deal_id = ANY(${ids}::uuid[])`.execute(db)
  const deals = new Map(rows.map((row) => [row.deal_id, { ...row }]))
  const entries: Record<string, unknown>[] = []
  for (const recorded of run) {
    const deal = deals.get(opportunityStreams.idOf(recorded.streamName))
    if (!deal) continue
    const event = domainEventOf<Changed>(recorded)
    if (event.type === 'OpportunityUpdated') {
      for (const [key, change] of Object.entries(event.data.changes)) if (FOLLOWED.has(key)) (deal as Record<string, unknown>)[key] = change.to
      continue
    }
    const { from, to, by, at } = event.data
    entries.push({
      event_id: recorded.id, position_commit: recorded.position.commit.toString(), position_prepare: recorded.position.prepare.toString(), org_id: deal.org_id, deal_id: deal.deal_id,
      deal_name: deal.name, pipeline_id: to.pipeline_id, from_pipeline_id: from.pipeline_id, from_stage: from.stage, from_stage_id: from.stage_id, from_kind: from.stage_kind,
      to_stage: to.stage, to_stage_id: to.stage_id, to_kind: to.stage_kind, amount: deal.amount, currency: deal.currency, actor_id: by ?? recorded.metadata.actorId ?? null, at,
      entered_at: deal.stage_entered_at,
    })
    deal.stage_entered_at = new Date(at).toISOString()
  }
  if (!deals.size) return
  await sql`WITH entries AS (
      INSERT INTO stage_changes (event_id, position_commit, position_prepare, org_id, deal_id, event_type, deal_name, pipeline_id, from_pipeline_id, from_stage, from_stage_id, from_kind,
        to_stage, to_stage_id, to_kind, amount, currency, actor_id, at, days_in_previous_stage)
      SELECT event_id, position_commit, position_prepare, org_id, deal_id, 'OpportunityStageChanged', deal_name, pipeline_id, from_pipeline_id, from_stage, from_stage_id, from_kind,
        to_stage, to_stage_id, to_kind, amount, currency, actor_id, at, greatest(0, floor(extract(epoch FROM at - entered_at) / 86400))::integer
      FROM jsonb_to_recordset(${JSON.stringify(entries)}::jsonb) AS e (event_id uuid, position_commit bigint, position_prepare bigint, org_id uuid, deal_id uuid, deal_name text, pipeline_id uuid,
        from_pipeline_id uuid, from_stage text, from_stage_id uuid, from_kind text, to_stage text, to_stage_id uuid, to_kind text, amount numeric(15, 2), currency text, actor_id uuid,
        at timestamptz, entered_at timestamptz)
      ON CONFLICT (event_id) DO NOTHING)
    UPDATE stage_change_deals d SET name = v.name, amount = v.amount, currency = v.currency, stage_entered_at = v.stage_entered_at
    FROM jsonb_to_recordset(${JSON.stringify([...deals.values()])}::jsonb) AS v (deal_id uuid, name text, amount numeric(15, 2), currency text, stage_entered_at timestamptz)
    WHERE d.deal_id = v.deal_id`.execute(db)
}

/** A deal's creation: its run statement is the INSERT `apply` sends for one (applyInRuns' anyLength). */
const isCreation = (event: RecordedEvent) => event.type === 'OpportunityCreated'

export const stageChangesProjector: Projector = {
  name: 'stage_changes',
  version: 1,
  eventTypes: ['OpportunityCreated', 'OpportunityUpdated', 'OpportunityStageChanged'],
  tables: ['stage_changes', 'stage_change_deals'],
  createTables,
  apply: (trx, recorded) => apply(trx, recorded),
  // Every event type of this ledger runs together (up to applyInRuns' run size): its creations
  // first (a deal's changes come after its creation in the log), then its changes.
  applyBatch: (trx, events) =>
    applyInRuns(
      events,
      (event) => stageChangesProjector.eventTypes.includes(event.type),
      async (run) => {
        const created = run.filter((e) => e.type === 'OpportunityCreated')
        if (created.length) await applyCreations(trx, created)
        if (created.length < run.length) await applyChanges(trx, run.filter((e) => e.type !== 'OpportunityCreated'))
      },
      (event) => apply(trx, event),
      isCreation,
    ),
}
