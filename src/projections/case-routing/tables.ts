import type { Condition } from '../../commands/case-routing/conditions.ts'
import type { RoutingMiss, Strategy } from '../../commands/case-routing/routing-rule.ts'

/**
 * The routing read models: one row per live routing rule (with its round-robin cursor once it has
 * routed), and one per case a rule routed (`id`: the rule's stream and the event's revision), what
 * the settings page counts. `revision` is the last event of the rule's stream applied to its row.
 */
export type RoutingRuleRow = {
  id: string
  org_id: string
  name: string
  priority_order: number
  is_active: boolean
  conditions: Condition[]
  strategy: Strategy
  stop_processing: boolean
  target_assignees: string[]
  target_team: string | null
  next_index: number | null
  revision: string
  created_at: Date
  updated_at: Date
}

export type CaseRoutingRow = { id: string; org_id: string; rule_id: string; case_id: string; assigned_to: string | null; team: string | null; reason: RoutingMiss; routed_at: Date }

export type CaseRoutingTables = { case_routing_rules: RoutingRuleRow; case_routings: CaseRoutingRow }

// This module's tables join the one Database type (db/database.ts).
declare module '../../db/database.ts' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging: the tables are the members
  interface Database extends CaseRoutingTables {}
}
