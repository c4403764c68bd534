/** The API settings read model: one row per live setting (a deleted one leaves none). The key itself is never here: its hash and prefix. */
export type ApiSettingRow = {
  id: string
  org_id: string
  title: string
  website: string | null
  lead_assigned_to: string[]
  tags: string[]
  key_hash: string
  key_prefix: string
  created_by: string | null
  created_at: Date
  updated_at: Date
}

export type ApiSettingTables = { api_settings: ApiSettingRow }

// This module's tables join the one Database type (db/database.ts).
declare module '../../db/database.ts' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging: the tables are the members
  interface Database extends ApiSettingTables {}
}
