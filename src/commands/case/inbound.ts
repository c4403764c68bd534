import { NotFoundError } from '../../errors.ts'
import type { AttachmentData } from '../notes.ts'
import { OPEN_STATUSES, summaryOf } from './fields.ts'
import type { CaseFields, CaseStatus } from './fields.ts'
import { slaEventsOf } from './sla.ts'
import type { SlaClocks } from './sla.ts'
import type { CaseEvent, CaseFieldChanges } from './case.ts'

/**
 * A customer's email landing on a case (the original's cases/inbound/pipeline.py and the reopen of
 * signals.py `maybe_reopen_for_inbound_email`), decided with the case's own events so that what the
 * message changes is in the same append as the message:
 * - a case waiting on the customer (Pending) is no longer: it goes back to Assigned (New without
 *   assignees) and its SLA pause ends at the message's instant, so no pause outlives the answer;
 * - a Closed case whose closing is within the reopen policy's window reopens to the policy's status.
 *   A policy status of Pending would pause the SLA on the customer's own answer, so a customer's
 *   message reopens to the open status instead (Assigned, or New without assignees);
 * - an auto-reply (our acknowledgement) is due when the message opened the case or reopened it, and
 *   is recorded as sent or as held back by a rate limit.
 */

/** The requester is an existing contact (`contact_id`) or a person known only by this email (`requester_id`, the subject their fields are sealed under). */
export type InboundMessage = {
  message_id: string
  mailbox_id: string
  from_email: string
  from_name: string
  subject: string
  text: string
  in_reply_to: string | null
  references: string[]
  /** The message's own Date header (ISO), when it had a readable one. */
  sent_at: string | null
  contact_id: string | null
  requester_id: string | null
  /** How it found its case: our signed token, the thread's headers, or none (it opened the case). */
  threaded_by: 'token' | 'headers' | null
}

export type ReopenOutcome = { outcome: 'reopened'; to_status: CaseStatus; days_since_close: number } | { outcome: 'out_of_window'; days_since_close: number }
export type AutoReplyOutcome = { status: 'sent'; message_id: string } | { status: 'recipient_limit' | 'case_limit'; message_id: null }

// Events: the storage contract (never change a type name or data shape).
export type CaseEmailReceived = {
  type: 'CaseEmailReceived'
  data: InboundMessage & { attachments: string[]; reopen: ReopenOutcome | null; auto_reply: AutoReplyOutcome | null; at: string }
}

/** The organization's reopen policy as the decision needs it (the original's ReopenPolicy fields). */
export type ReopenFacts = { is_enabled: boolean; reopen_window_days: number; reopen_to_status: CaseStatus }

/**
 * `today`: the receiving day (YYYY-MM-DD), which the window is counted to. `autoReply`: whether an
 * acknowledgement may go out now (the rate limits' verdict) and the Message-ID it would carry.
 */
export type ReceiveCaseEmail = {
  type: 'ReceiveCaseEmail'
  orgId: string
  at: string
  today: string
  message: InboundMessage
  attachments: readonly AttachmentData[]
  reopen: ReopenFacts
  autoReply: { allowed: true; messageId: string } | { allowed: false; reason: 'recipient_limit' | 'case_limit' }
}


/** What the decision reads of the case. */
export type Receiving = { exists: boolean; orgId: string | null; deleted: boolean; fields: CaseFields; sla: SlaClocks; attachmentIds: readonly string[] }

const DAY_MS = 86_400_000
const daysBetween = (from: string, to: string): number => Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS)
/** The status a case takes when the customer holds the ball no longer. */
const openStatus = (fields: CaseFields): CaseStatus => (fields.assigned_to.length ? 'Assigned' : 'New')

function statusAfter(command: ReceiveCaseEmail, fields: CaseFields): { to: CaseStatus | null; reopen: ReopenOutcome | null } {
  if (fields.status === 'Pending') return { to: openStatus(fields), reopen: null }
  const { reopen } = command
  if (fields.status !== 'Closed' || !fields.closed_on || !reopen.is_enabled) return { to: null, reopen: null }
  const days = daysBetween(fields.closed_on, command.today)
  if (days > reopen.reopen_window_days) return { to: null, reopen: { outcome: 'out_of_window', days_since_close: days } }
  const to = reopen.reopen_to_status === 'Pending' || !OPEN_STATUSES.includes(reopen.reopen_to_status) ? openStatus(fields) : reopen.reopen_to_status
  return { to, reopen: { outcome: 'reopened', to_status: to, days_since_close: days } }
}

/** The message, its attachments, and the status and SLA events it brings. `opened`: the same append opened the case. */
export function decideReceivedEmail(command: ReceiveCaseEmail, state: Receiving, opened: boolean): CaseEvent[] {
  if (!state.exists || state.orgId !== command.orgId || state.deleted) throw new NotFoundError()
  const { at } = command
  const before = state.fields
  const { to, reopen } = statusAfter(command, before)
  const acknowledged = opened || reopen?.outcome === 'reopened'
  const auto_reply: AutoReplyOutcome | null = !acknowledged ? null : command.autoReply.allowed ? { status: 'sent', message_id: command.autoReply.messageId } : { status: command.autoReply.reason, message_id: null }
  const fresh = command.attachments.filter((a) => !state.attachmentIds.includes(a.attachment_id))
  const events: CaseEvent[] = [
    { type: 'CaseEmailReceived', data: { ...command.message, attachments: fresh.map((a) => a.attachment_id), reopen, auto_reply, at } },
    ...fresh.map((a): CaseEvent => ({ type: 'CaseAttachmentAdded', data: { ...a, by: null, at } })),
  ]
  if (to === null) return events
  const after: CaseFields = { ...before, status: to, closed_on: before.status === 'Closed' ? null : before.closed_on }
  const changes: CaseFieldChanges = { status: { from: before.status, to } }
  if (after.closed_on !== before.closed_on) changes.closed_on = { from: before.closed_on, to: after.closed_on }
  return [...events, { type: 'CaseUpdated', data: { changes, case: summaryOf(after), by: null, at } }, ...slaEventsOf(state.sla, before, after, at)]
}
