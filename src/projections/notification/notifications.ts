import { sql } from 'kysely'
import type { RawBuilder } from 'kysely'
import { nameBasedId } from '../../commands/name-based-id.ts'
import { NOTIFICATION_EVENT_TYPES, notificationStreams } from '../../commands/notification/notification.ts'
import type { NotificationEvent } from '../../commands/notification/notification.ts'
import type { Position, RecordedEvent } from '../../eventstore/event-store.ts'
import { domainEventOf } from '../../events/versions.ts'
import { READ_MODEL_ERASED } from '../../privacy/seal.ts'
import { withErasure } from '../privacy/erasing.ts'
import type { ErasedSubject, ErasingProjector } from '../privacy/erasing.ts'
import type { RecordKinds } from '../record/record-kinds.ts'
import type { Viewer } from '../../visibility/policy.ts'
import type { NotificationRow } from './tables.ts'
import type { Db } from '../../db/database.ts'

export type { NotificationRow } from './tables.ts'

async function createTables(db: Db): Promise<void> {
  await sql`CREATE TABLE notifications (id uuid PRIMARY KEY, org_id uuid NOT NULL, recipient_id uuid NOT NULL, verb text NOT NULL, actor_id uuid, entity_type text NOT NULL,
    entity_id uuid NOT NULL, data jsonb NOT NULL, read_at timestamptz, is_deleted boolean NOT NULL DEFAULT false, created_at timestamptz NOT NULL,
    position_commit bigint NOT NULL, position_prepare bigint NOT NULL)`.execute(db)
  await sql`CREATE INDEX notifications_recipient ON notifications (recipient_id, created_at DESC, position_commit DESC, position_prepare DESC) WHERE NOT is_deleted`.execute(db)
  await sql`CREATE TABLE notification_assignees (entity_id uuid PRIMARY KEY, org_id uuid NOT NULL, assigned_to uuid[] NOT NULL)`.execute(db)
}

/** What a record event that can notify someone is (RecordKindSpec `notifiedBy`): its kind, and which of the kind's notifying events (`told`: under its verb). */
type Cause = { type: string; role: 'created' | 'updated' | 'commented' } | { type: string; role: 'told'; verb: string }
const causesOf = (kinds: RecordKinds): ReadonlyMap<string, Cause> =>
  new Map(
    kinds.specs.flatMap((spec) => [
      ...(['created', 'updated', 'commented'] as const).map((role): [string, Cause] => [spec.notifiedBy[role], { type: spec.entityType, role }]),
      ...Object.entries(spec.notifiedBy.told ?? {}).map(([event, verb]): [string, Cause] => [event, { type: spec.entityType, role: 'told', verb }]),
    ]),
  )

/** The events the notifications read model applies, over the record kinds the manifests declare: what the live stream of notifications waits for too. */
export const notificationEventTypes = (kinds: RecordKinds): string[] => [...causesOf(kinds).keys(), ...NOTIFICATION_EVENT_TYPES]

/** Comment excerpts in a notification are at most this long, as the original's. */
const EXCERPT_LENGTH = 200
const excerpt = (text: string) => (text.trim().length <= EXCERPT_LENGTH ? text.trim() : `${text.trim().slice(0, EXCERPT_LENGTH - 1).trimEnd()}…`)

/**
 * The assignee list an event sets, if it sets one: creations and the flat updates of accounts and
 * contacts carry the new list, lead and deal updates `changes.assigned_to.to`.
 */
function assignedBy(data: Record<string, unknown>): string[] | undefined {
  const changes = data.changes as { assigned_to?: { to?: unknown } } | undefined
  const list = changes ? changes.assigned_to?.to : data.assigned_to
  return Array.isArray(list) ? list.filter((id): id is string => typeof id === 'string') : undefined
}

type Derived = Pick<NotificationRow, 'recipient_id' | 'verb' | 'data'>

