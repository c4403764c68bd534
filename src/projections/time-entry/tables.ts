/**
 * The time entries read model: one row per live entry (a deleted one leaves none). `ended_at` null
 * while its timer runs; `duration_minutes` whole minutes, 0 while running; `hourly_rate` a decimal
 * (numeric, read back as a string); `billed` false until invoicing bills it.
 */
export type TimeEntryRow = {
  id: string
  org_id: string
  case_id: string
  profile_id: string
  started_at: Date
  ended_at: Date | null
  duration_minutes: number
  description: string
  billable: boolean
  hourly_rate: string | null
  currency: string
  billed: boolean
  /** Stopped by the service after 12 hours running (a forgotten timer). */
  auto_stopped: boolean
  created_at: Date
  updated_at: Date
}

export type TimeEntryTables = { time_entries: TimeEntryRow }

// This module's tables join the one Database type (db/database.ts).
declare module '../../db/database.ts' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging: the tables are the members
  interface Database extends TimeEntryTables {}
}
