import type { IncomingHttpHeaders } from 'node:http'
import type { Logger } from 'pino'
import type { Db } from '../db/database.ts'
import { UnauthorizedError } from '../errors.ts'
import type { EventStore } from '../eventstore/event-store.ts'
import { recordCredentialEvent } from './audit.ts'
import type { Identity } from './identity.ts'
import { isAccessClaims } from './jwt.ts'
import { lookupsOf } from '../lookups/lookups.ts'
import type { Lookups } from '../lookups/lookups.ts'
import { organizationByApiKeyHash, personalAccessTokenByHash, touchPersonalAccessToken } from './queries.ts'
import { API_KEY_PREFIX, PAT_PREFIX, hashSecret } from './secrets.ts'

export type AuthenticatorDeps = { db: Db; lookups?: Lookups; store: EventStore; logger: Logger; clock: () => Date; verifyJwt: (token: string) => unknown }

const INACTIVE = 'Token owner or organization is inactive'

/**
 * Resolves the caller from the request's credential (§5): a JWT or PAT as `Authorization: Bearer`,
 * a PAT or the organization API key in the `Token` header. Any other header (an `org` header
 * included) is ignored; every failure is a 401.
 */
export function createAuthenticator(deps: AuthenticatorDeps): (headers: IncomingHttpHeaders) => Promise<Identity> {
  const lookups = lookupsOf(deps)
  async function viaJwt(token: string): Promise<Identity> {
    let claims: unknown
    try {
      claims = deps.verifyJwt(token)
    } catch {
      throw new UnauthorizedError('Invalid or expired access token')
    }
    if (!isAccessClaims(claims)) throw new UnauthorizedError('Invalid or expired access token')
    const member = await lookups.membership(claims.sub, claims.org_id)
    if (!member) throw new UnauthorizedError('Invalid or expired access token')
    if (!member.profile_active || !member.org_active) throw new UnauthorizedError('User profile or organization is inactive')
    return { userId: member.user_id, profileId: member.profile_id, orgId: member.org_id, role: member.role, email: member.email, credential: 'jwt', scopes: [], tokenId: null }
  }

  async function viaPersonalAccessToken(raw: string): Promise<Identity> {
    const token = await personalAccessTokenByHash(deps.db, hashSecret(raw))
    const now = deps.clock()
    if (!token || token.revoked_at || (token.expires_at && token.expires_at <= now)) throw new UnauthorizedError('Invalid, expired or revoked token')
    if (!token.profile_active || !token.org_active) throw new UnauthorizedError(INACTIVE)
    void markUsed(token.token_id, token.profile_id, token.org_id, now)
    return { userId: token.user_id, profileId: token.profile_id, orgId: token.org_id, role: token.role, email: token.email, credential: 'pat', scopes: token.scopes, tokenId: token.token_id }
  }

  // Off the request path: a failure here must not fail the request it was recorded for.
  async function markUsed(tokenId: string, profileId: string, orgId: string, now: Date): Promise<void> {
    try {
      if (await touchPersonalAccessToken(deps.db, tokenId, now)) {
        await recordCredentialEvent(deps.store, orgId, { type: 'PersonalAccessTokenFirstUsed', data: { token_id: tokenId, profile_id: profileId } }, { actorId: profileId })
      }
    } catch (error) {
      deps.logger.warn({ err: error, tokenId }, 'could not record token use')
    }
  }

  async function viaApiKey(raw: string): Promise<Identity> {
    const org = await organizationByApiKeyHash(deps.db, hashSecret(raw))
    if (!org) throw new UnauthorizedError('Invalid API key')
    if (!org.is_active) throw new UnauthorizedError('Organization is inactive')
    // The key speaks for the whole organization, read-only (enforced by the auth hook).
    return { userId: null, profileId: null, orgId: org.id, role: 'ADMIN', email: null, credential: 'api_key', scopes: [], tokenId: null }
  }

  return async (headers) => {
    const authorization = headers.authorization
    const tokenHeader = typeof headers.token === 'string' ? headers.token.trim() : undefined
    if (authorization) {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization)
      if (!match) throw new UnauthorizedError('Expected an Authorization header of the form "Bearer <token>"')
      const token = match[1]!
      return token.startsWith(PAT_PREFIX) ? viaPersonalAccessToken(token) : viaJwt(token)
    }
    if (tokenHeader) {
      if (tokenHeader.startsWith(PAT_PREFIX)) return viaPersonalAccessToken(tokenHeader)
      if (tokenHeader.startsWith(API_KEY_PREFIX)) return viaApiKey(tokenHeader)
      throw new UnauthorizedError('Invalid token')
    }
    throw new UnauthorizedError('Authentication credentials were not provided')
  }
}
