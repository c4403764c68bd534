import { sql } from 'kysely'
import type { RawBuilder } from 'kysely'
import { CUSTOM_FIELD_MODULES, customFieldKeyScope } from '../commands/custom-field/custom-field.ts'
import type { Db } from '../db/database.ts'

/**
 * Where each claim scope's holders live: the read model (its projector, table and name column)
 * that has a live row for every record holding a name of that scope. The scopes are those passed
 * to withClaimedName / withOptionalClaim / withRenamedClaim in src/ (test/names/claim-scopes.test.ts
 * fails when a new one appears without an entry here). "Live" is what keeps the claim: a deleted
 * record released it, a deleted team leaves no row.
 */
export type ScopeModel = { projector: string; table: string; column: string; live: RawBuilder<boolean> }

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const notDeleted = sql<boolean>`NOT is_deleted`

export const CLAIM_SCOPES: ReadonlyMap<string, ScopeModel> = new Map<string, ScopeModel>([
  ['account', { projector: 'accounts', table: 'accounts', column: 'name', live: notDeleted }],
  // An inbound mailbox's address (case-mail); a deleted one freed it.
  ['case_mailbox', { projector: 'case_mail_settings', table: 'case_mailboxes', column: 'address', live: notDeleted }],
  ['contact_email', { projector: 'contacts', table: 'contacts', column: 'email', live: notDeleted }],
  // A deleted document leaves no row.
  ['document_title', { projector: 'documents', table: 'documents', column: 'title', live: sql<boolean>`true` }],
  ['lead_email', { projector: 'leads', table: 'leads', column: 'email', live: notDeleted }],
  ['opportunity_name', { projector: 'opportunities', table: 'opportunities', column: 'name', live: notDeleted }],
  // An archived tag, and a merged one (archived), keeps its name; only the older delete freed it.
  ['tag', { projector: 'tags', table: 'tags', column: 'name', live: notDeleted }],
  ['team', { projector: 'teams', table: 'teams', column: 'name', live: sql<boolean>`true` }],
  ...CUSTOM_FIELD_MODULES.map((module): [string, ScopeModel] => [
    customFieldKeyScope(module),
    { projector: 'custom_fields', table: 'custom_field_definitions', column: 'key', live: sql<boolean>`NOT is_deleted AND module = ${module}` },
  ]),
])

/** The names the live records among `ownerIds` hold in `scope`'s read model, by owner id; an owner with no live record is absent. */
export async function liveNamesOf(db: Db, model: ScopeModel, ownerIds: readonly string[]): Promise<Map<string, string | null>> {
  // A uuid column holds no other shape; casting one would fail the whole query.
  const ids = ownerIds.filter((id) => UUID.test(id))
  if (ids.length === 0) return new Map()
  const { rows } = await sql<{ id: string; name: string | null }>`
    SELECT id, ${sql.ref(model.column)} AS name FROM ${sql.table(model.table)}
    WHERE id = ANY(${ids}::uuid[]) AND ${model.live}`.execute(db)
  return new Map(rows.map((r) => [r.id, r.name]))
}
