import type { DocumentStatus } from '../../commands/document/document.ts'

/**
 * The documents read model: one row per live document (a deleted one leaves none). `assigned_to`
 * holds the profiles it is shared with: the name the visibility policy's `involved` rule reads
 * (visibleSql); the API calls it `shared_to`.
 */
export type DocumentRow = {
  id: string
  org_id: string
  title: string
  status: DocumentStatus
  file_name: string
  content_type: string
  size: number
  storage_key: string
  assigned_to: string[]
  teams: string[]
  created_by: string | null
  created_at: Date
  updated_at: Date
}

export type DocumentTables = { documents: DocumentRow }

// This module's tables join the one Database type (db/database.ts).
declare module '../../db/database.ts' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging: the tables are the members
  interface Database extends DocumentTables {}
}
