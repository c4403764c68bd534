import { solutionsProjector } from '../projections/solution/solutions.ts'
import type { ModuleManifest } from './manifest.ts'

/** Solutions: knowledge-base articles. */
export const solutionModule: ModuleManifest = {
  name: 'solution',
  routes: async (deps) => {
    const { solutionRoutes } = await import('../http/solutions/solutions.ts')
    return [solutionRoutes(deps)]
  },
  projectors: [solutionsProjector],
  idKinds: [
    [/^\/api\/cases\/solutions\/\{id\}/, 'solution'],
  ],
}
