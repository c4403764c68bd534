import type { ModuleManifest } from './manifest.ts'

/** The dashboard: counts and widgets over the other modules' queries; no read model of its own. */
export const dashboardModule: ModuleManifest = {
  name: 'dashboard',
  routes: async (deps) => {
    const { dashboardRoutes } = await import('../http/dashboard/dashboard.ts')
    return [dashboardRoutes(deps)]
  },
}
