import { searchProjector } from '../projections/search/search.ts'
import type { ModuleManifest } from './manifest.ts'

/** Search: one box over leads, deals, accounts, contacts, solutions and tasks. */
export const searchModule: ModuleManifest = {
  name: 'search',
  routes: async (deps) => {
    const { searchRoutes } = await import('../http/search/search.ts')
    return [searchRoutes(deps)]
  },
  projectors: [searchProjector],
}
