import { sql } from 'kysely'
import type { Kysely } from 'kysely'

/**
 * One-time sign-in links mailed to a user: a link token and a 6-digit code, both stored only as
 * hashes. `attempts` counts wrong codes; `created_at` (database time) only orders a user's links.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE magic_links (
      id uuid PRIMARY KEY,
      user_id uuid NOT NULL REFERENCES users (id),
      token_hash bytea NOT NULL UNIQUE,
      code_hash bytea NOT NULL,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      expires_at timestamptz NOT NULL,
      used_at timestamptz,
      attempts integer NOT NULL DEFAULT 0
    )`.execute(db)
  await sql`CREATE INDEX magic_links_user ON magic_links (user_id, created_at DESC)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE magic_links`.execute(db)
}
