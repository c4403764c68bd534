import { sql } from 'kysely'
import { REOPEN_DEFAULTS } from '../../commands/case-mail/reopen-policy.ts'
import type { ReopenPolicy } from '../../commands/case-mail/reopen-policy.ts'
import type { Db } from '../../db/database.ts'
import type { CaseMailboxRow } from './tables.ts'

export type { CaseMailboxRow } from './tables.ts'

/** The window the mailbox page and the reopen page count over (the original's MAILBOX_WINDOW_DAYS and its 30-day reopen figures). */
export const FIGURES_WINDOW_DAYS = 30
const DAY_MS = 86_400_000

export type MailboxFigures = { cases_last_30d: number; last_received_at: Date | null }

/** The organization's mailboxes by address (every one: the original neither filters nor pages them). */
export const mailboxesOf = (db: Db, orgId: string): Promise<CaseMailboxRow[]> =>
  db.selectFrom('case_mailboxes').selectAll().where('org_id', '=', orgId).where('is_deleted', '=', false).orderBy('address').orderBy('id').execute()

export const mailboxOf = (db: Db, orgId: string, id: string): Promise<CaseMailboxRow | undefined> =>
  db.selectFrom('case_mailboxes').selectAll().where('org_id', '=', orgId).where('id', '=', id).where('is_deleted', '=', false).executeTakeFirst()

/** A mailbox that accepts deliveries: any organization's (the delivery's signature then says whose). */
export const activeMailbox = (db: Db, id: string): Promise<CaseMailboxRow | undefined> =>
  db.selectFrom('case_mailboxes').selectAll().where('id', '=', id).where('is_active', '=', true).where('is_deleted', '=', false).executeTakeFirst()

/** The organization's own addresses: mail from one of them is our own come back. */
export async function ownAddresses(db: Db, orgId: string): Promise<string[]> {
  const rows = await db.selectFrom('case_mailboxes').select('address').where('org_id', '=', orgId).where('is_deleted', '=', false).execute()
  return rows.map((row) => row.address.toLowerCase())
}

/**
 * Per mailbox, the cases its mail opened in the window and its newest message (dropped ones too:
 * the address still received mail); `total`: the cases opened through any of them, each once.
 */
export async function mailboxFigures(db: Db, orgId: string, now: Date): Promise<{ byMailbox: Map<string, MailboxFigures>; total: number }> {
  const since = new Date(now.getTime() - FIGURES_WINDOW_DAYS * DAY_MS)
  const rows = await db
    .selectFrom('case_mail_messages')
    .select((eb) => ['mailbox_id', sql<number>`count(DISTINCT case_id) FILTER (WHERE created_case AND received_at >= ${since})::int`.as('opened'), eb.fn.max('received_at').as('last')])
    .where('org_id', '=', orgId)
    .groupBy('mailbox_id')
    .execute()
  const total = await db.selectFrom('case_mail_messages').select(sql<number>`count(DISTINCT case_id)::int`.as('n')).where('org_id', '=', orgId).where('created_case', '=', true).where('received_at', '>=', since).executeTakeFirstOrThrow()
  return { byMailbox: new Map(rows.map((row) => [row.mailbox_id, { cases_last_30d: row.opened, last_received_at: row.last }])), total: total.n }
}

/** The case the newest of these messages (In-Reply-To, References) reached, if any did. */
export async function caseOfMessages(db: Db, orgId: string, messageIds: readonly string[]): Promise<string | null> {
  if (!messageIds.length) return null
  const row = await db
    .selectFrom('case_mail_messages')
    .select('case_id')
    .where('org_id', '=', orgId)
    .where('message_key', 'in', messageIds.map((id) => id.toLowerCase()))
    .where('case_id', 'is not', null)
    .orderBy('received_at', 'desc')
    .executeTakeFirst()
  return row?.case_id ?? null
}

/** How many acknowledgements went to this requester, and about this case, since `since`: what the rate limits count. */
export async function autoRepliesSince(db: Db, orgId: string, requesterId: string, caseId: string | null, since: Date): Promise<{ recipient: number; case: number }> {
  const count = (column: 'requester_id' | 'case_id', value: string) =>
    db.selectFrom('case_mail_messages').select(sql<number>`count(*)::int`.as('n')).where('org_id', '=', orgId).where(column, '=', value).where('auto_reply', '=', 'sent').where('received_at', '>=', since).executeTakeFirstOrThrow()
  const [recipient, onCase] = await Promise.all([count('requester_id', requesterId), caseId ? count('case_id', caseId) : Promise.resolve({ n: 0 })])
  return { recipient: recipient.n, case: onCase.n }
}

/** The organization's reopen policy: the one its admins saved, else the original's defaults. */
export async function reopenPolicyOf(db: Db, orgId: string): Promise<ReopenPolicy> {
  const row = await db.selectFrom('case_reopen_policies').select(['is_enabled', 'reopen_window_days', 'reopen_to_status', 'notify_assigned']).where('org_id', '=', orgId).executeTakeFirst()
  return row ?? REOPEN_DEFAULTS
}

export type ReopenFigures = { reopened_last_30d: number; replies_after_window_30d: number; median_days_to_reply: number | null }

/** The reopen page's figures, from what each customer reply recorded when it came (the window in force then, not now's). */
export async function reopenFigures(db: Db, orgId: string, now: Date): Promise<ReopenFigures> {
  const since = new Date(now.getTime() - FIGURES_WINDOW_DAYS * DAY_MS)
  const row = await db
    .selectFrom('case_mail_messages')
    .select([
      sql<number>`count(*) FILTER (WHERE reopen_outcome = 'reopened')::int`.as('reopened'),
      sql<number>`count(*) FILTER (WHERE reopen_outcome = 'out_of_window')::int`.as('late'),
      sql<number | null>`percentile_cont(0.5) WITHIN GROUP (ORDER BY days_since_close)`.as('median'),
    ])
    .where('org_id', '=', orgId)
    .where('reopen_outcome', 'is not', null)
    .where('received_at', '>=', since)
    .executeTakeFirstOrThrow()
  return { reopened_last_30d: row.reopened, replies_after_window_30d: row.late, median_days_to_reply: row.median === null ? null : Number(row.median) }
}
