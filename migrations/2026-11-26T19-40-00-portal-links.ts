import { sql } from 'kysely'
import type { Kysely } from 'kysely'

/**
 * One-time sign-in links of the customer portal (docs/portal.md), mailed to a contact: a link token
 * and a 6-digit code, both stored only as hashes, bound to one organization and one contact.
 * `attempts` counts wrong codes; `created_at` (database time) only orders a contact's links.
 * Contacts are read-model rows, not identity rows, so no foreign key: a contact deleted since
 * finds its links refused at verification.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE portal_links (
      id uuid PRIMARY KEY,
      org_id uuid NOT NULL REFERENCES organizations (id),
      contact_id uuid NOT NULL,
      token_hash bytea NOT NULL UNIQUE,
      code_hash bytea NOT NULL,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      expires_at timestamptz NOT NULL,
      used_at timestamptz,
      attempts integer NOT NULL DEFAULT 0
    )`.execute(db)
  await sql`CREATE INDEX portal_links_contact ON portal_links (org_id, contact_id, created_at DESC)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE portal_links`.execute(db)
}
