import { NotFoundError } from '../../errors.ts'
import type { Decider } from '../decider.ts'
import { streamCategory } from '../streams.ts'

/**
 * A member's notifications (issue 19): one stream per profile, `notifications-<profile id>`. What a
 * person must act on is mostly read off other streams by the notifications projector (a record
 * assigned to them, a comment mentioning them); what only the passing of time causes (a task falling
 * due, a deal turning red) is raised here by a scheduled process, under an id derived from its cause,
 * so raising it twice decides nothing. Reading, reading all and deleting are this stream's events
 * whichever way a notification came about: the command names a notification the read model showed
 * the recipient, and the stream remembers what was read or deleted.
 */

/** What a raised notification says: the original's verb (`task.overdue`), the record it is about and verb-specific details. */
export type NotificationContent = { verb: string; entity_type: string; entity_id: string; data: Record<string, string | number | null> }

// Events: the storage contract.
export type NotificationEvent =
  | { type: 'NotificationRaised'; data: NotificationContent & { notification_id: string; org_id: string; recipient_id: string; at: string } }
  | { type: 'NotificationRead'; data: { notification_id: string; at: string } }
  /** Every notification the recipient had unread up to `before`, as the read model listed them. */
  | { type: 'NotificationsReadAll'; data: { notification_ids: string[]; before: string; at: string } }
  | { type: 'NotificationDeleted'; data: { notification_id: string; at: string } }

// Fold: only what the decisions need.
export type NotificationsState = { raised: ReadonlySet<string>; read: ReadonlySet<string>; deleted: ReadonlySet<string> }

const plus = (set: ReadonlySet<string>, ids: readonly string[]) => new Set([...set, ...ids])

export function evolveNotifications(state: NotificationsState, event: NotificationEvent): NotificationsState {
  switch (event.type) {
    case 'NotificationRaised':
      return { ...state, raised: plus(state.raised, [event.data.notification_id]) }
    case 'NotificationRead':
      return { ...state, read: plus(state.read, [event.data.notification_id]) }
    case 'NotificationsReadAll':
      return { ...state, read: plus(state.read, event.data.notification_ids) }
    case 'NotificationDeleted':
      return { ...state, deleted: plus(state.deleted, [event.data.notification_id]) }
  }
}

// Decisions. The recipient's notifications the read model holds arrive in the command (a fact the
// use case looked up, 404 when the recipient has no such notification).
export type NotificationCommand =
  | { type: 'RaiseNotification'; notificationId: string; orgId: string; recipientId: string; content: NotificationContent; at: string }
  | { type: 'ReadNotification'; notificationId: string; at: string }
  | { type: 'ReadAllNotifications'; unreadIds: readonly string[]; before: string; at: string }
  | { type: 'DeleteNotification'; notificationId: string; at: string }

export function decideNotifications(command: NotificationCommand, state: NotificationsState): NotificationEvent[] {
  switch (command.type) {
    case 'RaiseNotification': {
      // Raised once per cause: the id is derived from it. A deleted one stays deleted.
      if (state.raised.has(command.notificationId)) return []
      const { notificationId, orgId, recipientId, content, at } = command
      return [{ type: 'NotificationRaised', data: { notification_id: notificationId, org_id: orgId, recipient_id: recipientId, ...content, at } }]
    }
    case 'ReadNotification':
      if (state.deleted.has(command.notificationId)) throw new NotFoundError('Notification not found')
      return state.read.has(command.notificationId) ? [] : [{ type: 'NotificationRead', data: { notification_id: command.notificationId, at: command.at } }]
    case 'ReadAllNotifications': {
      const unread = command.unreadIds.filter((id) => !state.read.has(id) && !state.deleted.has(id))
      return unread.length ? [{ type: 'NotificationsReadAll', data: { notification_ids: unread, before: command.before, at: command.at } }] : []
    }
    case 'DeleteNotification':
      return state.deleted.has(command.notificationId) ? [] : [{ type: 'NotificationDeleted', data: { notification_id: command.notificationId, at: command.at } }]
  }
}

export const notificationsDecider: Decider<NotificationCommand, NotificationsState, NotificationEvent> = {
  initialState: () => ({ raised: new Set(), read: new Set(), deleted: new Set() }),
  evolve: evolveNotifications,
  decide: decideNotifications,
}

export const notificationStreams = streamCategory('notifications')

/** The stream's event types, which the notifications projector reads. */
export const NOTIFICATION_EVENT_TYPES: readonly NotificationEvent['type'][] = ['NotificationRaised', 'NotificationRead', 'NotificationsReadAll', 'NotificationDeleted']
