import { sql } from 'kysely'
import type { FreshTables } from '../../db/copy-rows.ts'
import { insertRowsOnce } from '../../db/insert-rows.ts'
import type { RecordedEvent } from '../../eventstore/event-store.ts'
import type { Viewer } from '../opportunity/queries.ts'
import type { Projector } from '../kernel/projector.ts'
import { RECORD_KINDS, mayReadRecordSql, recordLink, recordNameSql } from '../record/record-kinds.ts'
import type { EntityType } from '../record/record-kinds.ts'
import type { DashboardActivityTable } from './tables.ts'
import type { Db } from '../../db/database.ts'

/**
 * The activity feed (the original's Activity; GET /api/activities/ and the dashboard's recent
 * activity), a projection of the event log: one row per event of an account, contact, lead, deal or task
 * (created, changed, moved, converted, deleted, commented on, a file attached or removed …). A
 * row keeps who acted (the event's actor), what was done and to which record; the record's name
 * and who may see it are read from the record's own read model when the feed is asked for, so a
 * renamed record shows its current name and visibility follows the list rules of today. Rows are
 * keyed by event id (applying an event twice inserts nothing), and nothing here depends on another
 * read model, so a rebuild gives the same rows.
 */
export type ActivityRow = Omit<DashboardActivityTable, 'action' | 'entity_type'> & { action: ActivityAction; entity_type: EntityType }

export const ACTIVITY_ACTIONS = ['CREATE', 'UPDATE', 'DELETE', 'COMMENT'] as const
export type ActivityAction = (typeof ACTIVITY_ACTIONS)[number]
export const ACTION_DISPLAY: Record<ActivityAction, string> = { CREATE: 'Created', UPDATE: 'Updated', DELETE: 'Deleted', COMMENT: 'Commented' }
export { ENTITY_TYPES } from '../record/record-kinds.ts'
export type { EntityType } from '../record/record-kinds.ts'

/** What each recorded event type becomes: its action and a one-line description from its data. */
type Reading = { action: ActivityAction; describe: (data: Record<string, unknown>, noun: string) => string }
const created: Reading = { action: 'CREATE', describe: (_, noun) => `Created the ${noun}` }
const deleted: Reading = { action: 'DELETE', describe: (_, noun) => `Deleted the ${noun}` }
const commented: Reading = { action: 'COMMENT', describe: () => 'Added a comment' }
const commentEdited: Reading = { action: 'COMMENT', describe: () => 'Edited a comment' }
const commentDeleted: Reading = { action: 'COMMENT', describe: () => 'Removed a comment' }
const attached: Reading = { action: 'UPDATE', describe: (data) => `Attached ${String(data.file_name ?? 'a file')}` }
const detached: Reading = { action: 'UPDATE', describe: () => 'Removed an attachment' }
/** The comment and attachment events every record module shares (commands/notes.ts). */
const noteReadings = (prefix: string, entity: EntityType) => ({
  [`${prefix}CommentAdded`]: { entity, reading: commented },
  [`${prefix}CommentEdited`]: { entity, reading: commentEdited },
  [`${prefix}CommentDeleted`]: { entity, reading: commentDeleted },
  [`${prefix}AttachmentAdded`]: { entity, reading: attached },
  [`${prefix}AttachmentRemoved`]: { entity, reading: detached },
})
const lineItem = (what: string): Reading => ({ action: 'UPDATE', describe: () => `${what} a line item` })
const fieldsOf = (data: Record<string, unknown>) => Object.keys(data).filter((key) => key !== 'at')
const changedFields = (fields: string[]) => (fields.length ? `Changed ${fields.join(', ')}` : 'Updated')
/** Accounts and contacts record the new values of the changed fields; deals and leads each change under `changes`. */
const updatedFlat: Reading = { action: 'UPDATE', describe: (data) => changedFields(fieldsOf(data)) }
const updatedChanges: Reading = { action: 'UPDATE', describe: (data) => changedFields(Object.keys((data.changes as Record<string, unknown> | undefined) ?? {})) }

