import { sql } from 'kysely'
import type { FreshTables } from '../../db/copy-rows.ts'
import { insertRowsOnce } from '../../db/insert-rows.ts'
import type { RecordedEvent } from '../../eventstore/event-store.ts'
import type { Viewer } from '../opportunity/queries.ts'
import { READ_MODEL_ERASED } from '../../privacy/seal.ts'
import { withErasure } from '../privacy/erasing.ts'
import type { ErasedSubject, ErasingProjector } from '../privacy/erasing.ts'
import { ACTIVITY_ACTIONS, ATTACHED, attachedDescription } from '../record/record-kinds.ts'
import type { ActivityAction, Reading, RecordKinds } from '../record/record-kinds.ts'
import type { DashboardActivityTable } from './tables.ts'
import type { Db } from '../../db/database.ts'

/**
 * The activity feed (the original's Activity; GET /api/activities/ and the dashboard's recent
 * activity), a projection of the event log: one row per event a record kind's manifest reads as
 * activity (`record.activity`: of accounts, contacts, leads, deals and tasks, created, changed,
 * moved, converted, deleted, commented on, a file attached or removed …). A row keeps who acted
 * (the event's actor), what was done and to which record; the record's name and who may see it
 * are read from the record's own read model when the feed is asked for, so a renamed record shows
 * its current name and visibility follows the list rules of today. Rows are keyed by event id
 * (applying an event twice inserts nothing), and nothing here depends on another read model, so a
 * rebuild gives the same rows.
 */
export type ActivityRow = Omit<DashboardActivityTable, 'action'> & { action: ActivityAction }

export const ACTION_DISPLAY: Record<ActivityAction, string> = { CREATE: 'Created', UPDATE: 'Updated', DELETE: 'Deleted', COMMENT: 'Commented' }
export { ACTIVITY_ACTIONS }
export type { ActivityAction }

/** What each event the kinds read becomes: its record kind, its noun, and its reading. */
type Known = { entity: string; noun: string; reading: Reading }
const readingsOf = (kinds: RecordKinds): ReadonlyMap<string, Known> =>
  new Map(kinds.specs.flatMap((spec) => Object.entries(spec.activity).map(([type, reading]) => [type, { entity: spec.entityType, noun: spec.noun, reading }] as const)))

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
function rowOf(readings: ReadonlyMap<string, Known>, event: RecordedEvent): (Omit<ActivityRow, 'org_id'> & { org_id: string | null }) | undefined {
  const known = readings.get(event.type)
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
    description: known.reading.describe(data, known.noun),
    at: Number.isNaN(at.getTime()) ? event.createdAt : at,
    position_commit: event.position.commit.toString(),
    position_prepare: event.position.prepare.toString(),
  }
}

