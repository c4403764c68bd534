import { sql } from 'kysely'
import type { Kysely } from 'kysely'

/**
 * Every process caches memberships and organization settings (issue 20, src/lookups/). The app
 * announces its own identity writes; these triggers also announce any other writer's (an
 * operator's SQL, a tool): a NOTIFY on crm_lookups, delivered at commit, for each statement that
 * changes what the caches hold (role, active flags, email, organization settings). `last_login`
 * updates at sign-in do not qualify (users' trigger only fires on email), so sign-ins stay quiet.
 * The payload's first word is the sender the listener compares with its own id: never a process's.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE FUNCTION crm_lookups_changed() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      PERFORM pg_notify('crm_lookups', 'database');
      RETURN NULL;
    END
    $fn$
  `.execute(db)
  await sql`CREATE TRIGGER profiles_lookups_changed AFTER UPDATE OR DELETE ON profiles FOR EACH STATEMENT EXECUTE FUNCTION crm_lookups_changed()`.execute(db)
  await sql`CREATE TRIGGER organizations_lookups_changed AFTER UPDATE OR DELETE ON organizations FOR EACH STATEMENT EXECUTE FUNCTION crm_lookups_changed()`.execute(db)
  await sql`CREATE TRIGGER users_lookups_changed AFTER UPDATE OF email OR DELETE ON users FOR EACH STATEMENT EXECUTE FUNCTION crm_lookups_changed()`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TRIGGER users_lookups_changed ON users`.execute(db)
  await sql`DROP TRIGGER organizations_lookups_changed ON organizations`.execute(db)
  await sql`DROP TRIGGER profiles_lookups_changed ON profiles`.execute(db)
  await sql`DROP FUNCTION crm_lookups_changed()`.execute(db)
}
