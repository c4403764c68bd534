import { sql } from 'kysely'
import type { Kysely } from 'kysely'

/**
 * A stamp of the identity tables (issue 36), as a projector's checkpoint row is of its read models
 * (projections/kernel/stamped-cache.ts): answers that show members (profile refs: names, emails,
 * roles) can be kept per process while it stands still. Every statement that writes `users` or
 * `profiles` moves it, in its own transaction, by trigger, so no write path can forget to: a
 * request that reads the stamp after a write committed is never served an answer kept before it.
 * Identity writes are admin actions and sign-ups (sign-ins write `profile_sign_ins`, not these), so
 * the one row they all update is no point of contention.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE TABLE identity_stamp (only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row), version bigint NOT NULL)`.execute(db)
  await sql`INSERT INTO identity_stamp (version) VALUES (0)`.execute(db)
  await sql`CREATE FUNCTION identity_stamp_move() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN UPDATE identity_stamp SET version = version + 1; RETURN NULL; END $$`.execute(db)
  for (const table of ['users', 'profiles']) {
    await sql`CREATE TRIGGER ${sql.id(`${table}_move_identity_stamp`)} AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ${sql.table(table)} FOR EACH STATEMENT EXECUTE FUNCTION identity_stamp_move()`.execute(db)
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['users', 'profiles']) await sql`DROP TRIGGER ${sql.id(`${table}_move_identity_stamp`)} ON ${sql.table(table)}`.execute(db)
  await sql`DROP FUNCTION identity_stamp_move()`.execute(db)
  await sql`DROP TABLE identity_stamp`.execute(db)
}
