import type { Deps } from '../../deps.ts'
import { NotFoundError, orNotFound } from '../../errors.ts'
import type { Position } from '../../eventstore/event-store.ts'
import { notificationOf, unreadNotificationIds } from '../../projections/notification/notifications.ts'
import type { Caller } from '../caller.ts'
import { commandSession } from '../command-session.ts'
import { notificationStreams, notificationsDecider } from './notification.ts'
import type { NotificationCommand } from './notification.ts'

/**
 * What a member does with their own notifications: read one, read all, delete one (the original's
 * POST {id}/read/, POST read-all/, DELETE {id}/). Each is a command on the member's notification
 * stream; a notification must be one of theirs the read model shows (404 otherwise, whoever's it is).
 * The organization API key has no notifications.
 */
type NotificationDeps = Pick<Deps, 'db' | 'store' | 'clock'>

function recipientOf(caller: Caller): string {
  if (caller.profileId === null) throw new NotFoundError('Notification not found')
  return caller.profileId
}

async function run(deps: NotificationDeps, caller: Caller, recipient: string, command: NotificationCommand): Promise<Position | null> {
  const session = commandSession(deps.store, caller)
  await session.run(notificationsDecider, notificationStreams.stream(recipient), command)
  return session.position()
}

export async function readNotification(deps: NotificationDeps, caller: Caller, id: string): Promise<Position | null> {
  const recipient = recipientOf(caller)
  const found = await orNotFound(notificationOf(deps.db, recipient, id))
  if (found.read_at) return null
  return run(deps, caller, recipient, { type: 'ReadNotification', notificationId: found.id, at: deps.clock().toISOString() })
}

/** Reads every notification created at or before `before` (now when absent) that is unread. */
export async function readAllNotifications(deps: NotificationDeps, caller: Caller, before: Date | undefined): Promise<{ read: number; position: Position | null }> {
  if (caller.profileId === null) return { read: 0, position: null }
  const now = deps.clock()
  const cutoff = before ?? now
  const unreadIds = await unreadNotificationIds(deps.db, caller.profileId, cutoff)
  if (!unreadIds.length) return { read: 0, position: null }
  const position = await run(deps, caller, caller.profileId, { type: 'ReadAllNotifications', unreadIds, before: cutoff.toISOString(), at: now.toISOString() })
  return { read: unreadIds.length, position }
}

export async function deleteNotification(deps: NotificationDeps, caller: Caller, id: string): Promise<Position | null> {
  const recipient = recipientOf(caller)
  const found = await orNotFound(notificationOf(deps.db, recipient, id))
  return run(deps, caller, recipient, { type: 'DeleteNotification', notificationId: found.id, at: deps.clock().toISOString() })
}
