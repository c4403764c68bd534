import { z } from 'zod'
import type { NotificationEvent } from '../commands/notification/notification.ts'
import { At, Id, Ids, at, eventsOf, noPersonalData } from '../events/event-schemas.ts'
import { createDueNotifier } from '../processes/due-notifier.ts'
import { notificationsProjector } from '../projections/notification/notifications.ts'
import { recordKindsOf } from '../projections/record/record-kinds.ts'
import type { ModuleOverModules } from './manifest.ts'

/**
 * Notifications: a member's feed, raised by the events of every module whose manifest declares a
 * `record` kind (assigned, mentioned) and by the due notifier (tasks due, deals turned red).
 */
export const notificationModule: ModuleOverModules = (modules) => {
  const kinds = recordKindsOf(modules.map((module) => module.record))
  return {
    name: 'notification',
    events: noPersonalData(eventsOf<NotificationEvent>()({
      // notifications-<profile id>
      NotificationRaised: {
        stream: 'notifications',
        description: "A scheduled process raised a notification for the stream's member (a task due or overdue, a deal turned red), under an id derived from its cause.",
        data: z.strictObject({ notification_id: Id, org_id: Id, recipient_id: Id, verb: z.string(), entity_type: z.string(), entity_id: Id, data: z.record(z.string(), z.union([z.string(), z.number(), z.null()])), ...at }),
      },
      NotificationRead: { stream: 'notifications', description: 'The member read one of their notifications.', data: z.strictObject({ notification_id: Id, ...at }) },
      NotificationsReadAll: { stream: 'notifications', description: 'The member read all their notifications up to `before`: those that were unread then.', data: z.strictObject({ notification_ids: Ids, before: At, ...at }) },
      NotificationDeleted: { stream: 'notifications', description: 'The member deleted one of their notifications.', data: z.strictObject({ notification_id: Id, ...at }) },
    })),
    routes: async (deps) => {
      const { notificationRoutes } = await import('../http/notifications/notifications.ts')
      return [notificationRoutes(deps, kinds)]
    },
    projectors: [notificationsProjector(kinds)],
    processes: [({ config, ...deps }) => createDueNotifier({ ...deps, intervalMs: config.dueNotifyIntervalMs })],
    idKinds: [
      [/^\/api\/notifications\/\{id\}/, 'notification'],
    ],
  }
}
