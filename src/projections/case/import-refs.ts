import { sql } from 'kysely'
import type { Db } from '../../db/database.ts'
import { activeMembers } from '../../identity/users.ts'

/**
 * What a CSV row of cases names by name or email, resolved in the organization (the original's
 * csv_import `_build_ref_maps`): one query per kind for a chunk of rows, keys lower-cased, the oldest
 * record winning when two share a name.
 */
export type CaseImportRefs = { accounts: Map<string, string>; contacts: Map<string, string>; members: Map<string, string>; teams: Map<string, string>; tags: Map<string, string> }
export type CaseImportKeys = { [K in keyof CaseImportRefs]: readonly string[] }

async function idsByKey(db: Db, table: 'accounts' | 'contacts' | 'teams' | 'tags', column: 'name' | 'email', orgId: string, values: readonly string[]): Promise<Map<string, string>> {
  const keys = [...new Set(values.map((value) => value.toLowerCase()))]
  if (!keys.length) return new Map()
  const live = table === 'teams' ? sql`true` : table === 'tags' ? sql`NOT is_deleted AND is_active` : sql`NOT is_deleted`
  const key = sql`lower(${sql.ref(column)})`
  const { rows } = await sql<{ id: string; key: string }>`SELECT DISTINCT ON (${key}) id, ${key} AS key FROM ${sql.table(table)} WHERE org_id = ${orgId} AND ${live} AND ${key} = ANY(${keys}::text[]) ORDER BY ${key}, created_at, id`.execute(db)
  return new Map(rows.map((row) => [row.key, row.id]))
}

/** The ids of what `keys` name; the active members are read once per import (`members`, when given). */
export async function caseImportRefs(db: Db, orgId: string, keys: CaseImportKeys, members?: Map<string, string>): Promise<CaseImportRefs> {
  const [accounts, contacts, teams, tags, people] = await Promise.all([
    idsByKey(db, 'accounts', 'name', orgId, keys.accounts),
    idsByKey(db, 'contacts', 'email', orgId, keys.contacts),
    idsByKey(db, 'teams', 'name', orgId, keys.teams),
    idsByKey(db, 'tags', 'name', orgId, keys.tags),
    members ?? activeMembers(db, orgId).then((rows) => new Map(rows.map((m) => [m.email.toLowerCase(), m.id]))),
  ])
  return { accounts, contacts, members: people, teams, tags }
}

/** Whether a live case of the organization other than `exceptId` (an import row's own, created by an earlier try) has this name, case-insensitively. */
export async function caseNameTaken(db: Db, orgId: string, name: string, exceptId: string): Promise<boolean> {
  const row = await db.selectFrom('cases').select('id').where('org_id', '=', orgId).where('is_deleted', '=', false).where('id', '<>', exceptId).where(sql<string>`lower(name)`, '=', name.trim().toLowerCase()).executeTakeFirst()
  return row !== undefined
}
