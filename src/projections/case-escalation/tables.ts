import type { EscalationAction } from '../../commands/case-escalation/escalation-policy.ts'

/** The escalation policies read model: one row per live policy (at most one per priority). `revision`: the last event of its stream applied. */
export type EscalationPolicyRow = {
  id: string
  org_id: string
  priority: string
  first_response_action: EscalationAction
  resolution_action: EscalationAction
  first_response_target: string | null
  resolution_target: string | null
  notify_team: string | null
  is_active: boolean
  revision: string
  created_at: Date
  updated_at: Date
}

export type CaseEscalationTables = { case_escalation_policies: EscalationPolicyRow }

// This module's tables join the one Database type (db/database.ts).
declare module '../../db/database.ts' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging: the tables are the members
  interface Database extends CaseEscalationTables {}
}
