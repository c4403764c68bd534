import { createDueNotifier } from '../processes/due-notifier.ts'
import { notificationsProjector } from '../projections/notification/notifications.ts'
import type { ModuleManifest } from './manifest.ts'

/** Notifications: a member's feed, raised by requests and by the due notifier (tasks due, deals turned red). */
export const notificationModule: ModuleManifest = {
  name: 'notification',
  routes: async (deps) => {
    const { notificationRoutes } = await import('../http/notifications/notifications.ts')
    return [notificationRoutes(deps)]
  },
  projectors: [notificationsProjector],
  processes: [({ config, ...deps }) => createDueNotifier({ ...deps, intervalMs: config.dueNotifyIntervalMs })],
  idKinds: [
    [/^\/api\/notifications\/\{id\}/, 'notification'],
  ],
}
