import type { ParsedInbound } from './parse-mail.ts'
import { looksLikeThreadToken } from './thread-token.ts'

/**
 * Which inbound mail is no person writing (RFC 3834 and the original's cases/inbound/spam.py): it is
 * recorded as dropped and touches no case, so an auto-responder and our own acknowledgements cannot
 * keep answering each other.
 * - `Auto-Submitted` other than `no` (RFC 3834 §5: `no` is a human's message);
 * - a delivery status report (a bounce), or a null return path with a report;
 * - list or bulk mail (`Precedence: bulk | list | junk`, or a `List-Id`, RFC 2919);
 * - the vendor auto-reply headers (`X-Autoreply`, `X-Autorespond`, `X-Auto-Response-Suppress: All`-style OOF);
 * - our own mail come back: sent from one of the organization's mailboxes, or carrying our token as its own Message-ID.
 */
export const DROP_REASONS = ['auto_submitted', 'bounce', 'mailing_list', 'precedence_bulk', 'x_autoreply', 'own_mail'] as const
export type DropReason = (typeof DROP_REASONS)[number]

const BULK = new Set(['bulk', 'list', 'junk'])

export function dropReasonOf(mail: Pick<ParsedInbound, 'headers' | 'isReport' | 'messageId' | 'fromEmail'>, ownAddresses: readonly string[]): DropReason | null {
  const header = (name: string) => (mail.headers.get(name) ?? '').trim().toLowerCase()
  if (mail.isReport) return 'bounce'
  const autoSubmitted = header('auto-submitted')
  if (autoSubmitted && autoSubmitted !== 'no') return 'auto_submitted'
  if (BULK.has(header('precedence'))) return 'precedence_bulk'
  if (mail.headers.has('list-id')) return 'mailing_list'
  if (header('x-autoreply') === 'yes' || mail.headers.has('x-autorespond')) return 'x_autoreply'
  if (ownAddresses.includes(mail.fromEmail) || looksLikeThreadToken(mail.messageId)) return 'own_mail'
  return null
}
