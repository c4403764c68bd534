import { sql } from 'kysely'
import type { Kysely } from 'kysely'

/**
 * The signing secrets of inbound mailboxes (issue 32): what a delivery to
 * /api/cases/inbound/{mailbox_id}/ is signed with. Kept apart from the event log, as webhook
 * secrets are: a credential does not belong in an append-only log, its read models or its exports.
 * Mailboxes are read-model rows, so no foreign key; a deleted mailbox's row is deleted with it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE case_mailbox_secrets (
      mailbox_id uuid PRIMARY KEY,
      org_id uuid NOT NULL REFERENCES organizations (id),
      secret text NOT NULL
    )`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE case_mailbox_secrets`.execute(db)
}
