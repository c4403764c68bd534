import { sql } from 'kysely'
import type { Kysely } from 'kysely'
import { opportunityStreams } from '../commands/opportunity/opportunity.ts'
import type { DealFields, OpportunityEvent, Placement } from '../commands/opportunity/opportunity.ts'
import { domainEventOf } from './projector.ts'
import { liveRecordsTagged } from './records.ts'
import type { Projector } from './projector.ts'

/**
 * The deals read model: one row per deal (deleted ones kept, flagged), what the detail, the rules'
 * counts (deals in a stage or pipeline) and the board placement read. `revision` is the deal
 * stream's revision, the detail's ETag. Every statement sets values, so replaying an event is harmless.
 */
export type OpportunityRow = Omit<DealFields, 'amount' | 'closed_on'> &
  Placement & { id: string; org_id: string; amount: string | null; closed_on: string | null; created_by: string | null; kanban_order: number; stage_changed_at: Date; revision: string; is_deleted: boolean; created_at: Date; updated_at: Date }

type Tables = { opportunities: OpportunityRow }

const relationColumns = ['contacts', 'tags', 'teams', 'assigned_to'] as const

async function createTables(db: Kysely<any>): Promise<void> {
  let table = db.schema
    .createTable('opportunities')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('org_id', 'uuid', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('account', 'uuid')
    .addColumn('pipeline_id', 'uuid', (c) => c.notNull())
    .addColumn('stage', 'text', (c) => c.notNull())
    .addColumn('stage_id', 'uuid', (c) => c.notNull())
    .addColumn('stage_kind', 'text', (c) => c.notNull())
    .addColumn('opportunity_type', 'text')
    .addColumn('currency', 'text')
    .addColumn('amount', sql`numeric(15, 2)`)
    .addColumn('probability', 'integer')
    .addColumn('closed_on', 'date')
    .addColumn('lead_source', 'text')
    .addColumn('description', 'text')
    .addColumn('is_active', 'boolean', (c) => c.notNull())
    .addColumn('closed_by', 'uuid')
    .addColumn('created_by', 'uuid')
    .addColumn('kanban_order', 'double precision', (c) => c.notNull())
    .addColumn('stage_changed_at', 'timestamptz', (c) => c.notNull())
    .addColumn('revision', 'bigint', (c) => c.notNull())
    .addColumn('is_deleted', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
  for (const column of relationColumns) table = table.addColumn(column, sql`uuid[]`, (c) => c.notNull())
  await table.execute()
  await sql`CREATE INDEX opportunities_org_created ON opportunities (org_id, created_at DESC, id) WHERE NOT is_deleted`.execute(db)
  await sql`CREATE INDEX opportunities_stage ON opportunities (stage_id, kanban_order) WHERE NOT is_deleted`.execute(db)
  await sql`CREATE INDEX opportunities_pipeline ON opportunities (pipeline_id) WHERE NOT is_deleted`.execute(db)
}

async function apply(db: Kysely<Tables>, id: string, revision: bigint, event: OpportunityEvent): Promise<void> {
  const at = new Date(event.data.at)
  const stamp = { revision: revision.toString(), updated_at: at }
  switch (event.type) {
    case 'OpportunityCreated': {
      const { opportunity_id: _id, at: _at, ...row } = event.data
      await db
        .insertInto('opportunities')
        .values({ ...row, id, stage_changed_at: at, is_deleted: false, created_at: at, ...stamp })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute()
      return
    }
    case 'OpportunityUpdated': {
      const changes = Object.fromEntries(Object.entries(event.data.changes).map(([key, change]) => [key, change.to]))
      await db.updateTable('opportunities').set({ ...changes, ...stamp }).where('id', '=', id).execute()
      return
    }
    case 'OpportunityStageChanged':
      await db.updateTable('opportunities').set({ ...event.data.to, stage_changed_at: at, ...stamp }).where('id', '=', id).execute()
      return
    case 'OpportunityPositioned':
      await db.updateTable('opportunities').set({ kanban_order: event.data.kanban_order, ...stamp }).where('id', '=', id).execute()
      return
    case 'OpportunityDeleted':
      await db.updateTable('opportunities').set({ is_deleted: true, ...stamp }).where('id', '=', id).execute()
      return
  }
}

export const opportunitiesProjector: Projector = {
  name: 'opportunities',
  version: 1,
  eventTypes: ['OpportunityCreated', 'OpportunityUpdated', 'OpportunityStageChanged', 'OpportunityPositioned', 'OpportunityDeleted'],
  tables: ['opportunities'],
  createTables,
  apply: (trx, recorded) => apply(trx as unknown as Kysely<Tables>, opportunityStreams.idOf(recorded.streamName), recorded.revision, domainEventOf<OpportunityEvent>(recorded)),
}

const readDb = (db: Kysely<any>) => db as Kysely<Tables>

/** A deal row with its stage's label and rotting thresholds (joined: the pipelines read model owns them). */
export type OpportunityView = OpportunityRow & { stage_label: string | null; expected_days: number | null; warning_days: number | null }

/** A live deal of the organization, or undefined: another org's id looks exactly like a missing one. */
export function opportunityOf(db: Kysely<any>, orgId: string, id: string): Promise<OpportunityView | undefined> {
  return readDb(db)
    .selectFrom('opportunities as o')
    .leftJoin(sql<{ id: string; label: string; expected_days: number | null; warning_days: number | null }>`pipeline_stages`.as('s'), 's.id', 'o.stage_id')
    .selectAll('o')
    .select([sql<string | null>`o.closed_on::text`.as('closed_on'), 's.label as stage_label', 's.expected_days', 's.warning_days'])
    .where('o.org_id', '=', orgId)
    .where('o.id', '=', id)
    .where('o.is_deleted', '=', false)
    .executeTakeFirst() as Promise<OpportunityView | undefined>
}

/** Live deals in a stage (or, with no stage, a pipeline): the count a removal, kind change or pipeline deletion is refused on. */
export async function countDeals(db: Kysely<any>, where: { stageId: string } | { pipelineId: string }): Promise<number> {
  let query = readDb(db).selectFrom('opportunities').select((eb) => eb.fn.countAll<string>().as('n')).where('is_deleted', '=', false)
  query = 'stageId' in where ? query.where('stage_id', '=', where.stageId) : query.where('pipeline_id', '=', where.pipelineId)
  return Number((await query.executeTakeFirstOrThrow()).n)
}

/** A card's kanban order and its column, for placing another card next to it. */
export function cardOf(db: Kysely<any>, orgId: string, id: string): Promise<{ stage_id: string; kanban_order: number } | undefined> {
  return readDb(db).selectFrom('opportunities').select(['stage_id', 'kanban_order']).where('org_id', '=', orgId).where('id', '=', id).where('is_deleted', '=', false).executeTakeFirst()
}

/** The nearest kanban order in the column strictly after (`next`) or before (`previous`) `order`, or at the column's end when `order` is null. */
export async function neighbourOrder(db: Kysely<any>, stageId: string, order: number | null, direction: 'next' | 'previous', exceptId: string): Promise<number | null> {
  let query = readDb(db).selectFrom('opportunities').select('kanban_order').where('stage_id', '=', stageId).where('is_deleted', '=', false).where('id', '<>', exceptId)
  if (order !== null) query = query.where('kanban_order', direction === 'next' ? '>' : '<', order)
  const row = await query.orderBy('kanban_order', direction === 'next' ? 'asc' : 'desc').limit(1).executeTakeFirst()
  return row?.kanban_order ?? null
}


/** The live deals of the organization carrying a tag, for a tag merge. */
export const opportunitiesTagged = (db: Kysely<any>, orgId: string, tagId: string) => liveRecordsTagged(db, 'opportunities', orgId, tagId)
