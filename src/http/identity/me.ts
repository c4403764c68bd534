import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { Deps } from '../../deps.ts'
import { identityOf } from '../kernel/auth.ts'
import { authErrors } from '../kernel/schemas/common.ts'

const Me = z.object({
  user_id: z.uuid().nullable(),
  profile_id: z.uuid().nullable(),
  org_id: z.uuid(),
  email: z.string().nullable(),
  role: z.enum(['ADMIN', 'USER']),
  credential: z.enum(['jwt', 'pat', 'api_key']),
  scopes: z.array(z.string()),
})

/** Who the credential says the caller is. */
export function meRoutes(_deps: Deps): FastifyPluginAsyncZod {
  return async (app) => {
    app.get('/api/auth/me/', { schema: { tags: ['auth'], summary: 'The authenticated identity', response: { 200: Me, ...authErrors } } }, async (request) => {
      const i = identityOf(request)
      return { user_id: i.userId, profile_id: i.profileId, org_id: i.orgId, email: i.email, role: i.role, credential: i.credential, scopes: [...i.scopes] }
    })
  }
}
