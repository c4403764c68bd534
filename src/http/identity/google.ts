import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { perIp } from '../kernel/rate-limit.ts'
import { z } from 'zod'
import { DomainError, ForbiddenError, UnauthorizedError } from '../../errors.ts'
import { createGoogleVerifier } from '../../identity/google.ts'
import { createSessions, signInSubject, userByEmail } from '../../identity/sessions.ts'
import type { Deps } from '../../deps.ts'
import { ErrorBody } from '../kernel/schemas/common.ts'
import { OptionalOrg, SignIn, signInErrors } from './session-schemas.ts'

const IdToken = z.string().min(1).max(8192)

/** `id_token` is ours (the web's Google Identity Services name); `idToken` is what the original's phone app posts. */
const GoogleSignIn = OptionalOrg.extend({
  id_token: IdToken.optional().describe('The ID token (JWT) Google Identity Services gave the client'),
  idToken: IdToken.optional().describe('Same as `id_token` (the original\'s name, which its phone app sends)'),
})
  .refine((body) => body.id_token !== undefined || body.idToken !== undefined, { message: 'Required: id_token (or idToken)', path: ['id_token'] })
  .transform(({ idToken, id_token, ...body }) => ({ ...body, id_token: (id_token ?? idToken)! }))

const ROUTES = [
  { url: '/api/auth/google/', summary: 'Sign in with a Google ID token' },
  { url: '/api/auth/google/callback/', summary: 'Sign in with a Google ID token (callback path; same body and answer as /api/auth/google/)' },
] as const

const DESCRIPTION =
  'Verifies the ID token against Google\'s keys (issuer, audience = `GOOGLE_CLIENT_ID`, expiry) and signs in the existing user with that email, ' +
  'which Google must have verified. Accounts are not created here. 401: invalid token or unverified email; 403: no user with that email, or no ' +
  'active profile (in `org_id`); 501: Google sign-in is not configured; 503: Google\'s keys could not be loaded.'

/** Google sign-in: both paths of the route index take the same body, so one handler serves both. */
export function googleRoutes(deps: Deps): FastifyPluginAsyncZod {
  return async (app) => {
    const sessions = createSessions({ ...deps, jwt: app.jwt })
    const verify = createGoogleVerifier(deps.config, deps.clock, deps.logger)

    for (const route of ROUTES) {
      app.post(
        route.url,
        {
          config: { auth: 'public', rateLimit: perIp(deps.config.authRateLimitMax) },
          schema: { tags: ['auth'], summary: route.summary, description: DESCRIPTION, body: GoogleSignIn, response: { 200: SignIn, ...signInErrors, 429: ErrorBody, 501: ErrorBody, 503: ErrorBody } },
        },
        async (request) => {
          if (!verify) throw new DomainError(501, 'Google sign-in is not configured')
          const google = await verify(request.body.id_token)
          if (!google.emailVerified) throw new UnauthorizedError('Google has not verified the email of this account')
          const user = await userByEmail(deps.db, google.email)
          if (!user) throw new ForbiddenError('No account uses the email of this Google account; ask an administrator to invite you')
          const subject = await signInSubject(deps.db, user.id, request.body.org_id)
          return sessions.signIn(deps.db, subject)
        },
      )
    }
  }
}
