import { z } from 'zod'
import { CASE_PRIORITIES, CASE_TYPES } from '../commands/case/fields.ts'
import type { InboundRecordEvent } from '../commands/case-mail/inbound-record.ts'
import { MAILBOX_PROVIDERS } from '../commands/case-mail/mailbox.ts'
import type { MailboxEvent } from '../commands/case-mail/mailbox.ts'
import { REOPEN_TO_STATUSES } from '../commands/case-mail/reopen-policy.ts'
import type { ReopenPolicyEvent } from '../commands/case-mail/reopen-policy.ts'
import { DROP_REASONS } from '../commands/case-mail/screening.ts'
import { By, Id, at, eventsOf, noPersonalData } from '../events/event-schemas.ts'
import { caseMailSettingsProjector } from '../projections/case-mail/mailboxes.ts'
import { caseMailMessagesProjector } from '../projections/case-mail/messages.ts'
import type { ModuleManifest } from './manifest.ts'

const mailbox = {
  address: z.string(),
  provider: z.enum(MAILBOX_PROVIDERS),
  default_priority: z.enum(CASE_PRIORITIES),
  default_case_type: z.enum(CASE_TYPES).nullable(),
  default_assignee: Id.nullable(),
  is_active: z.boolean(),
}
const policy = { is_enabled: z.boolean(), reopen_window_days: z.number().int().min(1).max(365), reopen_to_status: z.enum(REOPEN_TO_STATUSES), notify_assigned: z.boolean() }
const received = { org_id: Id, mailbox_id: Id, message_id: z.string(), ...at }
// Declared apart, not inline: a function literal in a declaration defers eventsOf's inference of the data types.
const ownStream = (stream: string) => stream

const settingsEvents = noPersonalData(
  eventsOf<MailboxEvent | ReopenPolicyEvent>()({
    // case_mailbox-<id>
    CaseMailboxCreated: { stream: 'case_mailbox', description: "An inbound mailbox was added: the organization's address whose mail becomes cases, its provider, and the defaults a case it opens takes (never its signing secret, kept apart from the log).", data: z.strictObject({ mailbox_id: Id, org_id: Id, ...mailbox, created_by: By, ...at }) },
    CaseMailboxUpdated: { stream: 'case_mailbox', description: "An inbound mailbox's fields changed: only those, each with its new value.", data: z.strictObject(mailbox).partial().extend(at) },
    CaseMailboxDeleted: { stream: 'case_mailbox', description: 'An inbound mailbox was deleted: its address freed, its secret destroyed.', data: z.strictObject(at) },
    // case_reopen_policy-<id derived from the organization's>
    CaseReopenPolicySet: { stream: 'case_reopen_policy', description: "The organization's reopen policy was saved: whether a customer's reply reopens a closed case, within how many days of its closing, into which status, and whether its assignees are told (the whole policy after the change).", data: z.strictObject({ org_id: Id, ...policy, by: By, ...at }) },
  }),
)

const inboundEvents = eventsOf<InboundRecordEvent>()({
  // inbound_mail-<id derived from the organization and the Message-ID>
  InboundMailAccepted: { stream: 'inbound_mail', description: 'An inbound message reached a case (its CaseEmailReceived in the same append): which, and whether it opened it. Its stream existing is what makes a repeat delivery of the Message-ID a no-op.', data: z.strictObject({ ...received, case_id: Id, created_case: z.boolean() }), personal: [] },
  InboundMailDropped: {
    stream: 'inbound_mail',
    description: 'An inbound message was dropped as written by no person (RFC 3834 auto-reply, bounce, list or bulk mail, our own mail come back): why, its sender and subject for the audit trail. No case was touched.',
    data: z.strictObject({ ...received, reason: z.enum(DROP_REASONS), from_email: z.string(), subject: z.string() }),
    // Nobody's record: sealed under a key of the message's own.
    personal: ['from_email', 'subject'],
    subject: ownStream,
  },
})

/** Inbound mail of cases: mailboxes, delivery of email into cases (threading, RFC 3834 screening, acknowledgements) and the reopen policy. */
export const caseMailModule: ModuleManifest = {
  name: 'case-mail',
  events: { ...settingsEvents, ...inboundEvents },
  routes: async (deps, files) => {
    const { mailboxRoutes } = await import('../http/case-mail/mailboxes.ts')
    const { inboundRoutes } = await import('../http/case-mail/inbound.ts')
    const { reopenPolicyRoutes } = await import('../http/case-mail/reopen-policy.ts')
    return [mailboxRoutes(deps), inboundRoutes(deps, files), reopenPolicyRoutes(deps)]
  },
  projectors: [caseMailSettingsProjector, caseMailMessagesProjector],
  idKinds: [[/^\/api\/cases\/mailboxes\/\{id\}/, 'caseMailbox']],
  idParams: { mailbox_id: 'caseMailbox' },
}
