import { sql } from 'kysely'
import type { Kysely } from 'kysely'

/**
 * Webhook secret rotation (issue 17): while a rotation's grace period lasts, deliveries are signed
 * with the new secret and the one it replaced, so a receiver can switch over without losing one.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE webhook_secrets ADD COLUMN previous_secret text, ADD COLUMN previous_expires_at timestamptz`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE webhook_secrets DROP COLUMN previous_secret, DROP COLUMN previous_expires_at`.execute(db)
}
