import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { Deps } from '../../deps.ts'
import { userDetail } from '../../identity/session-claims.ts'
import { identityOf } from '../kernel/auth.ts'
import { authErrors } from '../kernel/schemas/common.ts'
import { UserDetail } from './session-schemas.ts'

/** The original's user detail, with who the credential says the caller is (our own fields, kept for existing clients). */
const Me = UserDetail.extend({
  id: z.uuid().nullable().describe('The user; null for the organization API key, which acts as no one'),
  email: z.string().nullable(),
  user_id: z.uuid().nullable(),
  profile_id: z.uuid().nullable(),
  org_id: z.uuid(),
  role: z.enum(['ADMIN', 'USER']),
  credential: z.enum(['jwt', 'pat', 'api_key']),
  scopes: z.array(z.string()),
})

export function meRoutes(deps: Deps): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/api/auth/me/',
      {
        schema: {
          tags: ['auth'],
          summary: 'The authenticated user and their organizations',
          description: 'The user (`id, email, name, profile_pic, is_active`), every organization they are an active member of, and what the credential acts as (`org_id, role, credential, scopes`).',
          response: { 200: Me, ...authErrors },
        },
      },
      async (request) => {
        const i = identityOf(request)
        const user = i.userId ? await userDetail(deps.db, i.userId) : undefined
        const self = user ?? { id: null, email: i.email, name: '', profile_pic: '', is_active: true, organizations: [] }
        return { ...self, user_id: i.userId, profile_id: i.profileId, org_id: i.orgId, role: i.role, credential: i.credential, scopes: [...i.scopes] }
      },
    )
  }
}
