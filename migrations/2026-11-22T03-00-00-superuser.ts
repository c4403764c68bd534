import { sql } from 'kysely'
import type { Kysely } from 'kysely'

/**
 * The platform-level superuser flag (§4.4.4: a superuser may delete any deal of an organization it
 * belongs to). Granted only by the operator's CLI (`npm run crm -- superuser <email>`), never by the API.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE users ADD COLUMN is_superuser boolean NOT NULL DEFAULT false`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE users DROP COLUMN is_superuser`.execute(db)
}
