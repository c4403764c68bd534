import { sql } from 'kysely'
import type { Kysely } from 'kysely'
import { accountNames, accountStreams } from '../commands/account/account.ts'
import type { AccountFields } from '../commands/account/account.ts'
import { containsPattern } from '../db/like.ts'
import { anyOf, fetchPage, liveRecordsTagged, recordProjector } from './records.ts'
import { noteTables } from './notes.ts'

/** The accounts read model: one row per account, soft-deleted rows kept but hidden from every query. */
export type AccountRow = AccountFields & { id: string; org_id: string; created_by: string | null; is_deleted: boolean; created_at: Date; updated_at: Date }

type Tables = { accounts: AccountRow }

/** The account's comments and attachments (projections/notes.ts), kept by the same projector. */
export const ACCOUNT_NOTES = noteTables('account')

export const accountsProjector = recordProjector({
  name: 'accounts',
  // 2: the account's comments and attachments.
  version: 2,
  table: 'accounts',
  streams: accountStreams,
  events: accountNames.events,
  notes: { prefix: accountNames.notes, tables: ACCOUNT_NOTES },
  columns: (table) =>
    ['email', 'phone', 'website', 'industry', 'address_line', 'city', 'state', 'postcode', 'country', 'description']
      .reduce((t, column) => t.addColumn(column, 'text'), table.addColumn('name', 'text', (c) => c.notNull()))
      .addColumn('is_active', 'boolean', (c) => c.notNull())
      .addColumn('assigned_to', sql`uuid[]`, (c) => c.notNull())
      .addColumn('tags', sql`uuid[]`, (c) => c.notNull()),
  indexes: async (db) => {
    await sql`CREATE INDEX accounts_org_name ON accounts (org_id, lower(name))`.execute(db)
  },
})

const readDb = (db: Kysely<any>) => db as Kysely<Tables>

export type AccountListFilter = { limit: number; offset: number; name?: string; search?: string; tags?: string[]; assignedTo?: string[] }

export function listAccounts(db: Kysely<any>, orgId: string, filter: AccountListFilter): Promise<{ count: number; rows: AccountRow[] }> {
  let query = readDb(db).selectFrom('accounts').where('org_id', '=', orgId).where('is_deleted', '=', false)
  if (filter.name) query = query.where('name', 'ilike', containsPattern(filter.name))
  if (filter.search) {
    const pattern = containsPattern(filter.search)
    query = query.where((eb) => eb.or([eb('name', 'ilike', pattern), eb('email', 'ilike', pattern), eb('city', 'ilike', pattern)]))
  }
  if (filter.tags) query = query.where(anyOf('tags', filter.tags))
  if (filter.assignedTo) query = query.where(anyOf('assigned_to', filter.assignedTo))
  return fetchPage<AccountRow>(query, filter, (q) => q.orderBy(sql`lower(name)`).orderBy('id'))
}

/** A live account of the organization, or undefined: another org's id looks exactly like a missing one. */
export function accountOf(db: Kysely<any>, orgId: string, id: string): Promise<AccountRow | undefined> {
  return readDb(db).selectFrom('accounts').selectAll().where('org_id', '=', orgId).where('id', '=', id).where('is_deleted', '=', false).executeTakeFirst()
}

/** The live accounts of the organization carrying a tag, for a tag merge. */
export const accountsTagged = (db: Kysely<any>, orgId: string, tagId: string) => liveRecordsTagged(db, 'accounts', orgId, tagId)

/** Every live account of the organization, by name: the deal list's accounts_list picker. */
export function liveAccounts(db: Kysely<any>, orgId: string): Promise<AccountRow[]> {
  return readDb(db).selectFrom('accounts').selectAll().where('org_id', '=', orgId).where('is_deleted', '=', false).orderBy(sql`lower(name)`).orderBy('id').execute()
}
