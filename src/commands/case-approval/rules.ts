import { ValidationError } from '../../errors.ts'
import type { Decider } from '../decider.ts'
import { streamCategory } from '../streams.ts'
import type { CasePriority, CaseType } from '../case/fields.ts'
import { adminOnly, changedFields, liveIn } from './settings-record.ts'
import type { SettingsActor } from './settings-record.ts'

/**
 * Approval rules (the original's cases/approvals.py ApprovalRule): an admin's predicate on a case's
 * priority, type and team that gates closing it (`pre_close`, the one trigger) until an approver
 * of the rule's pool (named profiles, or everyone of `approver_role`) has approved a request. Of
 * the active rules matching a case, the most specific (most filters set) wins, the newest on a tie,
 * so an admin overrides an older rule by writing a newer one. Deleting a rule that gated a request
 * turns it off instead: its requests keep pointing at it.
 */
export const TRIGGER_EVENTS = ['pre_close'] as const
/** MANAGER is the original's reserved role: no profile holds it, so it matches nobody. */
export const APPROVER_ROLES = ['ADMIN', 'MANAGER'] as const
export type ApproverRole = (typeof APPROVER_ROLES)[number]

export type ApprovalRuleFields = {
  name: string
  trigger_event: (typeof TRIGGER_EVENTS)[number]
  match_priority: CasePriority | null
  match_case_type: CaseType | null
  match_team: string | null
  approver_role: ApproverRole
  approvers: string[]
  is_active: boolean
}

// Events: the storage contract.
export type ApprovalRuleEvent =
  | { type: 'CaseApprovalRuleCreated'; data: ApprovalRuleFields & { rule_id: string; org_id: string; created_by: string | null; at: string } }
  | { type: 'CaseApprovalRuleUpdated'; data: Partial<ApprovalRuleFields> & { by: string | null; at: string } }
  | { type: 'CaseApprovalRuleDeleted'; data: { by: string | null; at: string } }

export type ApprovalRuleState = { exists: boolean; deleted: boolean; orgId: string | null; fields: ApprovalRuleFields | null }
const initialState = (): ApprovalRuleState => ({ exists: false, deleted: false, orgId: null, fields: null })

function evolve(state: ApprovalRuleState, event: ApprovalRuleEvent): ApprovalRuleState {
  switch (event.type) {
    case 'CaseApprovalRuleCreated': {
      const { rule_id: _id, org_id, created_by: _by, at: _at, ...fields } = event.data
      return { exists: true, deleted: false, orgId: org_id, fields }
    }
    case 'CaseApprovalRuleUpdated': {
      const { by: _by, at: _at, ...changes } = event.data
      return { ...state, fields: { ...state.fields!, ...changes } }
    }
    case 'CaseApprovalRuleDeleted':
      return { ...state, deleted: true }
  }
}

export type ApprovalRuleCommand =
  | { type: 'CreateApprovalRule'; ruleId: string; orgId: string; fields: ApprovalRuleFields; actor: SettingsActor; at: string }
  | { type: 'ChangeApprovalRule'; orgId: string; changes: Partial<ApprovalRuleFields>; actor: SettingsActor; at: string }
  /** `hasRequests`: whether any approval was ever requested under the rule (looked up): then it is turned off, not deleted. */
  | { type: 'DeleteApprovalRule'; orgId: string; hasRequests: boolean; actor: SettingsActor; at: string }

function decide(command: ApprovalRuleCommand, state: ApprovalRuleState): ApprovalRuleEvent[] {
  adminOnly(command.actor)
  const by = command.actor.profileId
  if (command.type === 'CreateApprovalRule') {
    if (state.exists) return []
    if (!command.fields.name.trim()) throw new ValidationError({ name: ['This field may not be blank.'] })
    return [{ type: 'CaseApprovalRuleCreated', data: { rule_id: command.ruleId, org_id: command.orgId, ...command.fields, created_by: by, at: command.at } }]
  }
  if (state.exists && state.deleted && state.orgId === command.orgId && command.type === 'DeleteApprovalRule') return []
  liveIn(state, command.orgId, 'Rule not found')
  const fields = state.fields!
  if (command.type === 'DeleteApprovalRule') {
    if (!command.hasRequests) return [{ type: 'CaseApprovalRuleDeleted', data: { by, at: command.at } }]
    return fields.is_active ? [{ type: 'CaseApprovalRuleUpdated', data: { is_active: false, by, at: command.at } }] : []
  }
  if (command.changes.name !== undefined && !command.changes.name.trim()) throw new ValidationError({ name: ['This field may not be blank.'] })
  const changes = changedFields(fields, command.changes)
  return Object.keys(changes).length ? [{ type: 'CaseApprovalRuleUpdated', data: { ...changes, by, at: command.at } }] : []
}

export const approvalRuleDecider: Decider<ApprovalRuleCommand, ApprovalRuleState, ApprovalRuleEvent> = { initialState, evolve, decide }
export const approvalRuleStreams = streamCategory('approval_rule')

/** What matching reads of a rule, and of a case. */
export type RuleMatch = Pick<ApprovalRuleFields, 'match_priority' | 'match_case_type' | 'match_team'> & { id: string; name: string }
export type MatchedCase = { priority: CasePriority; case_type: CaseType | null; teams: readonly string[] }

/** Whether a rule's filters all hold for the case (a filter left empty holds for every case). */
export const ruleMatches = (rule: RuleMatch, of: MatchedCase): boolean =>
  (!rule.match_priority || rule.match_priority === of.priority) && (!rule.match_case_type || rule.match_case_type === of.case_type) && (!rule.match_team || of.teams.includes(rule.match_team))

const specificity = (rule: RuleMatch): number => [rule.match_priority, rule.match_case_type, rule.match_team].filter(Boolean).length

/** The rule that gates the case: of the active rules (given newest first), the matching one with the most filters set; the newest on a tie. */
export function mostSpecificRule<R extends RuleMatch>(activeNewestFirst: readonly R[], of: MatchedCase): R | undefined {
  let best: R | undefined
  for (const rule of activeNewestFirst) if (ruleMatches(rule, of) && (!best || specificity(rule) > specificity(best))) best = rule
  return best
}
