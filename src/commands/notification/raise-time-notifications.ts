import type { Deps } from '../../deps.ts'
import type { Position } from '../../eventstore/event-store.ts'
import type { TimeCause } from '../../projections/notification/notification-causes.ts'
import { knownNotificationIds } from '../../projections/notification/notifications.ts'
import { commandSession } from '../command-session.ts'
import { nameBasedId } from '../name-based-id.ts'
import { notificationStreams, notificationsDecider } from './notification.ts'

/** A time-caused notification's id: the same cause and person always give the same one. */
export const timeNotificationId = (cause: Pick<TimeCause, 'verb' | 'entityId' | 'key'>, recipient: string): string => nameBasedId(`${cause.verb}:${cause.entityId}:${cause.key}:${recipient}`)

/**
 * Raises a notification for each cause and person not told yet, on the person's notification
 * stream, as the system (no actor). Those the read model already holds are skipped without a
 * command; the decider refuses the rest twice over (a read model behind, two processes at once).
 * Answers how many were raised, and the last position appended (what a reader waits for).
 */
export async function raiseTimeNotifications(deps: Pick<Deps, 'db' | 'store' | 'clock'>, causes: readonly TimeCause[]): Promise<{ raised: number; position: Position | null }> {
  const wanted = causes.flatMap((cause) => cause.recipients.map((recipient) => ({ cause, recipient, id: timeNotificationId(cause, recipient) })))
  const known = await knownNotificationIds(deps.db, wanted.map((w) => w.id))
  const at = deps.clock().toISOString()
  let raised = 0
  let position: Position | null = null
  for (const { cause, recipient, id } of wanted.filter((w) => !known.has(w.id))) {
    const session = commandSession(deps.store, { orgId: cause.orgId, profileId: null, isAdmin: false })
    const content = { verb: cause.verb, entity_type: cause.entityType, entity_id: cause.entityId, data: cause.data }
    const { events, position: appended } = await session.run(notificationsDecider, notificationStreams.stream(recipient), { type: 'RaiseNotification', notificationId: id, orgId: cause.orgId, recipientId: recipient, content, at })
    raised += events.length
    if (appended) position = appended
  }
  return { raised, position }
}
