import { sql } from 'kysely'
import type { Kysely } from 'kysely'

/**
 * Sign-in times per membership (issue 35): an organization's users list showed the user's one
 * `last_login`, which moved when the user signed in to another organization, so an admin learned
 * when a member last signed in elsewhere. Each profile now has its own last sign-in into its
 * organization. A table of its own rather than a column of profiles: every UPDATE of profiles
 * tells each process to drop its cached memberships (identity-change-notices), and a sign-in must
 * not. Carried over only for users with a single profile, the one case where the old time is
 * known to be a sign-in into that organization; the others start at null (never, as far as known).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE profile_sign_ins (
      profile_id uuid PRIMARY KEY REFERENCES profiles (id) ON DELETE CASCADE,
      last_login timestamptz NOT NULL
    )`.execute(db)
  await sql`
    INSERT INTO profile_sign_ins (profile_id, last_login)
    SELECT p.id, u.last_login FROM profiles p JOIN users u ON u.id = p.user_id
    WHERE u.last_login IS NOT NULL AND (SELECT count(*) FROM profiles o WHERE o.user_id = p.user_id) = 1`.execute(db)
  await sql`ALTER TABLE users DROP COLUMN last_login`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE users ADD COLUMN last_login timestamptz`.execute(db)
  await sql`UPDATE users u SET last_login = (SELECT max(s.last_login) FROM profile_sign_ins s JOIN profiles p ON p.id = s.profile_id WHERE p.user_id = u.id)`.execute(db)
  await sql`DROP TABLE profile_sign_ins`.execute(db)
}
