import type { FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { updateMember } from '../../identity/member-updates.ts'
import { memberById, requireUser } from '../../identity/users.ts'
import type { Deps } from '../../deps.ts'
import { lookupsOf } from '../../lookups/lookups.ts'
import { identityOf } from '../kernel/auth.ts'
import { ErrorBody, authErrors } from '../kernel/schemas/common.ts'
import { FullName, OwnProfile, PersonName, Phone, RoleEnum, namesOf, ownProfileBody } from './schemas.ts'
import type { MemberRow } from '../../identity/users.ts'
import type { Db } from '../../db/database.ts'
import { allTeams, memberIdsOf } from '../../projections/team/teams.ts'

const OwnProfileWithTeams = OwnProfile.extend({ teams: z.array(z.string()).describe('Names of the teams the caller belongs to here, by name') })
const ProfileAnswer = z.object({ error: z.literal(false), user_obj: OwnProfileWithTeams })

/**
 * The original's `ProfileDetailSerializer`, flat, which its phone app's profile screen reads from
 * /api/auth/profile/; `error` and `user_obj` (this API's /api/profile/ answer) are kept beside it.
 */
const ProfileDetail = ProfileAnswer.extend({
  id: z.uuid().describe('Profile id'),
  user: z.object({ id: z.uuid(), email: z.string(), name: z.string(), profile_pic: z.string().nullable() }),
  org: z.object({ id: z.uuid(), name: z.string() }),
  role: RoleEnum,
  is_organization_admin: z.boolean(),
  has_sales_access: z.boolean().describe('Always true: every active member has sales and marketing access here'),
  has_marketing_access: z.boolean(),
  phone: z.string(),
  date_of_joining: z.string().describe('The day the profile was created (YYYY-MM-DD, UTC)'),
  is_active: z.boolean(),
  teams: z.array(z.string()),
  last_login: z.string().nullable(),
})

function profileDetail(own: z.infer<typeof OwnProfileWithTeams>) {
  const { user_details: user } = own
  return {
    error: false as const,
    user_obj: own,
    id: own.id,
    user: { id: user.id, email: user.email, name: user.name || user.email.split('@')[0]!, profile_pic: null },
    org: own.org,
    role: own.role,
    is_organization_admin: own.role === 'ADMIN',
    has_sales_access: true,
    has_marketing_access: true,
    phone: own.phone,
    date_of_joining: own.created_at.slice(0, 10),
    is_active: own.is_active,
    teams: own.teams,
    last_login: user.last_login,
  }
}

const EditOwnProfile = z.object({ first_name: PersonName.optional(), last_name: PersonName.optional(), name: FullName.optional(), phone: Phone.optional() }).transform(namesOf)

/** The caller's own profile with the names of their teams (the original adds them on this endpoint only). */
async function ownProfileWithTeams(db: Db, member: MemberRow) {
  const teams = await allTeams(db, member.org_id)
  const members = await memberIdsOf(db, teams.map((team) => team.id))
  return { ...ownProfileBody(member), teams: teams.filter((team) => members.get(team.id)?.includes(member.id)).map((team) => team.name) }
}

const userOnly = 'Needs a user credential (a sign-in JWT or a personal access token); the organization API key, which belongs to no user, gets 403.'

/** The caller's own profile in the organization of their credential. */
export function profileRoutes(deps: Deps): FastifyPluginAsyncZod {
  const { db, clock } = deps
  // Membership and organization rows are cached per process: every write here says so once committed.
  const lookups = lookupsOf(deps)
  return async (app) => {
    const own = (request: FastifyRequest) => {
      const identity = identityOf(request)
      return memberById(db, identity.orgId, requireUser(identity).profileId).then((member) => ownProfileWithTeams(db, member))
    }
    const summary = "The caller's own profile, with its role and organization"
    app.get('/api/profile/', { schema: { tags: ['profile'], summary, description: userOnly, response: { 200: ProfileAnswer, ...authErrors } } }, async (request) => ({ error: false as const, user_obj: await own(request) }))
    app.get(
      '/api/auth/profile/',
      { schema: { tags: ['profile'], summary, description: `The original's flat profile detail (what its phone app reads), with \`error\` and \`user_obj\` as /api/profile/ answers them. ${userOnly}`, response: { 200: ProfileDetail, ...authErrors } } },
      async (request) => profileDetail(await own(request)),
    )

    app.patch(
      '/api/profile/',
      {
        schema: {
          tags: ['profile'],
          summary: "Edit the caller's own name (first_name and last_name, or the whole name) and phone",
          description: `The role cannot be changed here (admins use PUT /api/user/{id}/); other fields are ignored. ${userOnly}`,
          body: EditOwnProfile,
          response: { 200: ProfileAnswer.extend({ message: z.string() }), 400: ErrorBody, ...authErrors },
        },
      },
      async (request) => {
        const identity = identityOf(request)
        const { profileId } = requireUser(identity)
        const member = await updateMember(db, identity.orgId, profileId, request.body, clock())
        lookups.changed()
        return { error: false as const, message: 'Profile updated', user_obj: await ownProfileWithTeams(db, member) }
      },
    )
  }
}
