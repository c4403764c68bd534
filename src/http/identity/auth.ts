import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { perIp } from '../kernel/rate-limit.ts'
import { z } from 'zod'
import { RefreshTokenReusedError, createSessions, signInSubject } from '../../identity/sessions.ts'
import type { Deps } from '../../deps.ts'
import { identityOf } from '../kernel/auth.ts'
import { ErrorBody, Message, authErrors } from '../kernel/schemas/common.ts'
import { RefreshTokenBody, TokenPair } from './session-schemas.ts'

/**
 * Sessions after sign-in: refresh-token rotation, logout and switching organization. Access
 * tokens are stateless JWTs; what can be revoked is the refresh token behind them.
 */
export function authRoutes(deps: Deps): FastifyPluginAsyncZod {
  return async (app) => {
    const sessions = createSessions({ ...deps, jwt: app.jwt })

    app.post(
      '/api/auth/refresh-token/',
      {
        config: { auth: 'public', rateLimit: perIp(deps.config.authRateLimitMax) },
        schema: {
          tags: ['auth'],
          summary: 'Exchange a refresh token for a new token pair',
          description:
            'The presented refresh token is revoked and a new one issued in the same sign-in (family). Presenting a refresh token that was already used ' +
            'is treated as theft: every token of that sign-in is revoked and the answer is 401. Expired, revoked or unknown tokens and inactive profiles or organizations are 401.',
          body: RefreshTokenBody,
          response: { 200: TokenPair, 400: ErrorBody, 401: ErrorBody },
        },
      },
      async (request) => {
        try {
          return await sessions.rotate(request.body.refresh_token)
        } catch (error) {
          if (error instanceof RefreshTokenReusedError) request.log.warn({ familyId: error.familyId }, 'refresh token reused; revoked its family')
          throw error
        }
      },
    )

    app.post(
      '/api/auth/logout/',
      {
        config: { auth: 'interactive' },
        schema: {
          tags: ['auth'],
          summary: 'End the sign-in a refresh token belongs to',
          description:
            "Revokes the caller's refresh token and every token of the same sign-in. Idempotent: an unknown, already revoked or someone else's token " +
            'is answered 200 and left alone. The access token stays valid until it expires (`expires_in`), so clients should drop it.',
          body: RefreshTokenBody,
          response: { 200: Message, 400: ErrorBody, ...authErrors },
        },
      },
      async (request) => {
        const identity = identityOf(request)
        await sessions.logout(request.body.refresh_token, identity.userId!)
        return { error: false as const, message: 'Signed out' }
      },
    )

    app.post(
      '/api/auth/switch-org/',
      {
        config: { auth: 'interactive' },
        schema: {
          tags: ['auth'],
          summary: 'A new token pair for another organization of the caller',
          description:
            'Needs an interactive sign-in. The caller must have an active profile in an active organization `org_id` (403 otherwise). ' +
            'Starts a new sign-in (refresh-token family); the current one stays valid until logged out.',
          body: z.object({ org_id: z.uuid() }),
          response: { 200: TokenPair, 400: ErrorBody, ...authErrors },
        },
      },
      async (request) => {
        const subject = await signInSubject(deps.db, identityOf(request).userId!, request.body.org_id)
        return sessions.issue(deps.db, subject)
      },
    )
  }
}
