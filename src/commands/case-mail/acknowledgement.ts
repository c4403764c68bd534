import type { AutoReplyOutcome } from '../case/inbound.ts'
import type { MailMessage } from '../../identity/mail.ts'

/**
 * Our acknowledgement of a customer's mail that opened or reopened a case: threaded to their
 * message, carrying our signed token as its Message-ID (so their reply finds the case), and marked
 * `Auto-Submitted: auto-replied` (RFC 3834 §5) so a well-behaved responder does not answer it.
 * Rate limits (per recipient and per case, over a sliding window) stop what still loops.
 */
export const AUTO_REPLY_WINDOW_MS = 60 * 60_000
export const AUTO_REPLIES_PER_RECIPIENT = 5
export const AUTO_REPLIES_PER_CASE = 3

export type AutoReplyVerdict = { allowed: true; messageId: string } | { allowed: false; reason: 'recipient_limit' | 'case_limit' }

/** Whether one more acknowledgement may go out, given how many went out in the window. */
export function autoReplyVerdict(sent: { recipient: number; case: number }, messageId: string): AutoReplyVerdict {
  if (sent.recipient >= AUTO_REPLIES_PER_RECIPIENT) return { allowed: false, reason: 'recipient_limit' }
  if (sent.case >= AUTO_REPLIES_PER_CASE) return { allowed: false, reason: 'case_limit' }
  return { allowed: true, messageId }
}

type Answered = { caseId: string; caseName: string; created: boolean; to: string; subject: string; inReplyTo: string; references: readonly string[] }

/** The acknowledgement mail of a reply outcome that was sent (null otherwise). */
export function acknowledgementOf(outcome: AutoReplyOutcome | null, answered: Answered): MailMessage | null {
  if (outcome?.status !== 'sent') return null
  const subject = /^re:/i.test(answered.subject) ? answered.subject : `Re: ${answered.subject || answered.caseName}`
  const text = answered.created
    ? `We received your message and opened a case for it: "${answered.caseName}".\nReply to this email to add to it.`
    : `We received your reply and reopened your case: "${answered.caseName}".\nReply to this email to add to it.`
  return {
    to: answered.to,
    subject,
    text,
    messageId: outcome.message_id,
    headers: {
      'Auto-Submitted': 'auto-replied',
      'X-Auto-Response-Suppress': 'All',
      'In-Reply-To': `<${answered.inReplyTo}>`,
      References: [...answered.references, answered.inReplyTo].map((id) => `<${id}>`).join(' '),
    },
  }
}
