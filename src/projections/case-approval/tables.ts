import type { ApprovalState, JudgedOn } from '../../commands/case-approval/approval.ts'

/**
 * The approvals read models: one row per live approval rule, and one per approval request (with
 * the rule's name when it was asked, so a deleted rule's history still reads). `revision` is the
 * last event of the row's stream applied to it, so an event applied twice changes nothing.
 */
export type ApprovalRuleRow = {
  id: string
  org_id: string
  name: string
  trigger_event: string
  match_priority: string | null
  match_case_type: string | null
  match_team: string | null
  approver_role: string
  approvers: string[]
  is_active: boolean
  revision: string
  created_at: Date
  updated_at: Date
}

export type ApprovalRow = {
  id: string
  org_id: string
  case_id: string
  rule_id: string
  rule_name: string
  requested_by: string
  approver: string | null
  state: ApprovalState
  note: string
  reason: string
  judged_on: JudgedOn | null
  decided_at: Date | null
  revision: string
  created_at: Date
  updated_at: Date
}

export type CaseApprovalTables = { case_approval_rules: ApprovalRuleRow; case_approvals: ApprovalRow }

// This module's tables join the one Database type (db/database.ts).
declare module '../../db/database.ts' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging: the tables are the members
  interface Database extends CaseApprovalTables {}
}
