import type { FastifyRequest } from 'fastify'
import { portalCaller, portalContact } from '../../commands/portal/portal-cases.ts'
import type { Caller } from '../../commands/caller.ts'
import type { Deps } from '../../deps.ts'
import { UnauthorizedError } from '../../errors.ts'
import type { ContactRow } from '../../projections/contact/contacts.ts'
import { portalCallerOf } from '../kernel/auth.ts'

/**
 * The portal route's caller and the contact behind it. The token proves who signed in; the contact
 * must still be live (a contact deleted, or erased, since sign-in loses the portal at once, not
 * when the token expires).
 */
export async function signedIn(deps: Pick<Deps, 'db'>, request: FastifyRequest): Promise<{ caller: Caller; contact: ContactRow }> {
  const { orgId, contactId } = portalCallerOf(request)
  const caller = portalCaller(orgId, contactId, request.id)
  const contact = await portalContact(deps, caller)
  if (!contact) throw new UnauthorizedError('Invalid or expired portal token')
  return { caller, contact }
}
