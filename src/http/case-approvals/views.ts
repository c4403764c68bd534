import { z } from 'zod'
import { mayApprove } from '../../commands/case-approval/approval.ts'
import { APPROVAL_STATES } from '../../commands/case-approval/approval.ts'
import { APPROVER_ROLES, TRIGGER_EVENTS } from '../../commands/case-approval/rules.ts'
import type { ApproverRole } from '../../commands/case-approval/rules.ts'
import type { Caller } from '../../commands/caller.ts'
import { actorOfCaller } from '../../commands/caller.ts'
import { mayReadCase } from '../../commands/case/case.ts'
import { CASE_PRIORITIES, CASE_TYPES } from '../../commands/case/fields.ts'
import type { Db } from '../../db/database.ts'
import { membersByIds } from '../../identity/users.ts'
import type { ApprovalRow, ApprovalRuleRow } from '../../projections/case-approval/queries.ts'
import { caseOf } from '../../projections/case/queries.ts'
import type { CaseRecord } from '../../projections/case/queries.ts'
import { nameRefs } from '../kernel/relations.ts'

/** A profile as the approval screens name it: its id and email (the original's `{id, email}`). */
const Person = z.object({ id: z.uuid(), email: z.string() })
const NameRef = z.object({ id: z.uuid(), name: z.string() })

export const ApprovalRule = z.object({
  id: z.uuid(),
  name: z.string(),
  trigger_event: z.enum(TRIGGER_EVENTS),
  match_priority: z.enum(CASE_PRIORITIES).nullable(),
  match_case_type: z.enum(CASE_TYPES).nullable(),
  match_team: NameRef.nullable(),
  approver_role: z.enum(APPROVER_ROLES),
  approvers: z.array(Person),
  is_active: z.boolean(),
  pending_count: z.number().int().describe('Requests under the rule still pending'),
  created_at: z.string(),
  updated_at: z.string(),
})

export const Approval = z.object({
  id: z.uuid(),
  state: z.enum(APPROVAL_STATES),
  note: z.string(),
  reason: z.string(),
  decided_at: z.string().nullable(),
  case_summary: z.object({ id: z.uuid(), name: z.string(), status: z.string(), priority: z.string(), account: NameRef.nullable() }),
  rule_summary: z.object({ id: z.uuid(), name: z.string(), trigger_event: z.string(), approver_role: z.string(), approvers: z.array(Person) }),
  requested_by: Person,
  approver: Person.nullable(),
  can_act: z.boolean().describe('Whether the caller may approve or reject it now: pending, in its pool, not its requester'),
  is_own_request: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
})

async function emails(db: Db, orgId: string, ids: readonly string[]): Promise<Map<string, z.infer<typeof Person>>> {
  return new Map((await membersByIds(db, orgId, [...new Set(ids)])).map((member) => [member.id, { id: member.id, email: member.email }]))
}
const people = (byId: Map<string, z.infer<typeof Person>>, ids: readonly string[]) => ids.map((id) => byId.get(id) ?? { id, email: '' })

export async function ruleViews(db: Db, orgId: string, rows: readonly ApprovalRuleRow[], pending: Map<string, number>): Promise<z.infer<typeof ApprovalRule>[]> {
  const [byId, teams] = await Promise.all([emails(db, orgId, rows.flatMap((row) => row.approvers)), nameRefs(db, 'teams', orgId, rows.flatMap((row) => (row.match_team ? [row.match_team] : [])))])
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    trigger_event: 'pre_close',
    match_priority: row.match_priority as z.infer<typeof ApprovalRule>['match_priority'],
    match_case_type: row.match_case_type as z.infer<typeof ApprovalRule>['match_case_type'],
    match_team: (row.match_team && teams.get(row.match_team)) || null,
    approver_role: row.approver_role as ApproverRole,
    approvers: people(byId, row.approvers),
    is_active: row.is_active,
    pending_count: pending.get(row.id) ?? 0,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  }))
}

type Rules = Map<string, ApprovalRuleRow>

/**
 * Who sees an approval (the original's _visible_approvals): an admin; whoever may read its case;
 * the rule's approvers (the queue is theirs, the case often not); and its requester.
 */
export function maySeeApproval(caller: Caller, row: ApprovalRow, found: CaseRecord | undefined, rule: ApprovalRuleRow | undefined): boolean {
  const actor = actorOfCaller(caller)
  return caller.isAdmin || row.requested_by === caller.profileId || mayApprove(rule ? { approvers: rule.approvers, approver_role: rule.approver_role as ApproverRole } : null, actor) || (found !== undefined && mayReadCase({ createdBy: found.created_by, fields: found, watchers: found.watchers }, actor))
}

export const canAct = (caller: Caller, row: ApprovalRow, rule: ApprovalRuleRow | undefined): boolean =>
  row.state === 'pending' && row.requested_by !== caller.profileId && mayApprove(rule ? { approvers: rule.approvers, approver_role: rule.approver_role as ApproverRole } : null, caller)

/** The approvals the caller sees, as the queue shows them (`mine`: only those the caller may decide now). */
export async function approvalViews(db: Db, caller: Caller, rows: readonly ApprovalRow[], rules: Rules, options: { mine?: boolean } = {}): Promise<z.infer<typeof Approval>[]> {
  const cases = new Map<string, CaseRecord | undefined>()
  for (const id of new Set(rows.map((row) => row.case_id))) cases.set(id, await caseOf(db, caller.orgId, id))
  const shown = rows.filter((row) => cases.get(row.case_id) && maySeeApproval(caller, row, cases.get(row.case_id), rules.get(row.rule_id)) && (!options.mine || canAct(caller, row, rules.get(row.rule_id))))
  const ruleApprovers = (row: ApprovalRow) => rules.get(row.rule_id)?.approvers ?? []
  const [byId, accounts] = await Promise.all([
    emails(db, caller.orgId, shown.flatMap((row) => [row.requested_by, ...(row.approver ? [row.approver] : []), ...ruleApprovers(row)])),
    nameRefs(db, 'accounts', caller.orgId, shown.flatMap((row) => cases.get(row.case_id)?.account ?? [])),
  ])
  return shown.map((row) => {
    const found = cases.get(row.case_id)!
    const rule = rules.get(row.rule_id)
    return {
      id: row.id,
      state: row.state,
      note: row.note,
      reason: row.reason,
      decided_at: row.decided_at?.toISOString() ?? null,
      case_summary: { id: found.id, name: found.name, status: found.status, priority: found.priority, account: (found.account && accounts.get(found.account)) || null },
      rule_summary: { id: row.rule_id, name: rule?.name ?? row.rule_name, trigger_event: 'pre_close', approver_role: rule?.approver_role ?? 'ADMIN', approvers: people(byId, ruleApprovers(row)) },
      requested_by: byId.get(row.requested_by) ?? { id: row.requested_by, email: '' },
      approver: row.approver ? (byId.get(row.approver) ?? { id: row.approver, email: '' }) : null,
      can_act: canAct(caller, row, rule),
      is_own_request: row.requested_by === caller.profileId,
      created_at: row.created_at.toISOString(),
      updated_at: row.updated_at.toISOString(),
    }
  })
}
