import { recordKindsOf } from '../projections/record/record-kinds.ts'
import type { ModuleOverModules } from './manifest.ts'

/** The dashboard: counts and widgets over the other modules' queries (its recent activity over the manifests' `record` kinds); no read model of its own. */
export const dashboardModule: ModuleOverModules = (modules) => {
  const kinds = recordKindsOf(modules.map((module) => module.record))
  return {
    name: 'dashboard',
    routes: async (deps) => {
      const [{ dashboardRoutes }, { todayRoutes }] = await Promise.all([import('../http/dashboard/dashboard.ts'), import('../http/dashboard/today.ts')])
      return [dashboardRoutes(deps, kinds), todayRoutes(deps)]
    },
  }
}
