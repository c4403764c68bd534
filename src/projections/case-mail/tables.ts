import type { CasePriority, CaseType } from '../../commands/case/fields.ts'
import type { ReopenToStatus } from '../../commands/case-mail/reopen-policy.ts'
import type { MailboxProvider } from '../../commands/case-mail/mailbox.ts'

/** An inbound mailbox; a deleted one is kept (its messages still name it) and hidden. */
export type CaseMailboxRow = {
  id: string
  org_id: string
  address: string
  provider: MailboxProvider
  default_priority: CasePriority
  default_case_type: CaseType | null
  default_assignee: string | null
  is_active: boolean
  is_deleted: boolean
  created_at: Date
  updated_at: Date
}

/** The organization's reopen policy once an admin saved one (none: the defaults). */
export type CaseReopenPolicyRow = { org_id: string; is_enabled: boolean; reopen_window_days: number; reopen_to_status: ReopenToStatus; notify_assigned: boolean; updated_at: Date }

/**
 * One row per inbound message of an organization (its lower-cased Message-ID): the threading index
 * of In-Reply-To and References, the mailbox figures, the reopen figures and the acknowledgements'
 * rate limits. `requester_id`: the sender's address as a pseudonymous id, never the address.
 */
export type CaseMailMessageRow = {
  org_id: string
  message_key: string
  mailbox_id: string
  case_id: string | null
  created_case: boolean
  drop_reason: string | null
  requester_id: string | null
  reopen_outcome: 'reopened' | 'out_of_window' | null
  days_since_close: number | null
  auto_reply: 'sent' | 'recipient_limit' | 'case_limit' | null
  received_at: Date
}

export type CaseMailTables = { case_mailboxes: CaseMailboxRow; case_reopen_policies: CaseReopenPolicyRow; case_mail_messages: CaseMailMessageRow }

// This module's tables join the one Database type (db/database.ts).
declare module '../../db/database.ts' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging: the tables are the members
  interface Database extends CaseMailTables {}
}
