import type { AccountFields } from '../../commands/account/account.ts'
import type { NoteTablesOf } from '../kernel/note-tables.ts'

/** The accounts read model: one row per account, soft-deleted rows kept but hidden from every query. */
export type AccountRow = AccountFields & { id: string; org_id: string; created_by: string | null; is_deleted: boolean; created_at: Date; updated_at: Date }

export type AccountTables = { accounts: AccountRow } & NoteTablesOf<'account'>

// This module's tables join the one Database type (db/database.ts).
declare module '../../db/database.ts' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging: the tables are the members
  interface Database extends AccountTables {}
}
