import { goalsProjector } from '../projections/goal/goals.ts'
import type { ModuleManifest } from './manifest.ts'

/** Goals: sales targets of a member, a team or the organization. */
export const goalModule: ModuleManifest = {
  name: 'goal',
  routes: async (deps) => {
    const { goalRoutes } = await import('../http/goals/goals.ts')
    return [goalRoutes(deps)]
  },
  projectors: [goalsProjector],
  idKinds: [
    [/^\/api\/opportunities\/goals\/\{id\}/, 'goal'],
  ],
}
