import type { Decider } from '../decider.ts'
import { assertVisible } from '../record.ts'
import { accountDecider } from './account.ts'
import type { AccountEvent, AccountState } from './account.ts'

/**
 * Mail sent from an account (POST /api/accounts/{id}/create_mail/) to some of the organization's
 * contacts. The route checks the recipients (live contacts with an email: a looked-up fact) and
 * hands each message to the mailer first; this event records what went out, on the account's
 * stream, so the account's history shows it. Recipients are contact ids: the addresses stay on the
 * contacts rather than being copied into the log.
 */
export type AccountEmailSent = {
  type: 'AccountEmailSent'
  data: { email_id: string; subject: string; body: string; recipients: string[]; by: string | null; at: string }
}

export type RecordAccountEmail = { type: 'RecordAccountEmail'; orgId: string; actorId: string | null; emailId: string; subject: string; body: string; recipients: string[]; at: string }

/** Each send is a fact of its own (the mail already went out), recorded on a live account of the caller's organization. */
export function decideAccountEmail(command: RecordAccountEmail, state: AccountState): AccountEmailSent[] {
  assertVisible(state, command.orgId)
  const { emailId, subject, body, recipients, actorId, at } = command
  return recipients.length ? [{ type: 'AccountEmailSent', data: { email_id: emailId, subject, body, recipients, by: actorId, at } }] : []
}

/** The account's stream with this one decision; the account's own fold (which passes sent mail by) gives the state. */
export const accountMailDecider: Decider<RecordAccountEmail, AccountState, AccountEvent> = {
  initialState: accountDecider.initialState,
  evolve: (state, event) => (event.type === 'AccountEmailSent' ? state : accountDecider.evolve(state, event)),
  decide: decideAccountEmail,
}
