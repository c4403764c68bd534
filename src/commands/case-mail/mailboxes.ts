import { randomUUID } from 'node:crypto'
import type { Deps } from '../../deps.ts'
import { ForbiddenError, NotFoundError, ValidationError } from '../../errors.ts'
import type { Position } from '../../eventstore/event-store.ts'
import { activeProfileIds } from '../../identity/users.ts'
import { mailboxOf } from '../../projections/case-mail/queries.ts'
import type { Caller } from '../caller.ts'
import { commandSession } from '../command-session.ts'
import { withClaimedName, withRenamedClaim, withReleasedName } from '../unique-name.ts'
import { MAILBOX_ADDRESS_SCOPE, mailboxDecider, mailboxStreams } from './mailbox.ts'
import type { MailboxFields } from './mailbox.ts'
import { saveMailboxSecret } from './mailbox-secrets.ts'

type MailDeps = Pick<Deps, 'db' | 'store' | 'clock'>
/** `webhook_secret`: set (a string), cleared (empty), or left as it is (absent). */
export type MailboxInput = Partial<MailboxFields> & { webhook_secret?: string }
type Written = { id: string; position: Position | null }

function requireAdmin(caller: Caller): void {
  if (!caller.isAdmin) throw new ForbiddenError('Admin access required')
}

/** A default assignee must be an active member of the organization (the original's org-scoped queryset). */
async function checkAssignee(deps: MailDeps, caller: Caller, assignee: string | null | undefined, current?: string | null): Promise<void> {
  if (!assignee || assignee === current) return
  if (!(await activeProfileIds(deps.db, caller.orgId, [assignee])).has(assignee)) throw new ValidationError({ default_assignee_id: ['Expected an active member of this organization.'] })
}

const claimOf = (caller: Caller, id: string) => ({ scope: MAILBOX_ADDRESS_SCOPE, orgId: caller.orgId, ownerId: id, field: 'address' })

/** Adds a mailbox (admins): its address claimed for the organization in the same append; its secret, if given, stored apart. */
export async function createMailbox(deps: MailDeps, caller: Caller, fields: MailboxFields, secret: string | undefined): Promise<Written> {
  requireAdmin(caller)
  await checkAssignee(deps, caller, fields.default_assignee)
  const id = randomUUID()
  const { run, position } = commandSession(deps.store, caller)
  await withClaimedName(run, { ...claimOf(caller, id), name: fields.address }, (claimed) =>
    claimed(mailboxDecider, mailboxStreams.stream(id), { type: 'CreateMailbox', mailboxId: id, orgId: caller.orgId, fields, actorId: caller.profileId, at: deps.clock().toISOString() }),
  )
  if (secret) await saveMailboxSecret(deps.db, caller.orgId, id, secret)
  return { id, position: position() }
}

/** Changes what the input names (the original's partial PUT, admins); a new address is claimed and the old one freed in the same append. */
export async function changeMailbox(deps: MailDeps, caller: Caller, id: string, input: MailboxInput): Promise<Written> {
  requireAdmin(caller)
  const current = await mailboxOf(deps.db, caller.orgId, id)
  if (!current) throw new NotFoundError('Mailbox not found')
  const { webhook_secret, ...changes } = input
  await checkAssignee(deps, caller, changes.default_assignee, current.default_assignee)
  const { run, position } = commandSession(deps.store, caller)
  const command = { type: 'UpdateMailbox' as const, orgId: caller.orgId, changes, at: deps.clock().toISOString() }
  const address = changes.address ?? current.address
  await withRenamedClaim(run, { ...claimOf(caller, id), name: address, previousName: current.address }, (claimed) => claimed(mailboxDecider, mailboxStreams.stream(id), command))
  if (webhook_secret !== undefined) await saveMailboxSecret(deps.db, caller.orgId, id, webhook_secret)
  return { id, position: position() }
}

/** Deletes a mailbox (admins): its address freed, its secret destroyed, so a delivery signed with it is refused from now on. */
export async function deleteMailbox(deps: MailDeps, caller: Caller, id: string): Promise<Written> {
  requireAdmin(caller)
  const current = await mailboxOf(deps.db, caller.orgId, id)
  if (!current) throw new NotFoundError('Mailbox not found')
  const { run, position } = commandSession(deps.store, caller)
  await withReleasedName(run, { scope: MAILBOX_ADDRESS_SCOPE, orgId: caller.orgId, ownerId: id, name: current.address }, (released) => released(mailboxDecider, mailboxStreams.stream(id), { type: 'DeleteMailbox', orgId: caller.orgId, at: deps.clock().toISOString() }))
  await saveMailboxSecret(deps.db, caller.orgId, id, '')
  return { id, position: position() }
}
