import { z } from 'zod'
import type { TeamEvent } from '../commands/team/team.ts'
import { By, Id, Ids, at, eventsOf, noPersonalData } from '../events/event-schemas.ts'
import { teamsProjector } from '../projections/team/teams.ts'
import type { ModuleManifest } from './manifest.ts'

/** Teams: named groups of members that records are shared with. */
export const teamModule: ModuleManifest = {
  name: 'team',
  events: noPersonalData(eventsOf<TeamEvent>()({
    // team-<id>
    TeamCreated: { stream: 'team', description: 'A team was created with its members (sorted, whole).', data: z.strictObject({ team_id: Id, org_id: Id, name: z.string(), description: z.string().nullable(), users: Ids, created_by: By, ...at }) },
    TeamUpdated: { stream: 'team', description: 'A team was renamed or redescribed: only the changed values.', data: z.strictObject({ name: z.string().optional(), description: z.string().nullable().optional(), ...at }) },
    TeamMembersChanged: { stream: 'team', description: "A team's members changed (the whole new set, sorted).", data: z.strictObject({ users: Ids, ...at }) },
    TeamDeleted: { stream: 'team', description: 'A team was deleted for good.', data: z.strictObject(at) },
  })),
  routes: async (deps) => {
    const { teamRoutes } = await import('../http/teams/teams.ts')
    return [teamRoutes(deps)]
  },
  projectors: [teamsProjector],
  idKinds: [
    [/^\/api\/teams\/\{id\}/, 'team'],
  ],
}