async function applyRecordEvent(db: Db, event: RecordedEvent, cause: Cause): Promise<void> {
  const { type, role } = cause
  // Stored shapes: upcasting only adds fields read here with a default.
  const data = (event.data ?? {}) as Record<string, unknown>
  const entityId = event.streamName.slice(event.streamName.indexOf('-') + 1)
  const actor = event.metadata.actorId ?? null
  const verbOf = (what: string) => `${type.toLowerCase()}.${what}`
  const derived: Derived[] = []
  let orgId = (event.metadata.orgId ?? data.org_id) as string | undefined
  if (cause.role === 'told') {
    // The event names whom it tells; the notification carries the rest of its data (an escalation's level, breaches and actions).
    const { notify, at: _at, ...rest } = data
    const told = Array.isArray(notify) ? notify.filter((id): id is string => typeof id === 'string') : []
    for (const recipient of new Set(told)) derived.push({ recipient_id: recipient, verb: verbOf(cause.verb), data: rest })
  } else if (role === 'commented') {
    const mentions = Array.isArray(data.mentions) ? (data.mentions as string[]) : []
    for (const recipient of mentions) derived.push({ recipient_id: recipient, verb: verbOf('mentioned'), data: { comment_id: data.comment_id, comment_excerpt: excerpt(String(data.comment ?? '')) } })
  } else {
    const assigned = assignedBy(data)
    if (!assigned) return
    const creation = role === 'created'
    // A record created with no assignee costs nothing here: no row means no one (most creations, and a replay's bulk).
    if (creation && !assigned.length) return
    const before = creation ? undefined : await db.selectFrom('notification_assignees').select(['org_id', 'assigned_to']).where('entity_id', '=', entityId).executeTakeFirst()
    orgId ??= before?.org_id
    if (!orgId) return
    await db.insertInto('notification_assignees').values({ entity_id: entityId, org_id: orgId, assigned_to: assigned }).onConflict((oc) => oc.column('entity_id').doUpdateSet({ assigned_to: assigned })).execute()
    const previously = new Set(before?.assigned_to ?? [])
    for (const recipient of new Set(assigned)) if (!previously.has(recipient)) derived.push({ recipient_id: recipient, verb: verbOf('assigned'), data: {} })
  }
  const rows = derived
    .filter((d) => d.recipient_id !== actor)
    .map((d) => ({ ...d, id: nameBasedId(`notification:${event.id}:${d.recipient_id}`), org_id: orgId!, actor_id: actor, entity_type: type, entity_id: entityId, read_at: null, is_deleted: false, ...placeOf(event) }))
  if (rows.length && orgId) await db.insertInto('notifications').values(rows).onConflict((oc) => oc.column('id').doNothing()).execute()
}

const placeOf = (event: RecordedEvent) => ({ created_at: atOf(event), position_commit: event.position.commit.toString(), position_prepare: event.position.prepare.toString() })
function atOf(event: RecordedEvent): Date {
  const at = (event.data as { at?: unknown } | null)?.at
  const date = typeof at === 'string' ? new Date(at) : event.createdAt
  return Number.isNaN(date.getTime()) ? event.createdAt : date
}

async function applyNotificationEvent(db: Db, recorded: RecordedEvent): Promise<void> {
  const event = domainEventOf<NotificationEvent>(recorded)
  const recipient = notificationStreams.idOf(recorded.streamName)
  const mine = db.updateTable('notifications').where('recipient_id', '=', recipient)
  switch (event.type) {
    case 'NotificationRaised': {
      const { notification_id, org_id, verb, entity_type, entity_id, data } = event.data
      await db
        .insertInto('notifications')
        .values({ id: notification_id, org_id, recipient_id: recipient, verb, actor_id: null, entity_type, entity_id, data, read_at: null, is_deleted: false, ...placeOf(recorded) })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute()
      return
    }
    case 'NotificationRead':
      await mine.set({ read_at: new Date(event.data.at) }).where('id', '=', event.data.notification_id).where('read_at', 'is', null).execute()
      return
    case 'NotificationsReadAll':
      if (event.data.notification_ids.length) await mine.set({ read_at: new Date(event.data.at) }).where('id', 'in', event.data.notification_ids).where('read_at', 'is', null).execute()
      return
    case 'NotificationDeleted':
      await mine.set({ is_deleted: true }).where('id', '=', event.data.notification_id).execute()
  }
}

export const NOTIFICATIONS = 'notifications'

/** An erased person's notifications (issue 31): a mention's excerpt quotes a comment on their record. */
async function eraseExcerpts(db: Db, subject: ErasedSubject): Promise<void> {
  await sql`UPDATE notifications SET data = jsonb_set(data, '{comment_excerpt}', to_jsonb(${READ_MODEL_ERASED}::text)) WHERE entity_id = ${subject.id} AND data ? 'comment_excerpt'`.execute(db)
}

/** The notifications over the record kinds the manifests declare (modules/notification.ts). */
export function notificationsProjector(kinds: RecordKinds): ErasingProjector {
  const causes = causesOf(kinds)
  return withErasure({
    name: NOTIFICATIONS,
    // 2: erasures (issue 31). Plus the kinds' own versions.
    version: 2 + kinds.version,
    eventTypes: notificationEventTypes(kinds),
    tables: ['notifications', 'notification_assignees'],
    createTables,
    async apply(db, event) {
      const cause = causes.get(event.type)
      await (cause ? applyRecordEvent(db, event, cause) : applyNotificationEvent(db, event))
    },
  }, eraseExcerpts)
}

