import { createHmac, timingSafeEqual } from 'node:crypto'
import type { Db } from '../../db/database.ts'

/**
 * A mailbox's signing secret (the original's write-only `webhook_secret`): set by an admin, never
 * answered, never in the event log nor in a log line. A delivery proves it holds it with
 * `X-Inbound-Signature: sha256=<hex HMAC-SHA256(secret, raw message)>`: the secret itself never
 * travels with the mail. A mailbox without one accepts nothing.
 */
export type MailboxSecretTables = { case_mailbox_secrets: { mailbox_id: string; org_id: string; secret: string } }

declare module '../../db/database.ts' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging: the tables are the members
  interface Database extends MailboxSecretTables {}
}

/** Sets (a string) or clears (empty) the mailbox's secret. */
export async function saveMailboxSecret(db: Db, orgId: string, mailboxId: string, secret: string): Promise<void> {
  if (!secret) {
    await db.deleteFrom('case_mailbox_secrets').where('mailbox_id', '=', mailboxId).execute()
    return
  }
  await db.insertInto('case_mailbox_secrets').values({ mailbox_id: mailboxId, org_id: orgId, secret }).onConflict((c) => c.column('mailbox_id').doUpdateSet({ secret })).execute()
}

/** Which of these mailboxes have a secret: what `has_webhook_secret` answers. */
export async function mailboxesWithSecret(db: Db, mailboxIds: readonly string[]): Promise<Set<string>> {
  if (!mailboxIds.length) return new Set()
  const rows = await db.selectFrom('case_mailbox_secrets').select('mailbox_id').where('mailbox_id', 'in', mailboxIds).execute()
  return new Set(rows.map((row) => row.mailbox_id))
}

export const inboundSignature = (secret: string, raw: Buffer): string => `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`

/** Whether `signature` signs `raw` with the mailbox's secret (false when it has none). */
export async function verifyDelivery(db: Db, mailboxId: string, raw: Buffer, signature: string | undefined): Promise<boolean> {
  if (!signature) return false
  const row = await db.selectFrom('case_mailbox_secrets').select('secret').where('mailbox_id', '=', mailboxId).executeTakeFirst()
  if (!row) return false
  const expected = Buffer.from(inboundSignature(row.secret, raw))
  const given = Buffer.from(signature.trim())
  return expected.length === given.length && timingSafeEqual(expected, given)
}