/** One row per event, keyed by it: idempotent live, and copied into a rebuild's fresh tables (`fresh`), where each event comes once. */
async function applyEvents(db: Db, readings: ReadonlyMap<string, Known>, events: readonly RecordedEvent[], fresh?: FreshTables): Promise<void> {
  let run: ActivityRow[] = []
  const flush = async () => {
    await insertRowsOnce(db, 'dashboard_activity', 'event_id', run, fresh)
    run = []
  }
  for (const event of events) {
    const row = rowOf(readings, event)
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

/** An erased person's entries (issue 31): of those, only an attachment's names a personal field, its file. */
async function eraseEntries(db: Db, subject: ErasedSubject): Promise<void> {
  await sql`UPDATE dashboard_activity SET description = ${attachedDescription(READ_MODEL_ERASED)} WHERE entity_id = ${subject.id} AND starts_with(description, ${ATTACHED})`.execute(db)
}

/** The feed over the record kinds the manifests declare (modules/activity.ts). */
export function dashboardActivityProjector(kinds: RecordKinds): ErasingProjector {
  const readings = readingsOf(kinds)
  return withErasure({
    name: 'dashboard_activity',
    // 2: attachments, comment edits and removals, line items, lead board moves, account emails and tasks are activity too (issue 19). 3: erasures (issue 31). Plus the kinds' own versions.
    version: 3 + kinds.version,
    eventTypes: [...readings.keys()],
    tables: ['dashboard_activity'],
    createTables,
    createIndexes,
    apply: (trx, event) => applyEvents(trx, readings, [event]),
    applyBatch: (trx, events, fresh) => applyEvents(trx, readings, events, fresh),
  }, eraseEntries)
}

export type ActivityView = ActivityRow & { entity_name: string | null; entity_erased: boolean; actor_email: string | null; actor_name: string | null; link: string }

/** A profile's display name: first and last name, or the email while both are blank (as goals name owners). */
const displayName = sql<string>`coalesce(nullif(trim(u.first_name || ' ' || u.last_name), ''), u.email)`

/** The original's filters of the feed, and a page of it. */
export type ActivityFilter = { entityType?: string; entityId?: string; actorId?: string; limit: number; offset: number }

/**
 * The organization's activity the viewer may see, newest first (by when, then by place in the log):
 * entries about records of the `kinds` the viewer may see by the record's list rule (record-kinds.ts),
 * each with the record's current name, its page and the actor.
 */
export async function listActivities(db: Db, kinds: RecordKinds, viewer: Viewer, filter: ActivityFilter): Promise<ActivityView[]> {
  const conditions = activityConditions(kinds, viewer, filter)
  const { rows } = await sql<Omit<ActivityView, 'link'>>`SELECT a.*, ${kinds.nameSql('a')} AS entity_name, ${kinds.erasedSql('a')} AS entity_erased,
      u.email AS actor_email, CASE WHEN u.id IS NULL THEN NULL ELSE ${displayName} END AS actor_name
    FROM dashboard_activity a
    LEFT JOIN profiles p ON p.id = a.actor_id AND p.org_id = a.org_id
    LEFT JOIN users u ON u.id = p.user_id
    WHERE ${sql.join(conditions, sql` AND `)}
    ORDER BY a.at DESC, a.position_commit DESC, a.position_prepare DESC
    LIMIT ${filter.limit} OFFSET ${filter.offset}`.execute(db)
  return rows.map((row) => ({ ...row, link: kinds.link(row.entity_type, row.entity_id) }))
}

function activityConditions(kinds: RecordKinds, viewer: Viewer, filter: Omit<ActivityFilter, 'limit' | 'offset'>) {
  const conditions = [sql`a.org_id = ${viewer.orgId}`, kinds.mayReadSql('a', viewer)]
  if (filter.entityType) conditions.push(sql`a.entity_type = ${filter.entityType}`)
  if (filter.entityId) conditions.push(sql`a.entity_id = ${filter.entityId}`)
  if (filter.actorId) conditions.push(sql`a.actor_id = ${filter.actorId}`)
  return conditions
}

/** How many entries `listActivities` pages through (a record's feed counts its whole history, as the original's paginator). */
export async function countActivities(db: Db, kinds: RecordKinds, viewer: Viewer, filter: Omit<ActivityFilter, 'limit' | 'offset'>): Promise<number> {
  const { rows } = await sql<{ n: string }>`SELECT count(*) AS n FROM dashboard_activity a WHERE ${sql.join(activityConditions(kinds, viewer, filter), sql` AND `)}`.execute(db)
  return Number(rows[0]!.n)
}

/** Whether the viewer may read the record `entityType`/`entityId` of their organization, by its kind's list rule. */
export async function mayReadRecord(db: Db, kinds: RecordKinds, viewer: Viewer, entityType: string, entityId: string): Promise<boolean> {
  const { rows } = await sql<{ ok: boolean }>`SELECT ${kinds.mayReadSql('a', viewer)} AS ok FROM (SELECT ${entityType}::text AS entity_type, ${entityId}::uuid AS entity_id, ${viewer.orgId}::uuid AS org_id) a`.execute(db)
  return rows[0]!.ok
}

/** The dashboard's latest activity: the feed's first `limit` entries. */
export const recentActivity = (db: Db, kinds: RecordKinds, viewer: Viewer, limit: number): Promise<ActivityView[]> => listActivities(db, kinds, viewer, { limit, offset: 0 })
