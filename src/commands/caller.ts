import type { Identity } from '../identity/identity.ts'
import { isAdmin } from '../identity/identity.ts'

/** The caller as the record rules see them: their profile (null for the API key), role, and the platform-level superuser flag. */
export type Actor = { profileId: string | null; isAdmin: boolean; isSuperuser: boolean; contactId?: string }

/**
 * Who a use case acts for, however it was reached (an HTTP request, the CLI, an import worker, a
 * scheduled process): the organization, the member (null for the organization API key or a system
 * process), whether they administer the organization, and an id that ties every event the use case
 * appends to what caused it (the request id over HTTP). `contactId`: a customer contact acting
 * through the portal (no profile, never an admin; the visibility policy's `contact` caller).
 */
export type Caller = Readonly<{ orgId: string; profileId: string | null; isAdmin: boolean; requestId?: string; contactId?: string }>

export const callerOfIdentity = (identity: Identity, requestId?: string): Caller => ({ orgId: identity.orgId, profileId: identity.profileId, isAdmin: isAdmin(identity), requestId })

/** The caller as the record rules see them. The superuser flag is looked up only where a rule reads it (delete). */
export const actorOfCaller = (caller: Caller): Actor => ({ profileId: caller.profileId, isAdmin: caller.isAdmin, isSuperuser: false, ...(caller.contactId && { contactId: caller.contactId }) })
