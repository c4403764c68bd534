import type { AccountFields } from '../../commands/account/account.ts'
import type { NoteTablesOf } from '../kernel/note-tables.ts'

/** The accounts read model: one row per account, soft-deleted rows kept but hidden from every query. */
export type AccountRow = AccountFields & { id: string; org_id: string; created_by: string | null; is_deleted: boolean; created_at: Date; updated_at: Date }

export type AccountTables = { accounts: AccountRow } & NoteTablesOf<'account'>

