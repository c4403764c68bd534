import t from 'tap'
import { teamDecider } from '../../src/commands/team/team.ts'
import type { TeamEvent } from '../../src/commands/team/team.ts'
import { NotFoundError } from '../../src/errors.ts'
import { spec } from '../helpers/given-when-then.ts'

const org = '00000000-0000-4000-8000-00000000000a'
const otherOrg = '00000000-0000-4000-8000-00000000000b'
const at = '2026-11-22T09:00:00.000Z'
const created: TeamEvent = { type: 'TeamCreated', data: { team_id: 't1', org_id: org, name: 'Sales', description: null, users: ['p1', 'p2'], created_by: 'p0', at } }
const deleted: TeamEvent = { type: 'TeamDeleted', data: { at } }

t.test('team decider', async (t) => {
  const team = spec(t, teamDecider)
  const create = { type: 'CreateTeam', teamId: 't1', orgId: org, name: 'Sales', description: null, users: ['p2', 'p1', 'p2'], actorId: 'p0', at } as const
  team.given([]).when({ ...create, users: [...create.users] }).then([created], 'members are recorded as a sorted set')
  team.given([created]).when({ ...create, users: [...create.users] }).then([], 'creating again is a no-op')

  team.given([created]).when({ type: 'UpdateTeam', orgId: org, name: 'Field sales', description: 'EMEA', at }).then([{ type: 'TeamUpdated', data: { name: 'Field sales', description: 'EMEA', at } }])
  team.given([created]).when({ type: 'UpdateTeam', orgId: org, users: ['p3'], at }).then([{ type: 'TeamMembersChanged', data: { users: ['p3'], at } }], 'only the members changed')
  team.given([created]).when({ type: 'UpdateTeam', orgId: org, name: 'X', users: [], at }).then([
    { type: 'TeamUpdated', data: { name: 'X', at } },
    { type: 'TeamMembersChanged', data: { users: [], at } },
  ])
  team.given([created]).when({ type: 'UpdateTeam', orgId: org, name: 'Sales', description: null, users: ['p2', 'p1'], at }).then([], 'no change, no event')
  team.given([created, { type: 'TeamMembersChanged', data: { users: ['p3'], at } }]).when({ type: 'UpdateTeam', orgId: org, users: ['p3'], at }).then([], 'the folded member set counts')
  team.given([created]).when({ type: 'UpdateTeam', orgId: otherOrg, name: 'X', at }).thenRejects(NotFoundError)
  team.given([]).when({ type: 'UpdateTeam', orgId: org, name: 'X', at }).thenRejects(NotFoundError)

  team.given([]).when({ type: 'DeleteTeam', orgId: org, at }).thenRejects(NotFoundError)
  team.given([created]).when({ type: 'DeleteTeam', orgId: otherOrg, at }).thenRejects(NotFoundError)
  team.given([created]).when({ type: 'DeleteTeam', orgId: org, at }).then([deleted])
  team.given([created, deleted]).when({ type: 'DeleteTeam', orgId: org, at }).then([], 'deleting twice is a no-op')
  team.given([created, deleted]).when({ type: 'UpdateTeam', orgId: org, name: 'X', at }).thenRejects(NotFoundError)
})
