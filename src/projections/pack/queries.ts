import { sql } from 'kysely'
import type { SampleKind } from '../../commands/pack/sample-data.ts'
import type { Db } from '../../db/database.ts'

/**
 * Where live records point at a record of each sample kind: a table and its column, a single id
 * or a list. What a sample-data clear reads to keep a sample record that real work now hangs on.
 */
const REFERENCES: Readonly<Record<SampleKind, readonly { table: string; column: string; list?: true }[]>> = {
  account: [{ table: 'contacts', column: 'account' }, { table: 'opportunities', column: 'account' }, { table: 'tasks', column: 'account' }],
  contact: [{ table: 'opportunities', column: 'contacts', list: true }, { table: 'tasks', column: 'contacts', list: true }],
  deal: [{ table: 'tasks', column: 'opportunity' }],
  lead: [{ table: 'tasks', column: 'lead' }],
  task: [],
}

/**
 * Of `candidates` (records of `kind`), those a live record of the organization points at, other
 * than the records about to be deleted with them (`leaving`): a user's deal on a sample account, a
 * user's task on a sample lead, or a sample record kept for that reason.
 */
export async function referencedFromOutside(db: Db, orgId: string, kind: SampleKind, candidates: readonly string[], leaving: readonly string[]): Promise<Set<string>> {
  const found = new Set<string>()
  if (!candidates.length) return found
  for (const { table, column, list } of REFERENCES[kind]) {
    const ref = list ? sql`unnest(${sql.ref(`r.${column}`)})` : sql.ref(`r.${column}`)
    const { rows } = await sql<{ id: string }>`SELECT DISTINCT ref.id FROM ${sql.table(table)} r, LATERAL (SELECT ${ref} AS id) ref
      WHERE r.org_id = ${orgId} AND NOT r.is_deleted AND ref.id = ANY(${sql.val([...candidates])}::uuid[]) AND NOT (r.id = ANY(${sql.val([...leaving])}::uuid[]))`.execute(db)
    for (const row of rows) found.add(row.id)
  }
  return found
}
