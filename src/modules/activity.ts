import { dashboardActivityProjector } from '../projections/activity/dashboard-activity.ts'
import type { ModuleManifest } from './manifest.ts'

/** The activity feed: who did what to which record. */
export const activityModule: ModuleManifest = {
  name: 'activity',
  routes: async (deps) => {
    const { activityRoutes } = await import('../http/activities/activities.ts')
    return [activityRoutes(deps)]
  },
  projectors: [dashboardActivityProjector],
}
