import { sql } from 'kysely'
import { lineTotal } from '../../commands/opportunity/line-items.ts'
import { opportunityStreams } from '../../commands/opportunity/opportunity.ts'
import type { OpportunityEvent } from '../../commands/opportunity/opportunity.ts'
import { pipelineStreams } from '../../commands/pipeline/pipeline.ts'
import { isStreamOf } from '../../commands/pipeline/kinds.ts'
import type { PipelineEvent } from '../../commands/pipeline/pipeline.ts'
import { applyPipelineEvent, createRollupTables, insertCreatedDeals, refreshStallsAt, withTotals } from './opportunity-rollups.ts'
import { DEAL_UPDATES, applyDealUpdates } from './opportunity-updates.ts'
import type { RecordedEvent } from '../../eventstore/event-store.ts'
import { applyInRuns } from '../kernel/projector.ts'
import { domainEventOf } from '../../events/versions.ts'
import { liveRecordsTagged } from '../kernel/records.ts'
import { hasTrigrams } from '../search/search.ts'
import type { Projector } from '../kernel/projector.ts'
import type { AttachmentRow, CommentRow, LineItemRow, OpportunityRow } from './tables.ts'
import type { Db } from '../../db/database.ts'

export type { AttachmentRow, CommentRow, LineItemRow, OpportunityRow } from './tables.ts'

const relationColumns = ['contacts', 'tags', 'teams', 'assigned_to'] as const

