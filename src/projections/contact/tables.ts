import type { ContactFields } from '../../commands/contact/contact.ts'
import type { NoteTablesOf } from '../kernel/note-tables.ts'

/** The contacts read model: one row per contact, soft-deleted rows kept but hidden from every query. */
export type ContactRow = ContactFields & { id: string; org_id: string; created_by: string | null; is_deleted: boolean; created_at: Date; updated_at: Date; /** The person was erased (issue 31). */ is_erased: boolean }

export type ContactTables = { contacts: ContactRow } & NoteTablesOf<'contact'>

// This module's tables join the one Database type (db/database.ts).
declare module '../../db/database.ts' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging: the tables are the members
  interface Database extends ContactTables {}
}
