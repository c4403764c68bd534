import t from 'tap'
import { caseApprovalDecider } from '../../src/commands/case-approval/approval.ts'
import type { CaseApprovalEvent, RuleNow } from '../../src/commands/case-approval/approval.ts'
import { checkApprovalGate } from '../../src/commands/case-approval/gate.ts'
import { approvalRuleDecider, mostSpecificRule } from '../../src/commands/case-approval/rules.ts'
import type { RuleMatch } from '../../src/commands/case-approval/rules.ts'
import { conditionsHold } from '../../src/commands/case-routing/conditions.ts'
import type { RoutedCase } from '../../src/commands/case-routing/conditions.ts'
import { routingRuleDecider } from '../../src/commands/case-routing/routing-rule.ts'
import type { RouteCase, RoutingRuleEvent, RoutingRuleFields } from '../../src/commands/case-routing/routing-rule.ts'
import { escalationPolicyDecider } from '../../src/commands/case-escalation/escalation-policy.ts'
import { fold } from '../../src/commands/decider.ts'
import { DomainError, ForbiddenError, NotFoundError, ValidationError } from '../../src/errors.ts'
import { spec } from '../helpers/given-when-then.ts'

const org = '00000000-0000-4000-8000-00000000000a'
const otherOrg = '00000000-0000-4000-8000-00000000000b'
const at = '2026-11-22T09:00:00.000Z'
const admin = { profileId: 'admin', isAdmin: true }
const ann = { profileId: 'ann', isAdmin: false }
const bob = { profileId: 'bob', isAdmin: false }

t.test('approval rules: the most specific active rule wins, the newest on a tie', async (t) => {
  const rule = (id: string, match: Partial<RuleMatch>): RuleMatch => ({ id, name: id, match_priority: null, match_case_type: null, match_team: null, ...match })
  const urgent = { priority: 'Urgent', case_type: 'Incident', teams: ['t1'] } as const
  const rules = [rule('newest-any', {}), rule('urgent', { match_priority: 'Urgent' }), rule('urgent-team', { match_priority: 'Urgent', match_team: 't1' }), rule('older-urgent-team', { match_priority: 'Urgent', match_team: 't1' })]
  t.equal(mostSpecificRule(rules, urgent)?.id, 'urgent-team', 'two filters beat one and none; of two equal, the newest (first)')
  t.equal(mostSpecificRule(rules, { ...urgent, teams: [] })?.id, 'urgent')
  t.equal(mostSpecificRule(rules, { priority: 'Low', case_type: null, teams: [] })?.id, 'newest-any')
  t.equal(mostSpecificRule([rule('incidents', { match_case_type: 'Incident' })], { priority: 'Low', case_type: 'Question', teams: [] }), undefined)
  t.throws(() => checkApprovalGate({ rules, approvedRuleIds: ['urgent'] }, urgent), ValidationError, 'an approval under a less specific rule does not open the gate')
  t.doesNotThrow(() => checkApprovalGate({ rules, approvedRuleIds: ['urgent-team'] }, urgent))

  const decider = spec(t, approvalRuleDecider)
  const fields = { name: 'Urgent', trigger_event: 'pre_close' as const, match_priority: 'Urgent' as const, match_case_type: null, match_team: null, approver_role: 'ADMIN' as const, approvers: [], is_active: true }
  const created = { type: 'CaseApprovalRuleCreated' as const, data: { rule_id: 'r', org_id: org, ...fields, created_by: 'admin', at } }
  decider.given([]).when({ type: 'CreateApprovalRule', ruleId: 'r', orgId: org, fields, actor: ann, at }).thenRejects(ForbiddenError)
  decider.given([created]).when({ type: 'ChangeApprovalRule', orgId: org, changes: { name: 'Urgent', approvers: [] }, actor: admin, at }).then([], 'no change, no event')
  decider.given([created]).when({ type: 'ChangeApprovalRule', orgId: otherOrg, changes: { name: 'X' }, actor: admin, at }).thenRejects(NotFoundError)
  decider.given([created]).when({ type: 'DeleteApprovalRule', orgId: org, hasRequests: true, actor: admin, at }).then([{ type: 'CaseApprovalRuleUpdated', data: { is_active: false, by: 'admin', at } }], 'a rule with requests is turned off')
  decider.given([created]).when({ type: 'DeleteApprovalRule', orgId: org, hasRequests: false, actor: admin, at }).then([{ type: 'CaseApprovalRuleDeleted', data: { by: 'admin', at } }])
})