async function createTables(db: Db): Promise<void> {
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
    .addColumn('stalls_at', 'timestamptz')
    .addColumn('custom_fields', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('revision', 'bigint', (c) => c.notNull())
    .addColumn('is_deleted', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
  for (const column of relationColumns) table = table.addColumn(column, sql`uuid[]`, (c) => c.notNull())
  await table.execute()
  // Apply moves deals by stage and pipeline (rollups, stall days): these two are maintained during a replay too.
  await sql`CREATE INDEX opportunities_stage ON opportunities (stage_id, kanban_order) WHERE NOT is_deleted`.execute(db)
  await sql`CREATE INDEX opportunities_pipeline ON opportunities (pipeline_id) WHERE NOT is_deleted`.execute(db)
  await sql`CREATE TABLE opportunity_comments (id uuid PRIMARY KEY, opportunity_id uuid NOT NULL, org_id uuid NOT NULL, comment text NOT NULL, created_by uuid,
    is_deleted boolean NOT NULL DEFAULT false, created_at timestamptz NOT NULL, updated_at timestamptz NOT NULL)`.execute(db)
  await sql`CREATE INDEX opportunity_comments_deal ON opportunity_comments (opportunity_id, created_at)`.execute(db)
  await sql`CREATE TABLE opportunity_attachments (id uuid PRIMARY KEY, opportunity_id uuid NOT NULL, org_id uuid NOT NULL, file_name text NOT NULL, content_type text NOT NULL,
    size bigint NOT NULL, storage_key text NOT NULL, created_by uuid, is_deleted boolean NOT NULL DEFAULT false, created_at timestamptz NOT NULL)`.execute(db)
  await sql`CREATE INDEX opportunity_attachments_deal ON opportunity_attachments (opportunity_id, created_at)`.execute(db)
  await sql`CREATE TABLE opportunity_line_items (id uuid PRIMARY KEY, opportunity_id uuid NOT NULL, org_id uuid NOT NULL, name text NOT NULL, description text,
    quantity numeric(15, 2) NOT NULL, unit_price numeric(15, 2) NOT NULL, discount_type text, discount_value numeric(15, 2), total numeric(15, 2) NOT NULL,
    position bigint NOT NULL, is_deleted boolean NOT NULL DEFAULT false, created_at timestamptz NOT NULL, updated_at timestamptz NOT NULL)`.execute(db)
  await sql`CREATE INDEX opportunity_line_items_deal ON opportunity_line_items (opportunity_id, position) WHERE NOT is_deleted`.execute(db)
  await createRollupTables(db)
}

/** The list's order, its custom field filter and its other filters' indexes (GINs, the dearest to maintain row by row): apply never reads through them. */
async function createIndexes(db: Db): Promise<void> {
  await sql`CREATE INDEX opportunities_org_created ON opportunities (org_id, created_at DESC, id) WHERE NOT is_deleted`.execute(db)
  await sql`CREATE INDEX opportunities_custom_fields ON opportunities USING gin (custom_fields jsonb_path_ops) WHERE NOT is_deleted`.execute(db)
  await createFilterIndexes(db)
}

/**
 * What makes a filtered list's totals cost what matches rather than a scan of the organization
 * (docs/performance.md, "Filtered lists"): a stage filter ranges over the stage codes it can match
 * and reads the totals' columns and the other filters' from the index alone (the deal row is ~10x
 * wider); tags and assignees (a member's own deals, assigned_to=) by GIN; who created a deal (the
 * other half of a member's visibility); a name or search by trigrams where pg_trgm is installed.
 */
async function createFilterIndexes(db: Db): Promise<void> {
  await sql`CREATE INDEX opportunities_totals ON opportunities (org_id, stage) INCLUDE (stage_kind, currency, amount, probability, stalls_at, created_by, assigned_to, tags) WHERE NOT is_deleted`.execute(db)
  await sql`CREATE INDEX opportunities_tags ON opportunities USING gin (tags) WHERE NOT is_deleted`.execute(db)
  await sql`CREATE INDEX opportunities_assigned_to ON opportunities USING gin (assigned_to) WHERE NOT is_deleted`.execute(db)
  await sql`CREATE INDEX opportunities_created_by ON opportunities (org_id, created_by) WHERE NOT is_deleted`.execute(db)
  if (await hasTrigrams(db)) await sql`CREATE INDEX opportunities_name_trigrams ON opportunities USING gin (name gin_trgm_ops) WHERE NOT is_deleted`.execute(db)
}

// Line items keep their own rows (the deal's amount moves by its own OpportunityUpdated).
async function applyLineItem(db: Db, id: string, revision: bigint, event: Extract<OpportunityEvent, { type: `OpportunityLineItem${string}` }>): Promise<void> {
  const at = new Date(event.data.at)
  switch (event.type) {
    case 'OpportunityLineItemAdded': {
      const org_id = await orgOf(db, id)
      const item = event.data.line_item
      if (org_id) {
        await db.insertInto('opportunity_line_items')
          .values({ ...item, opportunity_id: id, org_id, total: lineTotal(item), position: revision.toString(), is_deleted: false, created_at: at, updated_at: at })
          .onConflict((oc) => oc.column('id').doNothing()).execute()
      }
      return
    }
    case 'OpportunityLineItemChanged': {
      const current = await db.selectFrom('opportunity_line_items').selectAll().where('id', '=', event.data.line_item_id).executeTakeFirst()
      if (current) await db.updateTable('opportunity_line_items').set({ ...event.data.changes, total: lineTotal({ ...current, ...event.data.changes }), updated_at: at }).where('id', '=', current.id).execute()
      return
    }
    case 'OpportunityLineItemRemoved':
      await db.updateTable('opportunity_line_items').set({ is_deleted: true, updated_at: at }).where('id', '=', event.data.line_item_id).execute()
      return
  }
}

async function orgOf(db: Db, id: string): Promise<string | undefined> {
  return (await db.selectFrom('opportunities').select('org_id').where('id', '=', id).executeTakeFirst())?.org_id
}

// Comments and attachments leave the deal row (and its revision) alone: their own rows carry them.
async function applyNote(db: Db, id: string, event: Extract<OpportunityEvent, { type: `OpportunityComment${string}` | `OpportunityAttachment${string}` }>): Promise<void> {
  const at = new Date(event.data.at)
  switch (event.type) {
    case 'OpportunityCommentAdded': {
      const org_id = await orgOf(db, id)
      if (org_id) await db.insertInto('opportunity_comments').values({ id: event.data.comment_id, opportunity_id: id, org_id, comment: event.data.comment, created_by: event.data.by, is_deleted: false, created_at: at, updated_at: at }).onConflict((oc) => oc.column('id').doNothing()).execute()
      return
    }
    case 'OpportunityCommentEdited':
      await db.updateTable('opportunity_comments').set({ comment: event.data.comment, updated_at: at }).where('id', '=', event.data.comment_id).execute()
      return
    case 'OpportunityCommentDeleted':
      await db.updateTable('opportunity_comments').set({ is_deleted: true, updated_at: at }).where('id', '=', event.data.comment_id).execute()
      return
    case 'OpportunityAttachmentAdded': {
      const { attachment_id, by, at: _at, ...file } = event.data
      const org_id = await orgOf(db, id)
      if (org_id) await db.insertInto('opportunity_attachments').values({ ...file, id: attachment_id, opportunity_id: id, org_id, created_by: by, is_deleted: false, created_at: at }).onConflict((oc) => oc.column('id').doNothing()).execute()
      return
    }
    case 'OpportunityAttachmentRemoved':
      await db.updateTable('opportunity_attachments').set({ is_deleted: true }).where('id', '=', event.data.attachment_id).execute()
      return
  }
}

function createdRow(id: string, revision: bigint, event: Extract<OpportunityEvent, { type: 'OpportunityCreated' }>): Record<string, unknown> {
  const { opportunity_id: _id, at, ...row } = event.data
  return { ...row, id, stage_changed_at: at, is_deleted: false, created_at: at, updated_at: at, revision: revision.toString() }
}

async function applyRow(db: Db, id: string, revision: bigint, event: Exclude<OpportunityEvent, { type: `OpportunityComment${string}` | `OpportunityAttachment${string}` | `OpportunityLineItem${string}` }>): Promise<void> {
  const at = new Date(event.data.at)
  const stamp = { revision: revision.toString(), updated_at: at }
  switch (event.type) {
    case 'OpportunityCreated':
      return insertCreatedDeals(db, [createdRow(id, revision, event)])
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

const isNote = (event: OpportunityEvent): event is Extract<OpportunityEvent, { type: `OpportunityComment${string}` | `OpportunityAttachment${string}` }> =>
  event.type.startsWith('OpportunityComment') || event.type.startsWith('OpportunityAttachment')
const isLineItem = (event: OpportunityEvent): event is Extract<OpportunityEvent, { type: `OpportunityLineItem${string}` }> => event.type.startsWith('OpportunityLineItem')

async function apply(db: Db, id: string, revision: bigint, event: OpportunityEvent): Promise<void> {
  if (isNote(event)) return applyNote(db, id, event)
  if (isLineItem(event)) return applyLineItem(db, id, revision, event)
  // A creation carries its own stalls_at and totals (insertCreatedDeals).
  if (event.type === 'OpportunityCreated') return applyRow(db, id, revision, event)
  await withTotals(db, id, async () => {
    await applyRow(db, id, revision, event)
    if (event.type === 'OpportunityStageChanged') await refreshStallsAt(db, id)
  })
}

/** A deal's creation: its run statement is the INSERT `apply` sends for one (applyInRuns' anyLength). */
const isCreation = (event: RecordedEvent) => event.type === 'OpportunityCreated'

const PIPELINE_EVENTS = ['PipelineCreated', 'StageAdded', 'StageUpdated', 'StageRemoved', 'PipelineDeleted']


export const opportunitiesProjector: Projector = {
  name: 'opportunities',
  version: 7,
  eventTypes: [
    'OpportunityCreated', 'OpportunityUpdated', 'OpportunityStageChanged', 'OpportunityPositioned', 'OpportunityDeleted',
    'OpportunityCommentAdded', 'OpportunityCommentEdited', 'OpportunityCommentDeleted', 'OpportunityAttachmentAdded', 'OpportunityAttachmentRemoved',
    'OpportunityLineItemAdded', 'OpportunityLineItemChanged', 'OpportunityLineItemRemoved',
    ...PIPELINE_EVENTS,
  ],
  tables: ['opportunities', 'opportunity_comments', 'opportunity_attachments', 'opportunity_line_items', 'deal_stage_rotting', 'deal_totals', 'deal_stall_days'],
  createTables,
  createIndexes,
  apply: async (trx, recorded) => {
    if (!PIPELINE_EVENTS.includes(recorded.type)) return apply(trx, opportunityStreams.idOf(recorded.streamName), recorded.revision, domainEventOf<OpportunityEvent>(recorded))
    // Lead pipelines write the same event types to their own streams: not the deals' business.
    if (isStreamOf(pipelineStreams, recorded.streamName)) await applyPipelineEvent(trx, pipelineStreams.idOf(recorded.streamName), domainEventOf<PipelineEvent>(recorded))
  },
  // Runs of creations and changes (a busy minute, a replay) in five statements each. The
  // creations go first: a deal's changes come after its creation in the log, and the rollups'
  // sums do not depend on the order of different deals.
  applyBatch: (trx, events) =>
    applyInRuns(
      events,
      (event) => event.type === 'OpportunityCreated' || DEAL_UPDATES.has(event.type),
      async (run) => {
        const created = run.filter((e) => e.type === 'OpportunityCreated')
        if (created.length) await insertCreatedDeals(trx, created.map((e) => createdRow(opportunityStreams.idOf(e.streamName), e.revision, domainEventOf<Extract<OpportunityEvent, { type: 'OpportunityCreated' }>>(e))))
        if (created.length < run.length) await applyDealUpdates(trx, run.filter((e) => e.type !== 'OpportunityCreated'))
      },
      (event) => opportunitiesProjector.apply(trx, event),
      isCreation,
    ),
}


/** A deal row with its stage's label and rotting thresholds (joined: the pipelines read model owns them). */
export type OpportunityView = OpportunityRow & { stage_label: string | null; expected_days: number | null; warning_days: number | null }

/** A live deal of the organization, or undefined: another org's id looks exactly like a missing one. */
export function opportunityOf(db: Db, orgId: string, id: string): Promise<OpportunityView | undefined> {
  return db
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
export async function countDeals(db: Db, where: { stageId: string } | { pipelineId: string }): Promise<number> {
  let query = db.selectFrom('opportunities').select((eb) => eb.fn.countAll<string>().as('n')).where('is_deleted', '=', false)
  query = 'stageId' in where ? query.where('stage_id', '=', where.stageId) : query.where('pipeline_id', '=', where.pipelineId)
  return Number((await query.executeTakeFirstOrThrow()).n)
}

/** A card's kanban order and its column, for placing another card next to it. */
export function cardOf(db: Db, orgId: string, id: string): Promise<{ stage_id: string; kanban_order: number } | undefined> {
  return db.selectFrom('opportunities').select(['stage_id', 'kanban_order']).where('org_id', '=', orgId).where('id', '=', id).where('is_deleted', '=', false).executeTakeFirst()
}

/** The nearest kanban order in the column strictly after (`next`) or before (`previous`) `order`, or at the column's end when `order` is null. */
export async function neighbourOrder(db: Db, stageId: string, order: number | null, direction: 'next' | 'previous', exceptId: string): Promise<number | null> {
  let query = db.selectFrom('opportunities').select('kanban_order').where('stage_id', '=', stageId).where('is_deleted', '=', false).where('id', '<>', exceptId)
  if (order !== null) query = query.where('kanban_order', direction === 'next' ? '>' : '<', order)
  const row = await query.orderBy('kanban_order', direction === 'next' ? 'asc' : 'desc').limit(1).executeTakeFirst()
  return row?.kanban_order ?? null
}


/** The live deals of the organization carrying a tag, for a tag merge. */
export const opportunitiesTagged = (db: Db, orgId: string, tagId: string) => liveRecordsTagged(db, 'opportunities', orgId, tagId)

/** The live comments of a deal, oldest first. */
export function commentsOf(db: Db, opportunityId: string): Promise<CommentRow[]> {
  return db.selectFrom('opportunity_comments').selectAll().where('opportunity_id', '=', opportunityId).where('is_deleted', '=', false).orderBy('created_at').orderBy('id').execute()
}

/** The live attachments of a deal, oldest first. */
export function attachmentsOf(db: Db, opportunityId: string): Promise<AttachmentRow[]> {
  return db.selectFrom('opportunity_attachments').selectAll().where('opportunity_id', '=', opportunityId).where('is_deleted', '=', false).orderBy('created_at').orderBy('id').execute()
}

/** A live comment of the organization (of a live deal), or undefined. */
export function commentOf(db: Db, orgId: string, id: string): Promise<CommentRow | undefined> {
  return db.selectFrom('opportunity_comments').selectAll().where('org_id', '=', orgId).where('id', '=', id).where('is_deleted', '=', false).executeTakeFirst()
}

/** A live attachment of the organization, or undefined. */
export function attachmentOf(db: Db, orgId: string, id: string): Promise<AttachmentRow | undefined> {
  return db.selectFrom('opportunity_attachments').selectAll().where('org_id', '=', orgId).where('id', '=', id).where('is_deleted', '=', false).executeTakeFirst()
}

/** The live line items of these deals, each deal's in the order they were added: one query for a page of any size. */
export function lineItemsOf(db: Db, opportunityIds: readonly string[]): Promise<LineItemRow[]> {
  if (!opportunityIds.length) return Promise.resolve([])
  return db.selectFrom('opportunity_line_items').selectAll().where('opportunity_id', 'in', opportunityIds).where('is_deleted', '=', false).orderBy('opportunity_id').orderBy('position').execute()
}

/** A live line item of a live deal of the organization, or undefined. */
export function lineItemOf(db: Db, orgId: string, opportunityId: string, id: string): Promise<LineItemRow | undefined> {
  return db.selectFrom('opportunity_line_items').selectAll().where('org_id', '=', orgId).where('opportunity_id', '=', opportunityId).where('id', '=', id).where('is_deleted', '=', false).executeTakeFirst()
}
