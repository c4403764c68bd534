import type { LineItem } from '../../commands/opportunity/line-items.ts'
import type { DealFields, Placement } from '../../commands/opportunity/opportunity.ts'

/**
 * The stage-change ledger (issue 8 §2, analysts replaying stage changes): one row per entry of a
 * deal into a stage, keyed by the event id, so applying an event twice inserts nothing the second
 * time. A deal's creation is its entry into its first stage (`event_type` OpportunityCreated, no
 * `from_*`); every OpportunityStageChanged is one more row. Each row carries the deal's name,
 * amount and currency as they were then (after any edit of the same request, which is recorded
 * before the move), kept per deal in `stage_change_deals`, this projector's own table: a read model
 * never reads another one's tables while applying, so it rebuilds alone.
 *
 * Rows are ordered by the event's global position (`position_commit`, `position_prepare`), the
 * keyset the streamed feed pages on. A stay in a stage runs from its row to the deal's next row.
 */
export type StageChangeRow = {
  event_id: string
  position_commit: string
  position_prepare: string
  org_id: string
  deal_id: string
  event_type: 'OpportunityCreated' | 'OpportunityStageChanged'
  deal_name: string
  pipeline_id: string
  from_pipeline_id: string | null
  from_stage: string | null
  from_stage_id: string | null
  from_kind: string | null
  to_stage: string
  to_stage_id: string
  to_kind: string
  amount: string | null
  currency: string | null
  actor_id: string | null
  at: Date
  /** Whole days between the entry into the previous stage and this change; null for a creation. */
  days_in_previous_stage: number | null
}

/** A deal as the ledger needs it: what a stage change copies, and when its current stay began. */
export type StageChangeDealRow = { deal_id: string; org_id: string; name: string; amount: string | null; currency: string | null; stage_entered_at: Date }

export type StageChangeTables = { stage_changes: StageChangeRow; stage_change_deals: StageChangeDealRow }

/**
 * The deals read model: one row per deal (deleted ones kept, flagged), what the detail, the rules'
 * counts (deals in a stage or pipeline) and the board placement read; and the rollups of
 * opportunity-rollups.ts. `revision` is the deal stream's revision, the detail's ETag. Every statement
 * sets values (the rollups move by a before/after difference), so replaying an event is harmless.
 */
export type OpportunityRow = Omit<DealFields, 'amount' | 'closed_on'> &
  Placement & { id: string; org_id: string; amount: string | null; closed_on: string | null; created_by: string | null; kanban_order: number; stage_changed_at: Date; stalls_at: Date | null; revision: string; is_deleted: boolean; created_at: Date; updated_at: Date }

/** A deal's comments and attachments, kept (flagged) when removed so history can still name them. */
export type CommentRow = { id: string; opportunity_id: string; org_id: string; comment: string; created_by: string | null; is_deleted: boolean; created_at: Date; updated_at: Date }

export type AttachmentRow = { id: string; opportunity_id: string; org_id: string; file_name: string; content_type: string; size: number; storage_key: string; created_by: string | null; is_deleted: boolean; created_at: Date }

export type LineItemRow = LineItem & { opportunity_id: string; org_id: string; total: string; position: string; is_deleted: boolean; created_at: Date; updated_at: Date }

export type OpportunityTables = { opportunities: OpportunityRow; opportunity_comments: CommentRow; opportunity_attachments: AttachmentRow; opportunity_line_items: LineItemRow }

/** The rollups kept beside the deal rows (opportunity-rollups.ts); bigint and numeric columns come back as strings. */
export type DealStageRottingRow = { stage_id: string; pipeline_id: string; expected_days: number | null }
export type DealTotalsRow = { org_id: string; stage_id: string; stage: string; stage_kind: string; currency: string; n: string; priced: string; amount_sum: string; weighted_sum: string }
export type DealStallDaysRow = { org_id: string; pipeline_id: string; day: Date; n: string }

export type DealRollupTables = { deal_stage_rotting: DealStageRottingRow; deal_totals: DealTotalsRow; deal_stall_days: DealStallDaysRow }

// This module's tables join the one Database type (db/database.ts).
declare module '../../db/database.ts' {
  interface Database extends StageChangeTables, OpportunityTables, DealRollupTables {}
}
