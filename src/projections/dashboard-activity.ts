import { sql } from 'kysely'
import type { Kysely } from 'kysely'
import type { RecordedEvent } from '../eventstore/event-store.ts'
import type { Viewer } from './opportunity-queries.ts'
import type { Projector } from './projector.ts'

/**
 * The dashboard's recent activity (the original's Activity feed), read from the event log: one row
 * per event that created, changed, deleted or commented on an account, contact, lead or deal. A
 * row keeps who acted (the event's actor), what was done and to which record; the record's name
 * and who may see it are read from the record's own read model when the feed is asked for, so a
 * renamed record shows its current name and visibility follows the list rules of today. Rows are
 * keyed by event id (applying an event twice inserts nothing), and nothing here depends on another
 * read model, so a rebuild gives the same rows.
 */
export type ActivityRow = {
  event_id: string
  org_id: string
  actor_id: string | null
  action: ActivityAction
  entity_type: EntityType
  entity_id: string
  description: string
  at: Date
  /** The event's place in the log: the order of rows with the same `at`. */
  position_commit: string
  position_prepare: string
}

export const ACTIVITY_ACTIONS = ['CREATE', 'UPDATE', 'DELETE', 'COMMENT'] as const
export type ActivityAction = (typeof ACTIVITY_ACTIONS)[number]
export const ACTION_DISPLAY: Record<ActivityAction, string> = { CREATE: 'Created', UPDATE: 'Updated', DELETE: 'Deleted', COMMENT: 'Commented' }
export const ENTITY_TYPES = ['Account', 'Contact', 'Lead', 'Opportunity'] as const
export type EntityType = (typeof ENTITY_TYPES)[number]

const NOUN: Record<EntityType, string> = { Account: 'account', Contact: 'contact', Lead: 'lead', Opportunity: 'deal' }

/** What each recorded event type becomes: its action and a one-line description from its data. */
type Reading = { action: ActivityAction; describe: (data: Record<string, unknown>, noun: string) => string }
const created: Reading = { action: 'CREATE', describe: (_, noun) => `Created the ${noun}` }
const deleted: Reading = { action: 'DELETE', describe: (_, noun) => `Deleted the ${noun}` }
const commented: Reading = { action: 'COMMENT', describe: () => 'Added a comment' }
const fieldsOf = (data: Record<string, unknown>) => Object.keys(data).filter((key) => key !== 'at')
const changedFields = (fields: string[]) => (fields.length ? `Changed ${fields.join(', ')}` : 'Updated')
/** Accounts and contacts record the new values of the changed fields; deals and leads each change under `changes`. */
const updatedFlat: Reading = { action: 'UPDATE', describe: (data) => changedFields(fieldsOf(data)) }
const updatedChanges: Reading = { action: 'UPDATE', describe: (data) => changedFields(Object.keys((data.changes as Record<string, unknown> | undefined) ?? {})) }

const READINGS: Record<string, { entity: EntityType; reading: Reading }> = {
  AccountCreated: { entity: 'Account', reading: created },
  AccountUpdated: { entity: 'Account', reading: updatedFlat },
  AccountDeleted: { entity: 'Account', reading: deleted },
  AccountCommentAdded: { entity: 'Account', reading: commented },
  ContactCreated: { entity: 'Contact', reading: created },
  ContactUpdated: { entity: 'Contact', reading: updatedFlat },
  ContactDeleted: { entity: 'Contact', reading: deleted },
  ContactCommentAdded: { entity: 'Contact', reading: commented },
  LeadCreated: { entity: 'Lead', reading: created },
  LeadUpdated: { entity: 'Lead', reading: updatedChanges },
  LeadConverted: { entity: 'Lead', reading: { action: 'UPDATE', describe: () => 'Converted the lead into an account, a contact and a deal' } },
  LeadDeleted: { entity: 'Lead', reading: deleted },
  LeadCommentAdded: { entity: 'Lead', reading: commented },
  OpportunityCreated: { entity: 'Opportunity', reading: created },
  OpportunityUpdated: { entity: 'Opportunity', reading: updatedChanges },
  OpportunityStageChanged: { entity: 'Opportunity', reading: { action: 'UPDATE', describe: (data) => `Moved the deal to ${String((data.to as { stage?: unknown } | undefined)?.stage ?? 'another stage')}` } },
  OpportunityDeleted: { entity: 'Opportunity', reading: deleted },
  OpportunityCommentAdded: { entity: 'Opportunity', reading: commented },
}

