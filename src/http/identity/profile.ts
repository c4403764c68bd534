import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { updateMember } from '../../identity/member-updates.ts'
import { memberById, requireUser } from '../../identity/users.ts'
import type { Deps } from '../../deps.ts'
import { lookupsOf } from '../../lookups/lookups.ts'
import { identityOf } from '../kernel/auth.ts'
import { ErrorBody, authErrors } from '../kernel/schemas/common.ts'
import { FullName, OwnProfile, PersonName, Phone, namesOf, ownProfileBody } from './schemas.ts'
import type { MemberRow } from '../../identity/users.ts'
import type { Db } from '../../db/database.ts'
import { allTeams, memberIdsOf } from '../../projections/team/teams.ts'

const ProfileAnswer = z.object({ error: z.literal(false), user_obj: OwnProfile.extend({ teams: z.array(z.string()).describe('Names of the teams the caller belongs to here, by name') }) })

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
    for (const url of ['/api/profile/', '/api/auth/profile/']) {
      app.get(url, { schema: { tags: ['profile'], summary: "The caller's own profile, with its role and organization", description: userOnly, response: { 200: ProfileAnswer, ...authErrors } } }, async (request) => {
        const identity = identityOf(request)
        const { profileId } = requireUser(identity)
        return { error: false as const, user_obj: await ownProfileWithTeams(db, await memberById(db, identity.orgId, profileId)) }
      })
    }

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
