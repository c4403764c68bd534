import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { activeMembers, addMember, adminContact, memberPage, validTokenCounts } from '../../identity/users.ts'
import type { MemberFilters, Page } from '../../identity/users.ts'
import type { Db } from '../../db/database.ts'
import { allTeams, memberIdsOf } from '../../projections/team/teams.ts'
import type { Deps } from '../../deps.ts'
import { identityOf, requireAdmin } from '../kernel/auth.ts'
import { ErrorBody, authErrors, nextOffset } from '../kernel/schemas/common.ts'
import { Pagination, Phone, Profile, RoleEnum, profileBody } from './schemas.ts'

const ListQuery = Pagination.extend({
  email: z.string().optional().describe('Case-insensitive contains on the email'),
  role: z.string().optional().describe('Exact role; an unknown value matches nothing'),
})

const Count = z.number().int().describe('Members in the whole filtered section')
const NextOffset = z.number().int().nullable().describe('Offset of the next page, or null on the last page')
const ListedProfile = Profile.extend({
  active_token_count: z.number().int().describe('Personal access tokens of the profile neither revoked nor expired: on an inactive profile, tokens that would work again on reactivation'),
})
const ActiveSection = z.object({ active_users_count: Count, active_users: z.array(ListedProfile).describe('This page'), offset: NextOffset })
const InactiveSection = z.object({ inactive_users_count: Count, inactive_users: z.array(ListedProfile).describe('This page'), offset: NextOffset })

const UsersList = z.object({
  active_users: ActiveSection,
  inactive_users: InactiveSection,
  admin_email: z.string().nullable().describe("Email of the organization's earliest active admin, its contact for members"),
  roles: z.array(z.tuple([z.string(), z.string()])).describe('`[value, label]` pairs'),
  status: z.array(z.tuple([z.string(), z.string()])).describe('`[value, label]` pairs accepted by POST /api/user/{user_id}/status/'),
})

const CreateUser = z.object({
  email: z.email('Enter a valid email address.'),
  role: RoleEnum,
  phone: Phone.optional(),
})

const Created = z.object({ error: z.literal(false), message: z.string(), id: z.uuid().describe('Profile id'), user_id: z.uuid().describe('User id') })

const ROLES: [string, string][] = [['ADMIN', 'ADMIN'], ['USER', 'USER']]
const STATUSES: [string, string][] = [['Active', 'Active'], ['Inactive', 'Inactive']]

async function listSection(db: Db, orgId: string, active: boolean, filters: MemberFilters, page: Page, now: Date) {
  const { rows, count } = await memberPage(db, orgId, active, filters, page)
  const tokens = await validTokenCounts(db, orgId, rows.map((row) => row.id), now)
  return { count, rows: rows.map((row) => ({ ...profileBody(row), active_token_count: tokens.get(row.id) ?? 0 })), offset: nextOffset(page.offset, rows.length, count) }
}

/** The organization's members as a whole (issue 3); one member is handled in user.ts. */
export function usersRoutes({ db, clock }: Deps): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/api/users/',
      {
        schema: {
          tags: ['users'],
          summary: "The organization's members, active and inactive (admins)",
          description: 'Both sections are paged by the same `limit` and `offset` (default 10), newest member first.',
          querystring: ListQuery,
          response: { 200: UsersList, ...authErrors },
        },
      },
      async (request) => {
        const { orgId } = requireAdmin(request)
        const { limit, offset, ...filters } = request.query
        const now = clock()
        const [active, inactive, adminEmail] = await Promise.all([
          listSection(db, orgId, true, filters, { limit, offset }, now),
          listSection(db, orgId, false, filters, { limit, offset }, now),
          adminContact(db, orgId),
        ])
        return {
          active_users: { active_users_count: active.count, active_users: active.rows, offset: active.offset },
          inactive_users: { inactive_users_count: inactive.count, inactive_users: inactive.rows, offset: inactive.offset },
          admin_email: adminEmail,
          roles: ROLES,
          status: STATUSES,
        }
      },
    )

    app.post(
      '/api/users/',
      {
        schema: {
          tags: ['users'],
          summary: 'Add a user to the organization (admins)',
          description:
            'Creates the user when no user has this email (compared case-insensitively across the whole service) and gives them a profile here. ' +
            'A user who already has a profile in this organization, active or not, is refused with 400 on `email`. ' +
            'A user of another organization is given a profile here at once (an invitation they accept is decided but not built: docs/api-guide.md).',
          body: CreateUser,
          response: { 200: Created, 400: ErrorBody, ...authErrors },
        },
      },
      async (request) => {
        const { orgId } = requireAdmin(request)
        const { profileId, userId } = await addMember(db, orgId, request.body)
        return { error: false as const, message: 'User created', id: profileId, user_id: userId }
      },
    )

    app.get(
      '/api/users/get-teams-and-users/',
      {
        schema: {
          tags: ['users'],
          summary: 'Teams and active members, for assignment pickers',
          description: '`teams` holds every team of the organization, by name, with the profile ids of all its members (deactivated ones included). `profiles` holds every active member, ordered by email.',
          response: { 200: z.object({ teams: z.array(z.object({ id: z.uuid(), name: z.string(), users: z.array(z.uuid()).describe('Member profile ids') })), profiles: z.array(Profile) }), ...authErrors },
        },
      },
      async (request) => {
        const { orgId } = identityOf(request)
        const [teams, profiles] = await Promise.all([allTeams(db, orgId), activeMembers(db, orgId)])
        const members = await memberIdsOf(db, teams.map((team) => team.id))
        return { teams: teams.map(({ id, name }) => ({ id, name, users: members.get(id) ?? [] })), profiles: profiles.map(profileBody) }
      },
    )
  }
}
