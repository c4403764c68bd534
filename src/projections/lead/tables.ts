import type { LeadFields } from '../../commands/lead/lead.ts'
import type { NoteTablesOf } from '../kernel/note-tables.ts'

/**
 * The leads read model: one row per lead (deleted ones kept, flagged) with what conversion
 * created, its place on the lead board (commands/lead/move.ts: null pipeline and stage until its first
 * move; `kanban_order` the creation time in ms until then), and the lead's comments and attachments
 * (projections/kernel/notes.ts). `worked_at` is the time of the lead's last event of any kind, notes and
 * moves included: what "unworked" is measured from.
 */
export type LeadRow = Omit<LeadFields, 'close_date' | 'last_contacted' | 'next_follow_up'> & {
  id: string
  org_id: string
  close_date: string | null
  last_contacted: string | null
  next_follow_up: string | null
  converted_account: string | null
  converted_contact: string | null
  converted_opportunity: string | null
  converted_by: string | null
  converted_at: Date | null
  created_by: string | null
  is_deleted: boolean
  /** The person was erased (issue 31): their personal fields blank. */
  is_erased: boolean
  created_at: Date
  updated_at: Date
  worked_at: Date
  pipeline_id: string | null
  stage_id: string | null
  stage: string | null
  kanban_order: number
  stage_changed_at: Date | null
}

export type LeadTables = { leads: LeadRow } & NoteTablesOf<'lead'>

// This module's tables join the one Database type (db/database.ts).
declare module '../../db/database.ts' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging: the tables are the members
  interface Database extends LeadTables {}
}
