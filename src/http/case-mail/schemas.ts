import { z } from 'zod'
import { CASE_PRIORITIES, CASE_TYPES } from '../../commands/case/fields.ts'
import { MAILBOX_PROVIDERS } from '../../commands/case-mail/mailbox.ts'
import { REOPEN_TO_STATUSES } from '../../commands/case-mail/reopen-policy.ts'
import { ProfileRef } from '../kernel/relations.ts'

/** The original's ProfileSerializer as the inbound-email page reads a default assignee (`user_details.name`). */
export const AssigneeRef = ProfileRef.extend({ user_details: ProfileRef.shape.user_details.extend({ name: z.string() }) })

const Secret = z
  .union([z.literal(''), z.string().min(32, 'Expected a secret of at least 32 characters (a shorter one is too easy to guess), or an empty one to clear it.').max(128)])
  .describe('Write-only: the secret deliveries are signed with (`X-Inbound-Signature: sha256=<hex HMAC-SHA256(secret, raw message)>`), 32 to 128 characters; empty clears it. Never answered')

const writable = {
  address: z.email('Enter a valid email address.').max(254).transform((address) => address.trim().toLowerCase()),
  provider: z.enum(MAILBOX_PROVIDERS),
  webhook_secret: Secret,
  default_priority: z.enum(CASE_PRIORITIES),
  default_case_type: z.enum(CASE_TYPES).nullable(),
  default_assignee_id: z.uuid().nullable(),
  is_active: z.boolean(),
}

export const MailboxCreate = z.object({
  ...writable,
  provider: writable.provider.default('ses'),
  webhook_secret: writable.webhook_secret.optional(),
  default_priority: writable.default_priority.default('Normal'),
  default_case_type: writable.default_case_type.default(null),
  default_assignee_id: writable.default_assignee_id.default(null),
  is_active: writable.is_active.default(true),
})
/** The original's PUT is partial: what is left out stays. */
export const MailboxUpdate = z.object(writable).partial()

export const Mailbox = z.object({
  id: z.uuid(),
  address: z.string(),
  provider: z.enum(MAILBOX_PROVIDERS),
  has_webhook_secret: z.boolean().optional().describe('Admins only: whether a signing secret is set'),
  has_topic_arn: z.boolean().describe('Whether deliveries can be authenticated (a signing secret is set): the clients draw an address without it as "not connected yet". The name is the original\'s, whose SES deliveries needed an SNS topic pin'),
  default_priority: z.enum(CASE_PRIORITIES),
  default_case_type: z.enum(CASE_TYPES).nullable(),
  default_assignee: AssigneeRef.nullable(),
  is_active: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
  cases_last_30d: z.number().int().optional().describe('On the list: cases opened by its mail in the last 30 days'),
  last_received_at: z.string().nullable().optional().describe('On the list: its newest message, dropped ones included'),
})

export const MailboxList = z.object({ mailboxes: z.array(Mailbox), totals: z.object({ count: z.number().int(), active: z.number().int(), cases_last_30d: z.number().int() }) })

export const InboundParams = z.object({ mailbox_id: z.uuid() })
export const InboundAnswer = z.object({
  ok: z.literal(true),
  case_id: z.uuid().nullable(),
  created_case: z.boolean(),
  dropped: z.boolean(),
  reason: z.string().describe('Why it was dropped (auto_submitted, bounce, mailing_list, precedence_bulk, x_autoreply, own_mail); empty when it was not'),
  duplicate: z.boolean().describe('This Message-ID was received before: nothing was written, the first outcome is answered'),
})

const policy = {
  is_enabled: z.boolean(),
  reopen_window_days: z.number({ error: 'reopen_window_days must be between 1 and 365' }).int().min(1, 'reopen_window_days must be between 1 and 365').max(365, 'reopen_window_days must be between 1 and 365'),
  reopen_to_status: z.enum(REOPEN_TO_STATUSES, { error: `reopen_to_status must be one of ${REOPEN_TO_STATUSES.join(', ')}` }),
  notify_assigned: z.boolean(),
}
export const ReopenPolicyBody = z.object(policy).partial()
export const ReopenPolicyView = z.object(policy)
export const ReopenPolicyAnswer = ReopenPolicyView.extend({
  reopened_last_30d: z.number().int().describe('Closed cases a customer reply reopened in the last 30 days'),
  replies_after_window_30d: z.number().int().describe('Customer replies to closed cases that came after the window in force then'),
  median_days_to_reply: z.number().nullable().describe('Median days from closing to the customer reply, over both'),
})
