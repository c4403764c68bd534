/**
 * The boards read model: one row per live board, per membership (the owner's included, role
 * `owner`), per column and per card. A deleted board leaves no rows. A card's `rank` orders its
 * column; its index there is computed when read.
 */
export type BoardRow = { id: string; org_id: string; name: string; description: string | null; owner_id: string | null; is_archived: boolean; created_at: Date; updated_at: Date }

export type BoardMemberRow = { board_id: string; profile_id: string; role: string }

export type BoardColumnRow = { id: string; board_id: string; org_id: string; name: string; order: number; color: string; limit: number | null; created_at: Date }

export type BoardCardRow = {
  id: string
  board_id: string
  column_id: string
  org_id: string
  title: string
  description: string | null
  priority: string
  due_date: Date | null
  assigned_to: string[]
  completed_at: Date | null
  rank: number
  created_by: string | null
  created_at: Date
  updated_at: Date
}

export type BoardTables = { boards: BoardRow; board_members: BoardMemberRow; board_columns: BoardColumnRow; board_cards: BoardCardRow }

// This module's tables join the one Database type (db/database.ts).
declare module '../../db/database.ts' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging: the tables are the members
  interface Database extends BoardTables {}
}