t.test('approval lifecycle: requested, then approved, rejected or cancelled once', async (t) => {
  const approvals = spec(t, caseApprovalDecider)
  const rule: RuleNow = { id: 'r', name: 'Urgent', match_priority: 'Urgent', match_case_type: null, match_team: null, approver_role: 'MANAGER', approvers: ['bob'], is_active: true }
  const caseNow = { priority: 'Urgent' as const, case_type: null, teams: [] }
  const requested: CaseApprovalEvent = { type: 'CaseApprovalRequested', data: { approval_id: 'a1', org_id: org, case_id: 'c', rule_id: 'r', rule_name: 'Urgent', requested_by: 'ann', note: 'done', at } }
  const request = { type: 'RequestApproval' as const, approvalId: 'a1', orgId: org, caseId: 'c', rule, note: 'done', actor: ann, at }
  approvals.given([]).when(request).then([requested])
  approvals.given([requested]).when(request).then([], 'the same request again changes nothing')
  approvals.given([requested]).when({ ...request, approvalId: 'a2' }).thenRejects(DomainError, { statusCode: 409 })
  approvals.given([]).when({ ...request, actor: { profileId: null, isAdmin: true } }).thenRejects(ForbiddenError)

  const approve = { type: 'ApproveApproval' as const, approvalId: 'a1', orgId: org, rule, caseNow, actor: bob, at }
  const approved: CaseApprovalEvent = { type: 'CaseApprovalApproved', data: { approval_id: 'a1', by: 'bob', note: 'done', judged_on: { priority: 'Urgent', case_type: null, teams: [] }, at } }
  approvals.given([requested]).when(approve).then([approved], 'by the pool, judged on the case now')
  approvals.given([requested]).when({ ...approve, actor: ann }).thenRejects(ForbiddenError)
  approvals.given([requested]).when({ ...approve, rule: { ...rule, approvers: ['ann'] }, actor: ann }).thenRejects(ForbiddenError, { message: /own request/ })
  approvals.given([requested]).when({ ...approve, actor: admin }).thenRejects(ForbiddenError, { message: /not an approver/ })
  approvals.given([requested]).when({ ...approve, rule: { ...rule, approver_role: 'ADMIN' }, actor: admin }).then([{ ...approved, data: { ...approved.data, by: 'admin' } }], 'the ADMIN role: any admin')
  approvals.given([requested]).when({ ...approve, caseNow: { ...caseNow, priority: 'Low' } }).thenRejects(DomainError, { statusCode: 409 })
  approvals.given([requested]).when({ ...approve, rule: { ...rule, is_active: false } }).thenRejects(DomainError, { statusCode: 409 })
  approvals.given([requested]).when({ ...approve, rule: null }).thenRejects(ForbiddenError)
  approvals.given([requested, approved]).when(approve).thenRejects(ValidationError, { message: /already approved/ })
  approvals.given([requested]).when({ ...approve, orgId: otherOrg }).thenRejects(NotFoundError)
  approvals.given([requested, approved]).when(request).then([], 'a decided request keeps its id')

  const reject = { type: 'RejectApproval' as const, approvalId: 'a1', orgId: org, rule, reason: ' too early ', actor: bob, at }
  approvals.given([requested]).when(reject).then([{ type: 'CaseApprovalRejected', data: { approval_id: 'a1', by: 'bob', reason: 'too early', at } }])
  approvals.given([requested]).when({ ...reject, reason: ' ' }).thenRejects(ValidationError)
  const cancel = { type: 'CancelApproval' as const, approvalId: 'a1', orgId: org, actor: ann, at }
  approvals.given([requested]).when(cancel).then([{ type: 'CaseApprovalCancelled', data: { approval_id: 'a1', by: 'ann', at } }])
  approvals.given([requested]).when({ ...cancel, actor: bob }).thenRejects(ForbiddenError)
  approvals.given([requested]).when({ ...cancel, actor: admin }).then([{ type: 'CaseApprovalCancelled', data: { approval_id: 'a1', by: 'admin', at } }])
  approvals.given([requested, { type: 'CaseApprovalCancelled', data: { approval_id: 'a1', by: 'ann', at } }]).when({ ...request, approvalId: 'a2' }).then([{ ...requested, data: { ...requested.data, approval_id: 'a2' } }], 'a new request once none is pending')
})

