import { dashboardActivityProjector } from '../projections/activity/dashboard-activity.ts'
import { recordKindsOf } from '../projections/record/record-kinds.ts'
import type { ModuleOverModules } from './manifest.ts'

/** The activity feed: who did what to which record, of every module whose manifest declares a `record` kind. */
export const activityModule: ModuleOverModules = (modules) => {
  const kinds = recordKindsOf(modules.map((module) => module.record))
  return {
    name: 'activity',
    routes: async (deps) => {
      const { activityRoutes } = await import('../http/activities/activities.ts')
      const { caseActivityRoutes } = await import('../http/activities/case-activities.ts')
      return [activityRoutes(deps, kinds), caseActivityRoutes(deps, kinds)]
    },
    projectors: [dashboardActivityProjector(kinds)],
  }
}
