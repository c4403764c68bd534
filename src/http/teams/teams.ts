import { randomUUID } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { teamDecider, teamStreams } from '../../commands/team/team.ts'
import { withClaimedName, withReleasedName, withRenamedClaim } from '../../commands/unique-name.ts'
import { ValidationError, orNotFound } from '../../errors.ts'
import { listTeams, membersOf, teamOf } from '../../projections/team/teams.ts'
import type { TeamMember, TeamRow } from '../../projections/team/teams.ts'
import type { Deps } from '../../deps.ts'
import { requestCommands } from '../kernel/commands.ts'
import { identityOf, requireAdmin } from '../kernel/auth.ts'
import { relationErrors } from '../../projections/record/relations.ts'
import { ErrorBody, IdParams, Message, PageQuery, authErrors, pageOf } from '../kernel/schemas/common.ts'
import { formList } from '../kernel/schemas/form-values.ts'

const Member = z.object({ id: z.uuid().describe('Profile id'), email: z.string(), role: z.string(), is_active: z.boolean().describe('False once the profile is deactivated; it stays a member') })
const Team = z.object({
  id: z.uuid(),
  name: z.string(),
  description: z.string().nullable(),
  users: z.array(Member).describe('Members, by email'),
  created_by: z.uuid().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
})
const Users = formList(z.array(z.uuid())).describe('Profile ids of the members: the whole set. New members must be active profiles of this organization')
const TeamBody = z.object({
  name: z.string().trim().min(1, 'This field may not be blank.').max(100),
  description: z.string().trim().max(2000).nullable().optional().describe('Omitted on PUT: cleared'),
  users: Users,
})
const TeamPatch = TeamBody.partial()
const ListQuery = PageQuery.extend({
  name: z.string().optional().describe('Case-insensitive contains on the name'),
  team_name: z.string().optional().describe("The same as name (the original's name); name wins"),
})
const SCOPE = 'team'
const writeErrors = { 400: ErrorBody, ...authErrors, 404: ErrorBody } as const

const teamBody = (row: TeamRow, members: readonly TeamMember[]) => ({
  id: row.id,
  name: row.name,
  description: row.description,
  users: members.filter((m) => m.team_id === row.id).map(({ id, email, role, is_active }) => ({ id, email, role, is_active })),
  created_by: row.created_by,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
})

type Changes = { name?: string; description?: string | null; users?: string[] }

/**
 * Teams (issue 4): any member reads; admins create, edit and delete. Names are unique per
 * organization, case-insensitively, also under concurrency; deleting removes the team and frees its name.
 */
export function teamRoutes(deps: Deps): FastifyPluginAsyncZod {
  const { db, clock } = deps
  const found = (orgId: string, id: string) => orNotFound(teamOf(db, orgId, id))
  const detail = async (orgId: string, id: string) => {
    const row = await found(orgId, id)
    return teamBody(row, await membersOf(db, [row.id]))
  }
  // Members already in the team may stay after their profile is deactivated; anyone added must be active here.
  const checkMembers = async (orgId: string, users: readonly string[], current: readonly string[] = []) => {
    const errors = await relationErrors(db, orgId, 'profiles', users, current)
    if (errors) throw new ValidationError({ users: errors })
  }

  const update = async (request: FastifyRequest, reply: FastifyReply, id: string, changes: Changes) => {
    const { orgId } = requireAdmin(request)
    const current = await found(orgId, id)
    if (changes.users) await checkMembers(orgId, changes.users, (await membersOf(db, [current.id])).map((m) => m.id))
    const commands = requestCommands(deps, request, reply)
    const name = changes.name ?? current.name
    await withRenamedClaim(commands.run, { scope: SCOPE, orgId, ownerId: current.id, name, previousName: current.name, field: 'name' }, (run) =>
      run(teamDecider, teamStreams.stream(current.id), { type: 'UpdateTeam', orgId, ...changes, at: clock().toISOString() }),
    )
    await commands.settle()
    return detail(orgId, current.id)
  }

  return async (app) => {
    const TeamList = pageOf(Team).extend({
      teams: z.array(Team).describe('The same page as results (the original\'s name)'),
      teams_count: z.number().int().describe('The same as count (the original\'s name)'),
    })
    app.get('/api/teams/', { schema: { tags: ['teams'], summary: 'Teams of the organization, by name', querystring: ListQuery, response: { 200: TeamList, ...authErrors } } }, async (request) => {
      const { orgId } = identityOf(request)
      const { limit, offset, name, team_name } = request.query
      const { count, rows } = await listTeams(db, orgId, { limit, offset, name: name ?? team_name })
      const members = await membersOf(db, rows.map((row) => row.id))
      const results = rows.map((row) => teamBody(row, members))
      return { count, offset, limit, results, teams: results, teams_count: count }
    })

    app.post('/api/teams/', { schema: { tags: ['teams'], summary: 'Create a team (admins)', body: TeamBody, response: { 201: Team, ...writeErrors } } }, async (request, reply) => {
      const identity = requireAdmin(request)
      const { name, description, users } = request.body
      await checkMembers(identity.orgId, users)
      const commands = requestCommands(deps, request, reply)
      const teamId = randomUUID()
      await withClaimedName(commands.run, { scope: SCOPE, orgId: identity.orgId, ownerId: teamId, name, field: 'name' }, (run) =>
        run(teamDecider, teamStreams.stream(teamId), { type: 'CreateTeam', teamId, orgId: identity.orgId, name, description: description ?? null, users, actorId: identity.profileId, at: clock().toISOString() }),
      )
      await commands.settle()
      return reply.code(201).send(await detail(identity.orgId, teamId))
    })

    app.get('/api/teams/:id/', { schema: { tags: ['teams'], summary: 'One team with its members', params: IdParams, response: { 200: Team, ...authErrors, 404: ErrorBody } } }, async (request) => detail(identityOf(request).orgId, request.params.id))

    app.put('/api/teams/:id/', { schema: { tags: ['teams'], summary: 'Replace name, description and members (admins)', params: IdParams, body: TeamBody, response: { 200: Team, ...writeErrors } } }, async (request, reply) =>
      update(request, reply, request.params.id, { ...request.body, description: request.body.description ?? null }),
    )

    app.patch('/api/teams/:id/', { schema: { tags: ['teams'], summary: 'Change the named fields only (admins)', params: IdParams, body: TeamPatch, response: { 200: Team, ...writeErrors } } }, async (request, reply) => update(request, reply, request.params.id, request.body))

    app.delete('/api/teams/:id/', { schema: { tags: ['teams'], summary: 'Delete a team (admins): removed for good, its name becomes free', params: IdParams, response: { 200: Message, ...authErrors, 404: ErrorBody } } }, async (request, reply) => {
      const { orgId } = requireAdmin(request)
      const current = await found(orgId, request.params.id)
      const commands = requestCommands(deps, request, reply)
      await withReleasedName(commands.run, { scope: SCOPE, orgId, ownerId: current.id, name: current.name }, (run) =>
        run(teamDecider, teamStreams.stream(current.id), { type: 'DeleteTeam', orgId, at: clock().toISOString() }),
      )
      await commands.settle()
      return { error: false as const, message: 'Team deleted' }
    })
  }
}
