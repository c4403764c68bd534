import { randomUUID } from 'node:crypto'
import type { Deps } from '../../deps.ts'
import { ForbiddenError, NotFoundError, ValidationError, orNotFound } from '../../errors.ts'
import type { Position } from '../../eventstore/event-store.ts'
import { approvalOf, approvalRuleOf, approvalRulesOf, ruleHasRequests } from '../../projections/case-approval/queries.ts'
import { caseOf } from '../../projections/case/queries.ts'
import type { ApprovalRuleRow } from '../../projections/case-approval/queries.ts'
import type { Caller } from '../caller.ts'
import { actorOfCaller } from '../caller.ts'
import { commandSession } from '../command-session.ts'
import { mayWriteCase } from '../case/case.ts'
import { visibleCase } from '../case/write-case.ts'
import { caseApprovalDecider, caseApprovalStreams } from './approval.ts'
import type { CaseApprovalCommand, RuleNow } from './approval.ts'
import { checkOrgRefs, requireAdmin } from './org-refs.ts'
import { approvalRuleDecider, approvalRuleStreams, mostSpecificRule, ruleMatches } from './rules.ts'
import type { ApprovalRuleCommand, ApprovalRuleFields, MatchedCase, RuleMatch } from './rules.ts'

type ApprovalDeps = Pick<Deps, 'db' | 'store' | 'clock'>
type Written = { position: Position | null }

async function runRule(deps: ApprovalDeps, caller: Caller, id: string, command: ApprovalRuleCommand): Promise<Position | null> {
  const session = commandSession(deps.store, caller)
  await session.run(approvalRuleDecider, approvalRuleStreams.stream(id), command)
  return session.position()
}

const ruleRefs = (db: Deps['db'], orgId: string, fields: Partial<ApprovalRuleFields>) =>
  checkOrgRefs(db, orgId, { ...(fields.approvers && { approver_ids: { profiles: fields.approvers } }), match_team_id: { team: fields.match_team } })

/** Creates an approval rule (admins); its approvers and team must be of the organization. */
export async function createApprovalRule(deps: ApprovalDeps, caller: Caller, fields: ApprovalRuleFields): Promise<{ id: string } & Written> {
  requireAdmin(caller)
  await ruleRefs(deps.db, caller.orgId, fields)
  const id = randomUUID()
  const position = await runRule(deps, caller, id, { type: 'CreateApprovalRule', ruleId: id, orgId: caller.orgId, fields, actor: caller, at: deps.clock().toISOString() })
  return { id, position }
}

/** Changes the named fields of a rule (admins). */
export async function changeApprovalRule(deps: ApprovalDeps, caller: Caller, id: string, changes: Partial<ApprovalRuleFields>): Promise<Written> {
  requireAdmin(caller)
  await ruleRefs(deps.db, caller.orgId, changes)
  return { position: await runRule(deps, caller, id, { type: 'ChangeApprovalRule', orgId: caller.orgId, changes, actor: caller, at: deps.clock().toISOString() }) }
}

/** Deletes a rule (admins), or turns it off when any request was filed under it (`turnedOff`). */
export async function deleteApprovalRule(deps: ApprovalDeps, caller: Caller, id: string): Promise<{ turnedOff: boolean } & Written> {
  requireAdmin(caller)
  const hasRequests = await ruleHasRequests(deps.db, caller.orgId, id)
  return { turnedOff: hasRequests, position: await runRule(deps, caller, id, { type: 'DeleteApprovalRule', orgId: caller.orgId, hasRequests, actor: caller, at: deps.clock().toISOString() }) }
}

const asMatch = (rule: ApprovalRuleRow): RuleNow => ({ ...rule, match_priority: rule.match_priority as RuleMatch['match_priority'], match_case_type: rule.match_case_type as RuleMatch['match_case_type'], approver_role: rule.approver_role as RuleNow['approver_role'] })

/**
 * Files a request to close a case the caller may change (admin, creator or assignee): under the
 * rule named (active, matching the case), else under the rule that gates the case (400 when none).
 */
export async function requestApproval(deps: ApprovalDeps, caller: Caller, caseId: string, input: { ruleId?: string | null; note: string }): Promise<{ id: string } & Written> {
  const found = await visibleCase(deps.db, caller, caseId)
  if (!mayWriteCase({ createdBy: found.created_by, fields: found }, actorOfCaller(caller))) throw new ForbiddenError('Only an admin, the creator or an assignee may request an approval for this case')
  const active = (await approvalRulesOf(deps.db, caller.orgId)).filter((rule) => rule.is_active && rule.trigger_event === 'pre_close').map(asMatch)
  const rule = input.ruleId ? active.find((candidate) => candidate.id === input.ruleId) : mostSpecificRule(active, found)
  if (input.ruleId && !rule) throw new ValidationError('Rule not found or inactive.')
  if (!rule) throw new ValidationError('No active approval rule matches this case.')
  if (!ruleMatches(rule, found)) throw new ValidationError('Rule does not match this case.')
  const id = randomUUID()
  const session = commandSession(deps.store, caller)
  await session.run(caseApprovalDecider, caseApprovalStreams.stream(caseId), { type: 'RequestApproval', approvalId: id, orgId: caller.orgId, caseId, rule, note: input.note, actor: caller, at: deps.clock().toISOString() })
  return { id, position: session.position() }
}

export type ApprovalDecision = { kind: 'approve'; note?: string } | { kind: 'reject'; reason: string } | { kind: 'cancel' }

/** Decides a pending request: approve or reject (its rule's pool as it stands now, judged on the case now) or cancel (its requester or an admin). */
export async function decideApproval(deps: ApprovalDeps, caller: Caller, id: string, decision: ApprovalDecision): Promise<Written> {
  const approval = await orNotFound(approvalOf(deps.db, caller.orgId, id))
  const base = { approvalId: id, orgId: caller.orgId, actor: caller, at: deps.clock().toISOString() }
  let command: CaseApprovalCommand
  if (decision.kind === 'cancel') command = { type: 'CancelApproval', ...base }
  else {
    const row = await approvalRuleOf(deps.db, caller.orgId, approval.rule_id)
    const rule = row ? asMatch(row) : null
    if (decision.kind === 'reject') command = { type: 'RejectApproval', ...base, rule, reason: decision.reason }
    else {
      const current = await caseNow(deps.db, caller.orgId, approval.case_id)
      command = { type: 'ApproveApproval', ...base, rule, caseNow: current, note: decision.note }
    }
  }
  const session = commandSession(deps.store, caller)
  await session.run(caseApprovalDecider, caseApprovalStreams.stream(approval.case_id), command)
  return { position: session.position() }
}

/** What a rule is judged on: the case's priority, type and teams as they are now. */
async function caseNow(db: Deps['db'], orgId: string, caseId: string): Promise<MatchedCase> {
  const row = await caseOf(db, orgId, caseId)
  if (!row) throw new NotFoundError('Case not found')
  return { priority: row.priority, case_type: row.case_type, teams: row.teams }
}
