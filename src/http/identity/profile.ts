import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { updateMember } from '../../identity/member-updates.ts'
import { memberById, requireUser } from '../../identity/users.ts'
import type { Deps } from '../../deps.ts'
import { identityOf } from '../kernel/auth.ts'
import { ErrorBody, authErrors } from '../kernel/schemas/common.ts'
import { OwnProfile, PersonName, Phone, ownProfileBody } from './schemas.ts'

const ProfileAnswer = z.object({ error: z.literal(false), user_obj: OwnProfile })

const EditOwnProfile = z.object({ first_name: PersonName.optional(), last_name: PersonName.optional(), phone: Phone.optional() })

const userOnly = 'Needs a user credential (a sign-in JWT or a personal access token); the organization API key, which belongs to no user, gets 403.'

/** The caller's own profile in the organization of their credential. */
export function profileRoutes({ db, clock }: Deps): FastifyPluginAsyncZod {
  return async (app) => {
    for (const url of ['/api/profile/', '/api/auth/profile/']) {
      app.get(url, { schema: { tags: ['profile'], summary: "The caller's own profile, with its role and organization", description: userOnly, response: { 200: ProfileAnswer, ...authErrors } } }, async (request) => {
        const identity = identityOf(request)
        const { profileId } = requireUser(identity)
        return { error: false as const, user_obj: ownProfileBody(await memberById(db, identity.orgId, profileId)) }
      })
    }

    app.patch(
      '/api/profile/',
      {
        schema: {
          tags: ['profile'],
          summary: "Edit the caller's own name and phone",
          description: `The role cannot be changed here (admins use PUT /api/user/{id}/); other fields are ignored. ${userOnly}`,
          body: EditOwnProfile,
          response: { 200: ProfileAnswer.extend({ message: z.string() }), 400: ErrorBody, ...authErrors },
        },
      },
      async (request) => {
        const identity = identityOf(request)
        const { profileId } = requireUser(identity)
        const member = await updateMember(db, identity.orgId, profileId, request.body, clock())
        return { error: false as const, message: 'Profile updated', user_obj: ownProfileBody(member) }
      },
    )
  }
}