export type NotificationView = NotificationRow & { entity_name: string | null; entity_erased: boolean; link: string }

/** The original's list filters: unread only, and (the web app's poll) only those created after `since`. */
export type NotificationFilter = { unread: boolean; since?: Date; limit: number }

/** A member reading their notifications: their profile is the recipient. */
export type Recipient = Viewer & { profileId: string }

/** The recipient's live notifications about records they may see now (visibility/policy.ts): one about a deal they were unassigned from no longer shows. */
const live = (kinds: RecordKinds, recipient: Recipient) => sql<boolean>`n.recipient_id = ${recipient.profileId} AND NOT n.is_deleted AND ${kinds.mayReadSql('n', recipient)}`

async function viewsWhere(db: Db, kinds: RecordKinds, where: RawBuilder<boolean>, limit: number): Promise<NotificationView[]> {
  const { rows } = await sql<Omit<NotificationView, 'link'>>`SELECT n.*, ${kinds.nameSql('n')} AS entity_name, ${kinds.erasedSql('n')} AS entity_erased FROM notifications n WHERE ${where}
    ORDER BY n.created_at DESC, n.position_commit DESC, n.position_prepare DESC LIMIT ${limit}`.execute(db)
  return rows.map((row) => ({ ...row, link: kinds.link(row.entity_type, row.entity_id) }))
}

/**
 * A member's notifications, newest first, as the original lists them: `count` is the filtered
 * total (under `since`, how many arrived since), `unread_count` always the member's whole unread
 * count, so a poll refreshes the bell's badge too.
 */
export async function listNotifications(db: Db, kinds: RecordKinds, recipient: Recipient, filter: NotificationFilter): Promise<{ count: number; unread_count: number; rows: NotificationView[] }> {
  const conditions = [live(kinds, recipient)]
  if (filter.unread) conditions.push(sql<boolean>`n.read_at IS NULL`)
  if (filter.since) conditions.push(sql<boolean>`n.created_at > ${filter.since}`)
  const where = sql.join(conditions, sql` AND `) as RawBuilder<boolean>
  const [rows, counts] = await Promise.all([
    viewsWhere(db, kinds, where, filter.limit),
    sql<{ count: number; unread: number }>`SELECT (SELECT count(*)::int FROM notifications n WHERE ${where}) AS count,
      (SELECT count(*)::int FROM notifications n WHERE ${live(kinds, recipient)} AND n.read_at IS NULL) AS unread`.execute(db),
  ])
  return { count: counts.rows[0]!.count, unread_count: counts.rows[0]!.unread, rows }
}

/** A live notification of the member, or undefined: another member's id looks exactly like a missing one. */
export function notificationOf(db: Db, recipientId: string, id: string): Promise<Pick<NotificationRow, 'id' | 'read_at'> | undefined> {
  return db.selectFrom('notifications').select(['id', 'read_at']).where('recipient_id', '=', recipientId).where('id', '=', id).where('is_deleted', '=', false).executeTakeFirst()
}

/** The member's unread notifications created at or before `before`: what "read all" marks. */
export async function unreadNotificationIds(db: Db, recipientId: string, before: Date): Promise<string[]> {
  const rows = await db.selectFrom('notifications').select('id').where('recipient_id', '=', recipientId).where('is_deleted', '=', false).where('read_at', 'is', null).where('created_at', '<=', before).orderBy('created_at').execute()
  return rows.map((row) => row.id)
}

/** The member's live notifications made by the event at `position`: what the live stream sends for it. */
export const notificationsMadeAt = (db: Db, kinds: RecordKinds, recipient: Recipient, position: Position): Promise<NotificationView[]> =>
  viewsWhere(db, kinds, sql<boolean>`${live(kinds, recipient)} AND n.position_commit = ${position.commit.toString()} AND n.position_prepare = ${position.prepare.toString()}`, 100)


/** Which of these notification ids the read model holds (deleted ones too): causes already raised. */
export async function knownNotificationIds(db: Db, ids: readonly string[]): Promise<Set<string>> {
  if (!ids.length) return new Set()
  const rows = await db.selectFrom('notifications').select('id').where('id', 'in', ids).execute()
  return new Set(rows.map((row) => row.id))
}