type Tables = { dashboard_activity: ActivityRow }

async function createTables(db: Kysely<any>): Promise<void> {
  await sql`CREATE TABLE dashboard_activity (event_id uuid PRIMARY KEY, org_id uuid NOT NULL, actor_id uuid, action text NOT NULL, entity_type text NOT NULL,
    entity_id uuid NOT NULL, description text NOT NULL, at timestamptz NOT NULL, position_commit bigint NOT NULL, position_prepare bigint NOT NULL)`.execute(db)
  await sql`CREATE INDEX dashboard_activity_org_at ON dashboard_activity (org_id, at DESC, position_commit DESC, position_prepare DESC)`.execute(db)
  await sql`CREATE INDEX dashboard_activity_entity ON dashboard_activity (entity_id)`.execute(db)
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
    description: known.reading.describe(data, NOUN[known.entity]),
    at: Number.isNaN(at.getTime()) ? event.createdAt : at,
    position_commit: event.position.commit.toString(),
    position_prepare: event.position.prepare.toString(),
  }
}

async function applyEvents(db: Kysely<Tables>, events: readonly RecordedEvent[]): Promise<void> {
  let run: ActivityRow[] = []
  const flush = async () => {
    if (run.length) await db.insertInto('dashboard_activity').values(run).onConflict((oc) => oc.column('event_id').doNothing()).execute()
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
  version: 1,
  eventTypes: Object.keys(READINGS),
  tables: ['dashboard_activity'],
  createTables,
  apply: (trx, event) => applyEvents(trx as unknown as Kysely<Tables>, [event]),
  applyBatch: (trx, events) => applyEvents(trx as unknown as Kysely<Tables>, events),
}

export type ActivityView = ActivityRow & { entity_name: string | null; actor_email: string | null; actor_name: string | null }

/** A profile's display name: first and last name, or the email while both are blank (as goals name owners). */
const displayName = sql<string>`coalesce(nullif(trim(u.first_name || ' ' || u.last_name), ''), u.email)`

/**
 * The organization's latest activity the viewer may see, newest first: accounts and contacts (every
 * member reads them), and leads and deals under their lists' rule (an admin sees all; a member the
 * ones they created or are assigned to). Each with the record's current name and the actor.
 */
export async function recentActivity(db: Kysely<any>, viewer: Viewer, limit: number): Promise<ActivityView[]> {
  const member = viewer.profileId
  const mayRead = (table: string) =>
    viewer.isAdmin ? sql`true` : member === null ? sql`false` : sql`EXISTS (SELECT 1 FROM ${sql.table(table)} r WHERE r.id = a.entity_id AND r.org_id = a.org_id AND (r.created_by = ${member} OR ${member}::uuid = ANY (r.assigned_to)))`
  const { rows } = await sql<ActivityView>`SELECT a.*,
      CASE a.entity_type
        WHEN 'Account' THEN (SELECT r.name FROM accounts r WHERE r.id = a.entity_id AND r.org_id = a.org_id)
        WHEN 'Contact' THEN (SELECT trim(r.first_name || ' ' || coalesce(r.last_name, '')) FROM contacts r WHERE r.id = a.entity_id AND r.org_id = a.org_id)
        WHEN 'Lead' THEN (SELECT trim(r.first_name || ' ' || coalesce(r.last_name, '')) FROM leads r WHERE r.id = a.entity_id AND r.org_id = a.org_id)
        WHEN 'Opportunity' THEN (SELECT r.name FROM opportunities r WHERE r.id = a.entity_id AND r.org_id = a.org_id)
      END AS entity_name,
      u.email AS actor_email, CASE WHEN u.id IS NULL THEN NULL ELSE ${displayName} END AS actor_name
    FROM dashboard_activity a
    LEFT JOIN profiles p ON p.id = a.actor_id AND p.org_id = a.org_id
    LEFT JOIN users u ON u.id = p.user_id
    WHERE a.org_id = ${viewer.orgId}
      AND (a.entity_type IN ('Account', 'Contact')
        OR (a.entity_type = 'Lead' AND ${mayRead('leads')})
        OR (a.entity_type = 'Opportunity' AND ${mayRead('opportunities')}))
    ORDER BY a.at DESC, a.position_commit DESC, a.position_prepare DESC
    LIMIT ${limit}`.execute(db)
  return rows
}
