import { DomainError, ForbiddenError, NotFoundError, ValidationError } from '../../errors.ts'
import type { Decider } from '../decider.ts'
import { streamCategory } from '../streams.ts'
import { ruleMatches } from './rules.ts'
import type { ApprovalRuleFields, MatchedCase, RuleMatch } from './rules.ts'

/**
 * The approval requests of one case (the original's Approval rows), in one stream per case, so the
 * rule "one pending request per case and rule" is decided on everything stored, never raced. A
 * request is pending until an approver of its rule's pool approves or rejects it (never the one who
 * asked: separation of duties) or its requester (or an admin) cancels it. An approval is judged on
 * the case as it is when it is decided: the rule, as it then stands, must still apply to the case,
 * and the event records the case's priority, type and teams it was judged on.
 */
export const APPROVAL_STATES = ['pending', 'approved', 'rejected', 'cancelled'] as const
export type ApprovalState = (typeof APPROVAL_STATES)[number]

type Decided = { approval_id: string; by: string; at: string }
/** The case a request was approved on: what its rule was judged against. */
export type JudgedOn = { priority: MatchedCase['priority']; case_type: MatchedCase['case_type']; teams: string[] }
// Events: the storage contract.
export type CaseApprovalEvent =
  | { type: 'CaseApprovalRequested'; data: { approval_id: string; org_id: string; case_id: string; rule_id: string; rule_name: string; requested_by: string; note: string; at: string } }
  | { type: 'CaseApprovalApproved'; data: Decided & { note: string; judged_on: JudgedOn } }
  | { type: 'CaseApprovalRejected'; data: Decided & { reason: string } }
  | { type: 'CaseApprovalCancelled'; data: Decided }

type Request = { ruleId: string; requestedBy: string; state: ApprovalState; note: string }
export type CaseApprovals = { orgId: string | null; requests: Record<string, Request> }
const initialState = (): CaseApprovals => ({ orgId: null, requests: {} })

const STATE_OF = { CaseApprovalApproved: 'approved', CaseApprovalRejected: 'rejected', CaseApprovalCancelled: 'cancelled' } as const

function evolve(state: CaseApprovals, event: CaseApprovalEvent): CaseApprovals {
  if (event.type === 'CaseApprovalRequested') {
    const { approval_id, org_id, rule_id, requested_by, note } = event.data
    return { orgId: org_id, requests: { ...state.requests, [approval_id]: { ruleId: rule_id, requestedBy: requested_by, state: 'pending', note } } }
  }
  const request = state.requests[event.data.approval_id]!
  return { ...state, requests: { ...state.requests, [event.data.approval_id]: { ...request, state: STATE_OF[event.type] } } }
}

/** A member acting: only members (not the organization API key) request and decide approvals. */
type Member = { profileId: string | null; isAdmin: boolean }
/** The rule as it stands when a request is decided (null: deleted since). */
export type RuleNow = RuleMatch & Pick<ApprovalRuleFields, 'approver_role' | 'approvers' | 'is_active'>

export type CaseApprovalCommand =
  | { type: 'RequestApproval'; approvalId: string; orgId: string; caseId: string; rule: RuleMatch; note: string; actor: Member; at: string }
  | { type: 'ApproveApproval'; approvalId: string; orgId: string; rule: RuleNow | null; caseNow: MatchedCase; note?: string; actor: Member; at: string }
  | { type: 'RejectApproval'; approvalId: string; orgId: string; rule: RuleNow | null; reason: string; actor: Member; at: string }
  | { type: 'CancelApproval'; approvalId: string; orgId: string; actor: Member; at: string }

const member = (actor: Member): string => {
  if (actor.profileId === null) throw new ForbiddenError('Only a member may request or decide an approval')
  return actor.profileId
}

/** The rule's pool: its named approvers, or anyone of its role (ADMIN: an organization admin; MANAGER: nobody yet). */
export const mayApprove = (rule: Pick<RuleNow, 'approvers' | 'approver_role'> | null, actor: Member): boolean =>
  rule !== null && actor.profileId !== null && (rule.approvers.includes(actor.profileId) || (rule.approver_role === 'ADMIN' && actor.isAdmin))

function pendingRequest(state: CaseApprovals, command: { approvalId: string; orgId: string }): Request {
  const request = state.requests[command.approvalId]
  if (!request || state.orgId !== command.orgId) throw new NotFoundError('Approval not found')
  if (request.state !== 'pending') throw new ValidationError(`Approval already ${request.state}.`)
  return request
}

/** Approve and reject: by the rule's pool as it is now, never by the requester. */
function decider(command: Extract<CaseApprovalCommand, { rule: RuleNow | null }>, request: Request): string {
  const by = member(command.actor)
  if (!mayApprove(command.rule, command.actor)) throw new ForbiddenError('You are not an approver for this rule.')
  if (request.requestedBy === by) throw new ForbiddenError(`You cannot ${command.type === 'ApproveApproval' ? 'approve' : 'reject'} your own request; another approver must decide it.`)
  return by
}

function decide(command: CaseApprovalCommand, state: CaseApprovals): CaseApprovalEvent[] {
  const { approvalId: approval_id, at } = command
  switch (command.type) {
    case 'RequestApproval': {
      if (state.requests[approval_id]) return []
      const requested_by = member(command.actor)
      const pending = Object.entries(state.requests).find(([, request]) => request.ruleId === command.rule.id && request.state === 'pending')
      if (pending) throw new DomainError(409, `An approval is already pending for this case (approval ${pending[0]}).`)
      return [{ type: 'CaseApprovalRequested', data: { approval_id, org_id: command.orgId, case_id: command.caseId, rule_id: command.rule.id, rule_name: command.rule.name, requested_by, note: command.note, at } }]
    }
    case 'ApproveApproval': {
      const request = pendingRequest(state, command)
      const by = decider(command, request)
      // Judged on the case now: a rule turned off, or one the case no longer matches, gates nothing to approve.
      if (!command.rule?.is_active || !ruleMatches(command.rule, command.caseNow)) throw new DomainError(409, 'The rule no longer applies to this case as it is now; cancel the request.')
      return [{ type: 'CaseApprovalApproved', data: { approval_id, by, note: (command.note || request.note).slice(0, 4096), judged_on: { priority: command.caseNow.priority, case_type: command.caseNow.case_type, teams: [...command.caseNow.teams] }, at } }]
    }
    case 'RejectApproval': {
      const reason = command.reason.trim()
      if (!reason) throw new ValidationError('Rejection reason is required.')
      const by = decider(command, pendingRequest(state, command))
      return [{ type: 'CaseApprovalRejected', data: { approval_id, by, reason: reason.slice(0, 4096), at } }]
    }
    case 'CancelApproval': {
      const request = pendingRequest(state, command)
      const by = member(command.actor)
      if (request.requestedBy !== by && !command.actor.isAdmin) throw new ForbiddenError('Only the requester can cancel.')
      return [{ type: 'CaseApprovalCancelled', data: { approval_id, by, at } }]
    }
  }
}

export const caseApprovalDecider: Decider<CaseApprovalCommand, CaseApprovals, CaseApprovalEvent> = { initialState, evolve, decide }
/** case_approval-<case id>: every request of one case. */
export const caseApprovalStreams = streamCategory('case_approval')