const READINGS: Record<string, { entity: EntityType; reading: Reading }> = {
  AccountCreated: { entity: 'Account', reading: created },
  AccountUpdated: { entity: 'Account', reading: updatedFlat },
  AccountDeleted: { entity: 'Account', reading: deleted },
  AccountEmailSent: { entity: 'Account', reading: { action: 'UPDATE', describe: () => 'Sent an email to the account' } },
  ...noteReadings('Account', 'Account'),
  ContactCreated: { entity: 'Contact', reading: created },
  ContactUpdated: { entity: 'Contact', reading: updatedFlat },
  ContactDeleted: { entity: 'Contact', reading: deleted },
  ...noteReadings('Contact', 'Contact'),
  LeadCreated: { entity: 'Lead', reading: created },
  LeadUpdated: { entity: 'Lead', reading: updatedChanges },
  LeadConverted: { entity: 'Lead', reading: { action: 'UPDATE', describe: () => 'Converted the lead into an account, a contact and a deal' } },
  LeadDeleted: { entity: 'Lead', reading: deleted },
  LeadMoved: { entity: 'Lead', reading: { action: 'UPDATE', describe: () => 'Moved the lead on its board' } },
  ...noteReadings('Lead', 'Lead'),
  OpportunityCreated: { entity: 'Opportunity', reading: created },
  OpportunityUpdated: { entity: 'Opportunity', reading: updatedChanges },
  OpportunityStageChanged: { entity: 'Opportunity', reading: { action: 'UPDATE', describe: (data) => `Moved the deal to ${String((data.to as { stage?: unknown } | undefined)?.stage ?? 'another stage')}` } },
  OpportunityDeleted: { entity: 'Opportunity', reading: deleted },
  OpportunityLineItemAdded: { entity: 'Opportunity', reading: lineItem('Added') },
  OpportunityLineItemChanged: { entity: 'Opportunity', reading: lineItem('Changed') },
  OpportunityLineItemRemoved: { entity: 'Opportunity', reading: lineItem('Removed') },
  ...noteReadings('Opportunity', 'Opportunity'),
  TaskCreated: { entity: 'Task', reading: created },
  TaskUpdated: { entity: 'Task', reading: updatedChanges },
  TaskMoved: { entity: 'Task', reading: { action: 'UPDATE', describe: (data) => `Moved the task to ${String((data.to as { stage?: unknown } | null)?.stage ?? (data.status as { to?: unknown } | undefined)?.to ?? 'another place')}` } },
  TaskDeleted: { entity: 'Task', reading: deleted },
  ...noteReadings('Task', 'Task'),
}

async function createTables(db: Db): Promise<void> {
  await sql`CREATE TABLE dashboard_activity (event_id uuid PRIMARY KEY, org_id uuid NOT NULL, actor_id uuid, action text NOT NULL, entity_type text NOT NULL,
    entity_id uuid NOT NULL, description text NOT NULL, at timestamptz NOT NULL, position_commit bigint NOT NULL, position_prepare bigint NOT NULL)`.execute(db)
  // Apply looks entries up by entity: this one is maintained during a replay too.
  await sql`CREATE INDEX dashboard_activity_entity ON dashboard_activity (entity_id)`.execute(db)
}

/** The feed's order: only listActivities reads it. */
async function createIndexes(db: Db): Promise<void> {
  await sql`CREATE INDEX dashboard_activity_org_at ON dashboard_activity (org_id, at DESC, position_commit DESC, position_prepare DESC)`.execute(db)
}

const isUuid = (value: unknown): value is string => typeof value === 'string' && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value)

/** The row an event makes, its organization still unknown when neither the metadata nor the data names it (then the record's earlier rows do). */
function rowOf(event: RecordedEvent): (Omit<ActivityRow, 'org_id'> & { org_id: string | null }) | undefined {
  const known = READINGS[event.type]
  const entityId = event.streamName.slice(event.streamName.indexOf('-') + 1)
  if (!known || !isUuid(entityId)) return undefined
  // Stored shapes: upcasting only adds fields these descriptions do not read.
  const data = (event.data ?? {}) as Record<string, unknown>
  const orgId = event.metadata.orgId ?? data.org_id
  const at = typeof data.at === 'string' ? new Date(data.at) : event.createdAt
  return {
    event_id: event.id,
    org_id: isUuid(orgId) ? orgId : null,
    actor_id: isUuid(event.metadata.actorId) ? event.metadata.actorId : null,
    action: known.reading.action,
    entity_type: known.entity,
    entity_id: entityId,
    description: known.reading.describe(data, RECORD_KINDS[known.entity].noun),
    at: Number.isNaN(at.getTime()) ? event.createdAt : at,
    position_commit: event.position.commit.toString(),
    position_prepare: event.position.prepare.toString(),
  }
}

