import { randomUUID } from 'node:crypto'
import type { Deps } from '../../deps.ts'
import { NotFoundError } from '../../errors.ts'
import type { Position } from '../../eventstore/event-store.ts'
import { caseOf } from '../../projections/case/queries.ts'
import type { CaseRecord } from '../../projections/case/queries.ts'
import { contactOf } from '../../projections/contact/contacts.ts'
import type { ContactRow } from '../../projections/contact/contacts.ts'
import type { Viewer } from '../../visibility/policy.ts'
import { caseDecider, caseStream, mayReadCase } from '../case/case.ts'
import type { CaseInput } from '../case/case.ts'
import { PAUSING_STATUS } from '../case/fields.ts'
import { changeCase, createCase } from '../case/write-case.ts'
import type { Caller } from '../caller.ts'
import { actorOfCaller } from '../caller.ts'
import { commandSession } from '../command-session.ts'
import { isActiveOrganization } from './sign-in-links.ts'

/**
 * What a customer does in the portal (docs/portal.md), as use cases over the cases module's own:
 * the contact is a caller of the visibility policy's `contact` kind, so every check below is the
 * policy's (a case is theirs when it names them among its contacts), not a rule of the portal's.
 */
type PortalDeps = Pick<Deps, 'db' | 'store' | 'clock'>
type Written = { position: Position | null }

/** A contact acting through the portal: no profile, never an admin. */
export const portalCaller = (orgId: string, contactId: string, requestId?: string): Caller => ({ orgId, profileId: null, isAdmin: false, contactId, requestId })

/** The same caller as the read paths' viewer. */
export const portalViewer = (caller: Caller): Viewer => ({ orgId: caller.orgId, profileId: null, isAdmin: false, contactId: caller.contactId })

/**
 * The live contact the portal token names, or undefined when, since sign-in, it was deleted, its
 * person erased (the record stays with blank personal fields: docs/personal-data.md), its email removed,
 * or its organization deactivated.
 */
export async function portalContact(deps: Pick<Deps, 'db'>, caller: Caller): Promise<ContactRow | undefined> {
  if (!caller.contactId) return undefined
  const [contact, active] = await Promise.all([contactOf(deps.db, caller.orgId, caller.contactId), isActiveOrganization(deps.db, caller.orgId)])
  const reachable = Boolean(contact?.email)
  return active && reachable ? contact : undefined
}

/** A case the contact may see; any other (another contact's, another organization's, a deleted one) is a 404, never a 403 that would tell it exists. */
export async function portalCase(deps: Pick<Deps, 'db'>, caller: Caller, id: string): Promise<CaseRecord> {
  const row = await caseOf(deps.db, caller.orgId, id)
  if (!row || !mayReadCase({ createdBy: row.created_by, fields: row, watchers: row.watchers }, actorOfCaller(caller))) throw new NotFoundError('Case not found')
  return row
}

export type PortalCaseInput = Pick<CaseInput, 'name' | 'description' | 'priority' | 'case_type'>

/** Opens a case for the contact: they are its contact, their account its account; staff assign and triage it. */
export async function openPortalCase(deps: PortalDeps, caller: Caller, contact: ContactRow, input: PortalCaseInput): Promise<{ id: string } & Written> {
  return createCase(deps, caller, { ...input, contacts: [contact.id], account: contact.account })
}

/**
 * A public comment from the customer. A case waiting on the customer (Pending) goes back to the
 * team's queue with it (Assigned when someone holds it, else New), which ends its SLA pause: the
 * customer's reply is what the team was waiting for. Internal notes are never the contact's to add.
 */
export async function replyToPortalCase(deps: PortalDeps, caller: Caller, id: string, comment: string): Promise<{ commentId: string } & Written> {
  const current = await portalCase(deps, caller, id)
  const session = commandSession(deps.store, caller)
  const commentId = randomUUID()
  await session.run(caseDecider, caseStream(id), { type: 'AddComment', orgId: caller.orgId, actor: actorOfCaller(caller), commentId, comment, at: deps.clock().toISOString() })
  if (current.status === PAUSING_STATUS) await changeCase(deps, caller, id, { input: { status: current.assigned_to.length ? 'Assigned' : 'New' }, replace: false }, session)
  return { commentId, position: session.position() }
}
