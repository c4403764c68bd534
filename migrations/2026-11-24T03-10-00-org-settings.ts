import { sql } from 'kysely'
import type { Kysely } from 'kysely'

/**
 * The organization's settings page (issue 22): its company profile, its default country and two
 * support switches, as the original's organization holds them. Texts are blank until set (the
 * original's blank strings); default_country is null until set; satisfaction surveys start on and
 * closing a parent case does not close its children unless asked.
 */
const TEXTS = ['company_name', 'address_line', 'city', 'state', 'postcode', 'country', 'phone', 'email', 'website', 'tax_id']

export async function up(db: Kysely<any>): Promise<void> {
  for (const column of TEXTS) await sql`ALTER TABLE organizations ADD COLUMN ${sql.id(column)} text NOT NULL DEFAULT ''`.execute(db)
  await sql`ALTER TABLE organizations ADD COLUMN default_country text`.execute(db)
  await sql`ALTER TABLE organizations ADD COLUMN csat_enabled boolean NOT NULL DEFAULT true, ADD COLUMN auto_close_children_on_parent_close boolean NOT NULL DEFAULT false`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const column of [...TEXTS, 'default_country', 'csat_enabled', 'auto_close_children_on_parent_close']) await sql`ALTER TABLE organizations DROP COLUMN ${sql.id(column)}`.execute(db)
}
