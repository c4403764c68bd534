/**
 * The tags read model: one row per tag. Archived tags (is_active false) and merged sources (archived,
 * pointing at their target) are kept and listed on request; deleted ones (the older soft delete) are
 * kept too, restorable.
 */
export type TagRow = {
  id: string
  org_id: string
  name: string
  color: string | null
  description: string
  is_active: boolean
  is_deleted: boolean
  merged_into: string | null
  created_by: string | null
  created_at: Date
  updated_at: Date
}

export type TagTables = { tags: TagRow }

// This module's tables join the one Database type (db/database.ts).
declare module '../../db/database.ts' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging: the tables are the members
  interface Database extends TagTables {}
}