/** One row per event, keyed by it: idempotent live, and copied into a rebuild's fresh tables (`fresh`), where each event comes once. */
async function applyEvents(db: Db, events: readonly RecordedEvent[], fresh?: FreshTables): Promise<void> {
  let run: ActivityRow[] = []
  const flush = async () => {
    await insertRowsOnce(db, 'dashboard_activity', 'event_id', run, fresh)
    run = []
  }
  for (const event of events) {
    const row = rowOf(event)
    if (!row) continue
    if (row.org_id === null) {
      await flush()
      const earlier = await db.selectFrom('dashboard_activity').select('org_id').where('entity_id', '=', row.entity_id).limit(1).executeTakeFirst()
      if (!earlier) continue
      row.org_id = earlier.org_id
    }
    run.push(row as ActivityRow)
    if (run.length === 500) await flush()
  }
  await flush()
}

export const dashboardActivityProjector: Projector = {
  name: 'dashboard_activity',
  // 2: attachments, comment edits and removals, line items, lead board moves, account emails and tasks are activity too (issue 19).
  version: 2,
  eventTypes: Object.keys(READINGS),
  tables: ['dashboard_activity'],
  createTables,
  createIndexes,
  apply: (trx, event) => applyEvents(trx, [event]),
  applyBatch: (trx, events, fresh) => applyEvents(trx, events, fresh),
}

export type ActivityView = ActivityRow & { entity_name: string | null; actor_email: string | null; actor_name: string | null; link: string }

/** A profile's display name: first and last name, or the email while both are blank (as goals name owners). */
const displayName = sql<string>`coalesce(nullif(trim(u.first_name || ' ' || u.last_name), ''), u.email)`

/** The original's filters of the feed, and a page of it. */
export type ActivityFilter = { entityType?: EntityType; entityId?: string; actorId?: string; limit: number; offset: number }

/**
 * The organization's activity the viewer may see, newest first (by when, then by place in the log):
 * entries about records the viewer may see by the record's list rule (record-kinds.ts), each with
 * the record's current name, its page and the actor.
 */
export async function listActivities(db: Db, viewer: Viewer, filter: ActivityFilter): Promise<ActivityView[]> {
  const conditions = [sql`a.org_id = ${viewer.orgId}`, mayReadRecordSql('a', viewer)]
  if (filter.entityType) conditions.push(sql`a.entity_type = ${filter.entityType}`)
  if (filter.entityId) conditions.push(sql`a.entity_id = ${filter.entityId}`)
  if (filter.actorId) conditions.push(sql`a.actor_id = ${filter.actorId}`)
  const { rows } = await sql<Omit<ActivityView, 'link'>>`SELECT a.*, ${recordNameSql('a')} AS entity_name,
      u.email AS actor_email, CASE WHEN u.id IS NULL THEN NULL ELSE ${displayName} END AS actor_name
    FROM dashboard_activity a
    LEFT JOIN profiles p ON p.id = a.actor_id AND p.org_id = a.org_id
    LEFT JOIN users u ON u.id = p.user_id
    WHERE ${sql.join(conditions, sql` AND `)}
    ORDER BY a.at DESC, a.position_commit DESC, a.position_prepare DESC
    LIMIT ${filter.limit} OFFSET ${filter.offset}`.execute(db)
  return rows.map((row) => ({ ...row, link: recordLink(row.entity_type, row.entity_id) }))
}

/** The dashboard's latest activity: the feed's first `limit` entries. */
export const recentActivity = (db: Db, viewer: Viewer, limit: number): Promise<ActivityView[]> => listActivities(db, viewer, { limit, offset: 0 })