t.test('routing: conditions ANDed, strategies, and a round-robin cursor that replays identically', async (t) => {
  const routed: RoutedCase = { priority: 'Urgent', case_type: 'Incident', account: 'acc', tags: ['vip', 'eu'], custom_fields: { tier: 'gold', seats: 12 }, from_email_domain: 'initech.test', mailbox_id: null }
  t.ok(conditionsHold([], routed), 'no conditions: every case')
  t.ok(conditionsHold([{ field: 'priority', op: 'eq', value: 'Urgent' }, { field: 'tags', op: 'eq', value: 'vip' }, { field: 'custom_fields.seats', op: 'in', value: ['12', 13] }], routed))
  t.notOk(conditionsHold([{ field: 'priority', op: 'eq', value: 'Urgent' }, { field: 'case_type', op: 'eq', value: 'Question' }], routed), 'all must hold')
  t.ok(conditionsHold([{ field: 'from_email_domain', op: 'regex', value: '^init' }, { field: 'custom_fields.tier', op: 'contains', value: 'ol' }], routed))
  t.notOk(conditionsHold([{ field: 'priority', op: 'regex', value: '(' }], routed), 'a broken pattern matches nothing')
  t.notOk(conditionsHold([{ field: 'owner', op: 'eq', value: 'x' }], routed), 'an unknown field matches nothing')

  const fields: RoutingRuleFields = { name: 'Rotation', priority_order: 1, is_active: true, conditions: [{ field: 'priority', op: 'eq', value: 'Urgent' }], strategy: 'round_robin', stop_processing: true, target_assignees: ['p3', 'p1', 'p2'], target_team: null }
  const created: RoutingRuleEvent = { type: 'RoutingRuleCreated', data: { rule_id: 'r', org_id: org, ...fields, created_by: 'admin', at } }
  const route = (caseId: string, extra: Partial<RouteCase> = {}): RouteCase => ({ type: 'RouteCase', orgId: org, caseId, case: routed, activePeople: ['p1', 'p2', 'p3'], openCases: {}, at, ...extra })
  // Routes cases one after another, each decided on the fold of what the stream holds.
  const history: RoutingRuleEvent[] = [created]
  const picks: (string | null)[] = []
  for (const caseId of ['c1', 'c2', 'c3', 'c4']) {
    const events = routingRuleDecider.decide(route(caseId), fold(routingRuleDecider, history))
    history.push(...events)
    picks.push(events[0]?.type === 'CaseRouted' ? events[0].data.assigned_to : null)
  }
  t.same(picks, ['p1', 'p2', 'p3', 'p1'], 'each active person in turn, ordered by id')
  t.same(fold(routingRuleDecider, history).cursor, 1, 'the cursor is the fold of the log')
  t.same(fold(routingRuleDecider, [...history]), fold(routingRuleDecider, history), 'replaying the stream gives the same state')
  const next = routingRuleDecider.decide(route('c5', { activePeople: ['p1', 'p3'] }), fold(routingRuleDecider, history))
  t.match(next, [{ data: { assigned_to: 'p3', next_index: 0 } }], 'a deactivated person leaves the pool')

  const rule = spec(t, routingRuleDecider)
  rule.given([created]).when(route('c', { case: { ...routed, priority: 'Low' } })).then([], 'a case it does not match')
  rule.given([created]).when(route('c', { activePeople: [] })).then([{ type: 'CaseRouted', data: { case_id: 'c', strategy: 'round_robin', assigned_to: null, team: null, reason: 'empty_pool', next_index: null, at } }])
  rule.given([created, { type: 'RoutingRuleUpdated', data: { strategy: 'least_busy', by: 'admin', at } }]).when(route('c', { openCases: { p1: 4, p2: 1, p3: 1 } })).then([{ type: 'CaseRouted', data: { case_id: 'c', strategy: 'least_busy', assigned_to: 'p2', team: null, reason: '', next_index: null, at } }], 'fewest open cases, ties by id')
  rule.given([created, { type: 'RoutingRuleUpdated', data: { strategy: 'direct', by: 'admin', at } }]).when(route('c')).then([{ type: 'CaseRouted', data: { case_id: 'c', strategy: 'direct', assigned_to: 'p1', team: null, reason: '', next_index: null, at } }])
  rule.given([created, { type: 'RoutingRuleUpdated', data: { strategy: 'by_team', target_team: 't', by: 'admin', at } }]).when(route('c')).then([{ type: 'CaseRouted', data: { case_id: 'c', strategy: 'by_team', assigned_to: null, team: 't', reason: '', next_index: null, at } }])
  rule.given([created, { type: 'RoutingRuleUpdated', data: { is_active: false, by: 'admin', at } }]).when(route('c')).then([], 'a rule turned off')
  rule.given([created]).when(route('c', { orgId: otherOrg })).then([])
  rule.given([]).when({ type: 'CreateRoutingRule', ruleId: 'r', orgId: org, fields: { ...fields, strategy: 'by_team' }, actor: admin, at }).thenRejects(ValidationError)
  rule.given([]).when({ type: 'CreateRoutingRule', ruleId: 'r', orgId: org, fields: { ...fields, target_assignees: [] }, actor: admin, at }).thenRejects(ValidationError)
  rule.given([]).when({ type: 'CreateRoutingRule', ruleId: 'r', orgId: org, fields, actor: ann, at }).thenRejects(ForbiddenError)
  rule.given([created]).when({ type: 'DeleteRoutingRule', orgId: otherOrg, actor: admin, at }).thenRejects(NotFoundError)
})

t.test('escalation policies: one per priority', async (t) => {
  const policy = spec(t, escalationPolicyDecider)
  const fields = { first_response_action: 'notify' as const, resolution_action: 'reassign' as const, first_response_target: 'bob', resolution_target: null, notify_team: null, is_active: true }
  const create = { type: 'CreateEscalationPolicy' as const, orgId: org, priority: 'Urgent' as const, fields, actor: admin, at }
  const [created] = escalationPolicyDecider.decide(create, escalationPolicyDecider.initialState())
  t.match(created, { type: 'EscalationPolicyCreated', data: { priority: 'Urgent', first_response_target: 'bob' } })
  policy.given([created!]).when(create).thenRejects(ValidationError, { errors: { priority: [/already exists/] } })
  policy.given([created!, { type: 'EscalationPolicyDeleted', data: { by: 'admin', at } }]).when(create).then([created!], 'a deleted priority takes a new policy')
  policy.given([]).when({ ...create, actor: ann }).thenRejects(ForbiddenError)
  policy.given([created!]).when({ type: 'ChangeEscalationPolicy', orgId: org, changes: { is_active: true, resolution_action: 'reassign' }, actor: admin, at }).then([], 'no change, no event')
})
