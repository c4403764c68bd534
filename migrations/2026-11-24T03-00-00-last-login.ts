import { sql } from 'kysely'
import type { Kysely } from 'kysely'

/**
 * When a user last signed in (issue 22): set by an interactive sign-in (magic link, Google), not by
 * a token refresh or a personal access token. Null until the first sign-in after this migration.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE users ADD COLUMN last_login timestamptz`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE users DROP COLUMN last_login`.execute(db)
}
