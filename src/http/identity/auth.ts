import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { perIp } from '../kernel/rate-limit.ts'
import { z } from 'zod'
import { RefreshTokenReusedError, createSessions, signInSubject } from '../../identity/sessions.ts'
import type { Deps } from '../../deps.ts'
import { identityOf } from '../kernel/auth.ts'
import { ErrorBody, Message, authErrors } from '../kernel/schemas/common.ts'

const SignedOut = Message.extend({ detail: z.string().describe('The original service\'s field for the same message') })
import { RefreshTokenBody, SignIn, TokenPair } from './session-schemas.ts'

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
            'Send `{refresh}` (the original name; `{refresh_token}` is accepted too); the answer carries the pair under both names, `access`/`refresh` and `access_token`/`refresh_token`. The presented refresh token is revoked and a new one issued in the same sign-in (family). Presenting a refresh token that was already used ' +
            'is treated as theft: every token of that sign-in is revoked and the answer is 401. Expired, revoked or unknown tokens and inactive profiles or organizations are 401.',
          body: RefreshTokenBody,
          response: { 200: TokenPair, 400: ErrorBody, 401: ErrorBody },
        },
      },
      async (request) => {
        try {
          return await sessions.rotate(request.body.refresh)
        } catch (error) {
          if (error instanceof RefreshTokenReusedError) request.log.warn({ familyId: error.familyId }, 'refresh token reused; revoked its family')
          throw error
        }
      },
    )

    app.post(
      '/api/auth/logout/',
      {
        config: { auth: 'optional', rateLimit: perIp(deps.config.authRateLimitMax) },
        schema: {
          tags: ['auth'],
          summary: 'End the sign-in a refresh token belongs to',
          description:
            'Revokes the presented refresh token (`{refresh}`, or `{refresh_token}`) and every token of the same sign-in. No bearer is needed: holding the refresh token ' +
            "proves possession, and a signed-out client's access token has often expired. With a bearer, only a token of that user is revoked. " +
            'Idempotent: an unknown or already revoked token is answered 200 and left alone. The access token stays valid until it expires (`expires_in`), so clients should drop it.',
          body: RefreshTokenBody,
          response: { 200: SignedOut, 400: ErrorBody, 401: ErrorBody, 429: ErrorBody },
        },
      },
      async (request) => {
        await sessions.logout(request.body.refresh, request.identity?.userId ?? undefined)
        return { error: false as const, message: 'Signed out', detail: 'Signed out.' }
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
            'Starts a new sign-in (refresh-token family), recorded as the profile\'s `last_login` in that organization. `refresh`, when given and one of the caller\'s, is the token being replaced: its sign-in ends ' +
            'in the same transaction; otherwise the current sign-in stays valid until logged out. Answers the pair, `current_org`, `user` and `profile`.',
          body: z.object({ org_id: z.uuid(), refresh: z.string().min(1).max(200).optional() }),
          response: { 200: SignIn, 400: ErrorBody, ...authErrors },
        },
      },
      async (request) => {
        const userId = identityOf(request).userId!
        const subject = await signInSubject(deps.db, userId, request.body.org_id)
        const { refresh } = request.body
        if (refresh) await sessions.logout(refresh, userId)
        return sessions.signIn(deps.db, subject)
      },
    )
  }
}
