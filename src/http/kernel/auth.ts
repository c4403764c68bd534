import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { IncomingHttpHeaders } from 'node:http'
import { ForbiddenError, UnauthorizedError } from '../../errors.ts'
import type { Identity } from '../../identity/identity.ts'
import type { PortalIdentity } from '../../identity/portal-sessions.ts'
import { actionOf, resourceOf, scopesAllow } from '../../identity/scopes.ts'
import { viewerOfIdentity } from '../../visibility/policy.ts'
import type { Viewer } from '../../visibility/policy.ts'

declare module 'fastify' {
  interface FastifyRequest {
    identity: Identity | null
    /** The customer contact of a portal route (`auth: 'portal'`); null on every other route. */
    portal: PortalIdentity | null
  }
  interface FastifyContextConfig {
    /**
     * `public`: no credential needed. `interactive`: a JWT only (credential management, §5 rule 5).
     * `optional`: the body carries its own proof (a refresh token); a valid bearer narrows what the
     * route may touch, and an absent or expired one is no reason to refuse. `portal`: a customer
     * portal token only (docs/portal.md), which no other route accepts.
     */
    auth?: 'public' | 'interactive' | 'optional' | 'portal'
  }
}

/**
 * Every /api/ route needs a credential unless it says `config: { auth: 'public' }`. The checks that
 * depend only on the credential live here, once: interactive-only routes, the read-only API key
 * and PAT scopes. Role and row rules belong to each route.
 */
export function registerAuth(app: FastifyInstance, authenticate: (headers: IncomingHttpHeaders) => Promise<Identity>, authenticatePortal: (headers: IncomingHttpHeaders) => PortalIdentity): void {
  app.decorateRequest('identity', null)
  app.decorateRequest('portal', null)
  app.addHook('onRequest', async (request) => {
    const config = request.routeOptions.config
    if (!request.routeOptions.url?.startsWith('/api/') || config.auth === 'public') return
    if (config.auth === 'portal') {
      request.portal = authenticatePortal(request.headers)
      return
    }
    if (config.auth === 'optional') {
      request.identity = await authenticate(request.headers).catch(() => null)
      return
    }
    const identity = await authenticate(request.headers)
    if (config.auth === 'interactive' && identity.credential !== 'jwt') {
      throw new ForbiddenError('Managing credentials requires an interactive sign-in; personal access tokens and the API key cannot')
    }
    if (identity.credential === 'api_key' && actionOf(request.method) !== 'read') throw new ForbiddenError('The organization API key is read-only')
    if (!scopesAllow(identity.scopes, request.url, request.method)) {
      throw new ForbiddenError(`This token's scopes do not allow ${resourceOf(request.url) ?? 'this path'}:${actionOf(request.method)}`)
    }
    request.identity = identity
  })
}

/** The authenticated caller of a route that is not public. */
export function identityOf(request: FastifyRequest): Identity {
  if (!request.identity) throw new UnauthorizedError()
  return request.identity
}

/** The customer contact of a portal route. */
export function portalCallerOf(request: FastifyRequest): PortalIdentity {
  if (!request.portal) throw new UnauthorizedError()
  return request.portal
}

/** The caller as the visibility policy sees them (what read paths filter by). */
export const viewerOf = (request: FastifyRequest): Viewer => viewerOfIdentity(identityOf(request))

export function requireAdmin(request: FastifyRequest): Identity {
  const identity = identityOf(request)
  if (identity.role !== 'ADMIN') throw new ForbiddenError('Only an organization admin may do this')
  return identity
}
