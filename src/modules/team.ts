import { teamsProjector } from '../projections/team/teams.ts'
import type { ModuleManifest } from './manifest.ts'

/** Teams: named groups of members that records are shared with. */
export const teamModule: ModuleManifest = {
  name: 'team',
  routes: async (deps) => {
    const { teamRoutes } = await import('../http/teams/teams.ts')
    return [teamRoutes(deps)]
  },
  projectors: [teamsProjector],
  idKinds: [
    [/^\/api\/teams\/\{id\}/, 'team'],
  ],
}
