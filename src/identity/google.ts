import type { errors as JoseErrors } from 'jose'
import type { Logger } from 'pino'
import { z } from 'zod'
import type { Config } from '../config.ts'
import { DomainError, UnauthorizedError } from '../errors.ts'

export type GoogleIdentity = { subject: string; email: string; emailVerified: boolean }

export type GoogleVerifier = (idToken: string) => Promise<GoogleIdentity>

// Google has sent `email_verified` as the string "true" in some token generations.
const Claims = z.object({
  sub: z.string().min(1),
  email: z.email(),
  email_verified: z.union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')]).default(false),
})

/** Failures of the key set fetch rather than of the token: our side or Google's, not the caller's. */
const KEY_SET_UNAVAILABLE = new Set(['ERR_JWKS_TIMEOUT', 'ERR_JWKS_INVALID', 'ERR_JOSE_GENERIC'])

/**
 * Verifies Google ID tokens against Google's published keys (fetched once, cached and refetched on
 * an unknown key id by jose), with issuer, audience and expiry checked at the injected clock.
 * Null when no client id is configured: Google sign-in is off.
 */
export function createGoogleVerifier(
  config: Pick<Config, 'googleClientIds' | 'googleIssuers' | 'googleJwksUrl'>,
  clock: () => Date,
  logger: Pick<Logger, 'warn'>,
): GoogleVerifier | null {
  if (config.googleClientIds.length === 0) return null
  // jose is loaded with the first token, not with every process that builds the routes.
  const jose = import('jose').then((loaded) => ({ ...loaded, keys: loaded.createRemoteJWKSet(new URL(config.googleJwksUrl)) }))
  const options = { issuer: [...config.googleIssuers], audience: [...config.googleClientIds], algorithms: ['RS256'] }
  return async (idToken) => {
    const { jwtVerify, keys, errors } = await jose
    let payload: unknown
    try {
      ;({ payload } = await jwtVerify(idToken, keys, { ...options, currentDate: clock() }))
    } catch (error) {
      const refused = refusal(error, errors)
      if (refused.statusCode === 503) logger.warn({ err: error, jwksUrl: config.googleJwksUrl }, 'could not load the Google key set')
      throw refused
    }
    const claims = Claims.safeParse(payload)
    if (!claims.success) throw new UnauthorizedError('Invalid Google ID token: expected `sub` and `email` claims')
    return { subject: claims.data.sub, email: claims.data.email, emailVerified: claims.data.email_verified }
  }
}

function refusal(error: unknown, errors: typeof JoseErrors): DomainError {
  if (!(error instanceof errors.JOSEError) || KEY_SET_UNAVAILABLE.has(error.code)) {
    return new DomainError(503, 'Google sign-in is temporarily unavailable: could not load Google\'s signing keys')
  }
  if (error instanceof errors.JWTExpired) return new UnauthorizedError('Invalid Google ID token: expired')
  if (error instanceof errors.JWTClaimValidationFailed) return new UnauthorizedError(`Invalid Google ID token: unexpected \`${error.claim}\` claim`)
  return new UnauthorizedError('Invalid Google ID token')
}
