import type { CaseFields } from '../../commands/case/fields.ts'
import type { WatchVia } from '../../commands/case/case.ts'
import type { SlaClocks } from '../../commands/case/sla.ts'
import type { NoteTablesOf } from '../kernel/note-tables.ts'

/**
 * The cases read model: one row per case (deleted ones kept, flagged) with its SLA facts (targets,
 * first response, resolution, the running pause, its SLA instances' events and the clock's running
 * deadlines), its watchers (also as a list on the row, for the visibility predicate), which of its
 * comments are internal notes, and its comments and attachments (projections/kernel/notes.ts).
 */
export type CaseRow = CaseFields & {
  id: string
  org_id: string
  created_by: string | null
  watchers: string[]
  sla_first_response_hours: number
  sla_resolution_hours: number
  first_response_at: Date | null
  resolved_at: Date | null
  /** When the running pause began (Pending now), else null. */
  sla_paused_at: Date | null
  /** Each SLA instance's events, as the clock reads them (commands/case/sla.ts). */
  sla_clocks: SlaClocks
  /** Per instance: its deadline while running (none while paused or done), and a breach it reached while still open: breached at `now` ⇔ breached_at set or deadline < now. */
  sla_first_response_deadline: Date | null
  sla_first_response_breached_at: Date | null
  sla_resolution_deadline: Date | null
  sla_resolution_breached_at: Date | null
  /** How many times the escalator escalated it (at most 3), and when last. */
  escalation_count: number
  last_escalation_fired_at: Date | null
  /** Its place on the case board: null pipeline and stage on the status board; `kanban_order` the creation time in ms until a move sets it. */
  pipeline_id: string | null
  stage_id: string | null
  stage: string | null
  kanban_order: number
  is_deleted: boolean
  created_at: Date
  updated_at: Date
}

export type CaseWatcherRow = { case_id: string; profile_id: string; org_id: string; subscribed_via: WatchVia; created_at: Date }
export type CaseInternalNoteRow = { comment_id: string; case_id: string }

/** Live cases by status, priority and awaiting a first reply: per organization (and unassigned or not), per profile as assignee or involved (case-counts.ts). */
export type CaseCountRow = { org_id: string; status: string; priority: string; awaiting: boolean; unassigned: boolean; n: number }
export type CaseProfileCountRow = { org_id: string; profile_id: string; kind: 'assigned' | 'involved'; status: string; priority: string; awaiting: boolean; n: number }

export type CaseTables = { cases: CaseRow; case_watchers: CaseWatcherRow; case_internal_notes: CaseInternalNoteRow; case_counts: CaseCountRow; case_profile_counts: CaseProfileCountRow } & NoteTablesOf<'case'>

// This module's tables join the one Database type (db/database.ts).
declare module '../../db/database.ts' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging: the tables are the members
  interface Database extends CaseTables {}
}
