import type { IncomingHttpHeaders } from 'node:http'
import { UnauthorizedError } from '../errors.ts'

/**
 * The customer portal's credential (docs/portal.md): a short-lived JWT whose `typ` is `portal`, so
 * the staff authenticator (which takes only `typ: 'access'`, jwt.ts `isAccessClaims`) refuses it on
 * every staff route, and the portal's refuses every staff credential. `sub` is the contact, never
 * a user: nothing that reads a staff identity can mistake one for the other.
 */
export type PortalClaims = { sub: string; org_id: string; typ: 'portal' }

/** Who calls a portal route: a contact of an organization, as the token names them (the portal's routes check the contact is still live). */
export type PortalIdentity = Readonly<{ orgId: string; contactId: string }>

/** Eight hours: a working day. No refresh token: the customer signs in by mail again, as Zendesk's and Freshdesk's portals ask. */
export const PORTAL_SESSION_SECONDS = 8 * 60 * 60

export function isPortalClaims(value: unknown): value is PortalClaims {
  const v = value as Partial<PortalClaims> | null
  return typeof v?.sub === 'string' && typeof v.org_id === 'string' && v.typ === 'portal'
}

/** Resolves a portal caller from `Authorization: Bearer <portal token>`; anything else (a staff JWT, a PAT, the API key) is a 401. */
export function createPortalAuthenticator(verifyJwt: (token: string) => unknown): (headers: IncomingHttpHeaders) => PortalIdentity {
  return (headers) => {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(headers.authorization ?? '')
    if (!match) throw new UnauthorizedError('Expected a portal token as "Authorization: Bearer <token>"')
    let claims: unknown
    try {
      claims = verifyJwt(match[1]!)
    } catch {
      throw new UnauthorizedError('Invalid or expired portal token')
    }
    if (!isPortalClaims(claims)) throw new UnauthorizedError('Invalid or expired portal token')
    return { orgId: claims.org_id, contactId: claims.sub }
  }
}
