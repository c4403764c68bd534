import { sql } from 'kysely'
import { templateStreams } from '../../commands/invoice/template.ts'
import type { TemplateEvent, TemplateLogo } from '../../commands/invoice/template.ts'
import type { Db } from '../../db/database.ts'
import { domainEventOf } from '../../events/versions.ts'
import type { Projector } from '../kernel/projector.ts'
import type { TemplateRow } from './tables.ts'

/**
 * The invoice templates: one row per template, deleted ones dropped. A template made the default
 * unsets the organization's other default here, in the order of the log, so a rebuild agrees.
 */
async function createTables(db: Db): Promise<void> {
  await sql`CREATE TABLE invoice_templates (
    id uuid PRIMARY KEY, org_id uuid NOT NULL, name text NOT NULL, primary_color text NOT NULL, secondary_color text NOT NULL,
    template_html text NOT NULL, template_css text NOT NULL, default_notes text NOT NULL, default_terms text NOT NULL, footer_text text NOT NULL,
    is_default boolean NOT NULL, logo jsonb, created_by uuid, updated_by uuid, created_at timestamptz NOT NULL, updated_at timestamptz NOT NULL)`.execute(db)
}

async function createIndexes(db: Db): Promise<void> {
  await sql`CREATE INDEX invoice_templates_org ON invoice_templates (org_id, name)`.execute(db)
}

async function apply(db: Db, id: string, event: TemplateEvent): Promise<void> {
  const at = new Date(event.data.at)
  switch (event.type) {
    case 'InvoiceTemplateCreated': {
      const { template_id: _id, at: _at, ...fields } = event.data
      await db.insertInto('invoice_templates').values({ ...fields, id, updated_by: fields.created_by, created_at: at, updated_at: at }).onConflict((oc) => oc.column('id').doNothing()).execute()
      break
    }
    case 'InvoiceTemplateUpdated': {
      const { at: _at, by, ...changes } = event.data
      await db.updateTable('invoice_templates').set({ ...changes, updated_by: by, updated_at: at }).where('id', '=', id).execute()
      break
    }
    case 'InvoiceTemplateLogoSet': {
      const { at: _at, by, ...logo } = event.data
      await db.updateTable('invoice_templates').set({ logo: JSON.stringify(logo) as unknown as TemplateLogo, updated_by: by, updated_at: at }).where('id', '=', id).execute()
      return
    }
    case 'InvoiceTemplateDeleted':
      await db.deleteFrom('invoice_templates').where('id', '=', id).execute()
      return
  }
  if (event.data.is_default) await sql`UPDATE invoice_templates SET is_default = false WHERE is_default AND id <> ${id} AND org_id = (SELECT org_id FROM invoice_templates WHERE id = ${id})`.execute(db)
}

export const templatesProjector: Projector = {
  name: 'invoice_templates',
  // 2: the logo (InvoiceTemplateLogoSet).
  version: 2,
  eventTypes: ['InvoiceTemplateCreated', 'InvoiceTemplateUpdated', 'InvoiceTemplateLogoSet', 'InvoiceTemplateDeleted'],
  tables: ['invoice_templates'],
  createTables,
  createIndexes,
  apply: (trx, recorded) => apply(trx, templateStreams.idOf(recorded.streamName), domainEventOf<TemplateEvent>(recorded)),
}

export type TemplateView = TemplateRow & { updated_by_name: string | null }

// Who changed it last, by name (else email), as the original's `updated_by`.
const VIEW = sql`t.*, coalesce(nullif(trim(u.first_name || ' ' || u.last_name), ''), u.email) AS updated_by_name
  FROM invoice_templates t LEFT JOIN profiles p ON p.id = t.updated_by LEFT JOIN users u ON u.id = p.user_id`

/** A template of the organization, or undefined. */
export async function templateOf(db: Db, orgId: string, id: string): Promise<TemplateView | undefined> {
  const { rows } = await sql<TemplateView>`SELECT ${VIEW} WHERE t.org_id = ${orgId} AND t.id = ${id}`.execute(db)
  return rows[0]
}

/** The organization's default template (the look of its PDFs), or undefined when it has none. */
export const defaultTemplate = (db: Db, orgId: string): Promise<TemplateRow | undefined> =>
  db.selectFrom('invoice_templates').selectAll().where('org_id', '=', orgId).where('is_default', '=', true).executeTakeFirst()

/** A page of the organization's templates, the default first, then by name; and how many. */
export async function listTemplates(db: Db, orgId: string, page: { limit: number; offset: number }): Promise<{ count: number; rows: TemplateView[] }> {
  const [rows, count] = await Promise.all([
    sql<TemplateView>`SELECT ${VIEW} WHERE t.org_id = ${orgId} ORDER BY t.is_default DESC, t.name, t.id LIMIT ${page.limit} OFFSET ${page.offset}`.execute(db),
    sql<{ n: string }>`SELECT count(*) AS n FROM invoice_templates WHERE org_id = ${orgId}`.execute(db),
  ])
  return { count: Number(count.rows[0]!.n), rows: rows.rows }
}
