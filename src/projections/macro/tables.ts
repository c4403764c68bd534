import type { MacroScope } from '../../commands/macro/macro.ts'

/**
 * The macros read model: one row per live macro (a deleted personal one leaves none), with how many
 * times it was applied. `revision` is the last event of its stream applied here, so a use counted
 * once is never counted again when an event is applied twice.
 */
export type MacroRow = {
  id: string
  org_id: string
  title: string
  body: string
  scope: MacroScope
  owner: string | null
  is_active: boolean
  usage_count: number
  revision: string
  created_by: string | null
  created_at: Date
  updated_at: Date
}

export type MacroTables = { macros: MacroRow }

// This module's tables join the one Database type (db/database.ts).
declare module '../../db/database.ts' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging: the tables are the members
  interface Database extends MacroTables {}
}
