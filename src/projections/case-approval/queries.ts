import type { ApprovalGate } from '../../commands/case-approval/gate.ts'
import type { Db } from '../../db/database.ts'
import type { ApprovalRow, ApprovalRuleRow } from './tables.ts'

export type { ApprovalRow, ApprovalRuleRow } from './tables.ts'

/** The organization's approval rules, newest first (the order a tie between equally specific rules is broken in). */
export function approvalRulesOf(db: Db, orgId: string): Promise<ApprovalRuleRow[]> {
  return db.selectFrom('case_approval_rules').selectAll().where('org_id', '=', orgId).orderBy('created_at', 'desc').orderBy('id').execute()
}

export function approvalRuleOf(db: Db, orgId: string, id: string): Promise<ApprovalRuleRow | undefined> {
  return db.selectFrom('case_approval_rules').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst()
}

/** Pending requests per rule id. */
export async function pendingByRule(db: Db, orgId: string): Promise<Map<string, number>> {
  const rows = await db.selectFrom('case_approvals').select(['rule_id', db.fn.countAll<string>().as('n')]).where('org_id', '=', orgId).where('state', '=', 'pending').groupBy('rule_id').execute()
  return new Map(rows.map((row) => [row.rule_id, Number(row.n)]))
}

/** Whether any request, in any state, was filed under the rule (then deleting it turns it off). */
export async function ruleHasRequests(db: Db, orgId: string, ruleId: string): Promise<boolean> {
  return (await db.selectFrom('case_approvals').select('id').where('org_id', '=', orgId).where('rule_id', '=', ruleId).limit(1).executeTakeFirst()) !== undefined
}

export function approvalOf(db: Db, orgId: string, id: string): Promise<ApprovalRow | undefined> {
  return db.selectFrom('case_approvals').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst()
}

/** The queue's rows, newest first: in one state (none: every state) and of one case (none: every case); at most `limit`. */
export function approvalsOf(db: Db, orgId: string, filter: { state?: string; caseId?: string; limit: number }): Promise<ApprovalRow[]> {
  let query = db.selectFrom('case_approvals').selectAll().where('org_id', '=', orgId)
  if (filter.state) query = query.where('state', '=', filter.state as ApprovalRow['state'])
  if (filter.caseId) query = query.where('case_id', '=', filter.caseId)
  return query.orderBy('created_at', 'desc').orderBy('id').limit(filter.limit).execute()
}

/** What closing a case is checked against (commands/case-approval/gate.ts): the active pre-close rules, newest first, and the rules the case holds an approval of. */
export async function approvalGateOf(db: Db, orgId: string, caseId: string): Promise<ApprovalGate> {
  const [rules, approved] = await Promise.all([
    db.selectFrom('case_approval_rules').select(['id', 'name', 'match_priority', 'match_case_type', 'match_team']).where('org_id', '=', orgId).where('is_active', '=', true).where('trigger_event', '=', 'pre_close').orderBy('created_at', 'desc').orderBy('id').execute(),
    db.selectFrom('case_approvals').select('rule_id').where('org_id', '=', orgId).where('case_id', '=', caseId).where('state', '=', 'approved').execute(),
  ])
  return { rules: rules as ApprovalGate['rules'], approvedRuleIds: approved.map((row) => row.rule_id) }
}
