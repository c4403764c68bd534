import { searchProjector } from '../projections/search/search.ts'
import { searchKindsOf } from '../projections/search/search-documents.ts'
import type { ModuleOverModules } from './manifest.ts'

/**
 * Search: one box over the records of every module whose manifest declares a `search` kind (leads,
 * deals, accounts, contacts, solutions and tasks).
 */
export const searchModule: ModuleOverModules = (modules) => {
  const kinds = searchKindsOf(modules.map((module) => module.search))
  return {
    name: 'search',
    routes: async (deps) => {
      const { searchRoutes } = await import('../http/search/search.ts')
      return [searchRoutes(deps, kinds)]
    },
    projectors: [searchProjector(kinds)],
  }
}
