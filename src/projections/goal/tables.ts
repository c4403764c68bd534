import type { ColumnType } from 'kysely'
import type { GoalFields } from '../../commands/goal/goal.ts'

/**
 * The goals read model: one row per live goal (a deleted goal leaves none), and the won-deal
 * ledger its progress is summed from: one row per deal with what crediting a win needs, copied
 * from the deal's own events (a read model never reads another one's tables while applying, so it
 * rebuilds alone). `won` follows the KIND of the stage the deal is in (OpportunityCreated's
 * stage_kind, then each OpportunityStageChanged's `to.stage_kind`), never its code, so a renamed
 * code or a custom won stage counts, and a deal moved out of won stops counting. `credited` is who
 * a win counts for: the assignees, or the creator while nobody is assigned. Every statement sets
 * values, so applying an event twice changes nothing.
 */
export type GoalRow = GoalFields & { id: string; org_id: string; created_by: string | null; created_at: Date; updated_at: Date }

export type GoalDealRow = {
  deal_id: string
  org_id: string
  amount: string | null
  currency: string | null
  closed_on: string | null
  assigned_to: string[]
  created_by: string | null
  won: boolean
  is_deleted: boolean
}

/** `credited` is a generated column: read only. */
export type GoalTables = { goals: GoalRow; goal_deals: GoalDealRow & { credited: ColumnType<string[], never, never> } }

// This module's tables join the one Database type (db/database.ts).
declare module '../../db/database.ts' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging: the tables are the members
  interface Database extends GoalTables {}
}
