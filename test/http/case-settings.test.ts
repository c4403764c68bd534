import t from 'tap'
import { caseApprovalsProjector } from '../../src/projections/case-approval/approvals.ts'
import { caseRoutingProjector } from '../../src/projections/case-routing/routing-rules.ts'
import { escalationPoliciesProjector } from '../../src/projections/case-escalation/escalation-policies.ts'
import { buildTestApp } from '../helpers/app.ts'
import { givenOrganization } from '../helpers/identity.ts'
import { jsonClient } from '../helpers/fixtures.ts'
import { rebuildEqualsLive } from '../helpers/read-models.ts'

type Json = Record<string, any>

t.test('case approvals, routing rules and escalation policies (issue 32)', async (t) => {
  const { app, database, store } = await buildTestApp(t)
  const acme = await givenOrganization(app, database.db, 'Acme')
  const globex = await givenOrganization(app, database.db, 'Globex')
  const ann = await acme.addMember('ann@acme.test')
  const bob = await acme.addMember('bob@acme.test')
  const admin = acme.admin.headers
  const { call, ok } = jsonClient(app, admin)

  t.test('routing: round-robin among active people by id, by team, test/ writes nothing', async (t) => {
    const team = (await ok('POST', '/api/teams/', admin, { name: 'Billing', users: [] })).id
    const people = [ann.profileId, bob.profileId].sort()
    t.equal((await call('POST', '/api/cases/routing-rules/', ann.headers, { name: 'x', strategy: 'direct', target_assignee_ids: [ann.profileId] })).statusCode, 403)
    t.equal((await call('POST', '/api/cases/routing-rules/', admin, { name: 'x', strategy: 'by_team' })).statusCode, 400, 'by_team needs a team')
    t.equal((await call('POST', '/api/cases/routing-rules/', admin, { name: 'x', strategy: 'direct', target_assignee_ids: [globex.admin.profileId] })).statusCode, 400, "another organization's profile")
    t.equal((await call('POST', '/api/cases/routing-rules/', admin, { name: 'x', conditions: [{ field: 'priority', op: 'regex', value: '(' }], target_assignee_ids: [ann.profileId] })).statusCode, 400, 'a pattern that does not compile')
    const billing = await ok('POST', '/api/cases/routing-rules/', admin, { name: 'Billing', priority_order: 1, conditions: [{ field: 'case_type', op: 'eq', value: 'Question' }], strategy: 'by_team', target_team_id: team })
    const rr = await ok('POST', '/api/cases/routing-rules/', admin, { name: 'Urgent rotation', priority_order: 2, conditions: [{ field: 'priority', op: 'in', value: ['Urgent', 'High'] }], strategy: 'round_robin', target_assignee_ids: people })
    t.match(rr, { strategy: 'round_robin', stop_processing: true, state: null, target_assignees: [{ id: people[0] }, { id: people[1] }] })

    const preview = async (caseId: string) => ok('POST', `/api/cases/routing-rules/${rr.id}/test/`, admin, { case_id: caseId })
    const created = async (body: object) => ok('GET', `/api/cases/${(await ok('POST', '/api/cases/', admin, { name: 'Down', ...body })).id}/`)
    const first = await created({ priority: 'Urgent' })
    t.same(first.cases_obj.assigned_to.map((p: Json) => p.id), [people[0]], 'the first in the rotation')
    t.match(await preview(first.cases_obj.id), { matched: true, rule_id: rr.id, strategy: 'round_robin', would_assign_profile_ids: [people[1]] }, 'test/ names who is next')
    t.match(await preview(first.cases_obj.id), { would_assign_profile_ids: [people[1]] }, 'and moves no cursor')
    t.same((await created({ priority: 'High' })).cases_obj.assigned_to.map((p: Json) => p.id), [people[1]])
    t.same((await created({ priority: 'Urgent' })).cases_obj.assigned_to.map((p: Json) => p.id), [people[0]], 'round and round')
    const question = await created({ case_type: 'Question', priority: 'Urgent' })
    t.same([question.cases_obj.assigned_to, question.cases_obj.teams.map((x: Json) => x.id)], [[], [team]], 'the first rule matching stops the walk: its team')
    t.same((await created({ priority: 'Low' })).cases_obj.assigned_to, [], 'no rule matches')
    t.same((await created({ priority: 'Urgent', assigned_to: [bob.profileId] })).cases_obj.assigned_to.map((p: Json) => p.id), [bob.profileId], 'an assigned case is not routed')

    const list = await ok('GET', '/api/cases/routing-rules/', ann.headers)
    t.same(list.rules.map((r: Json) => [r.name, r.matched_last_30d]), [['Billing', 1], ['Urgent rotation', 3]])
    t.same(list.rules[1].state, { last_assigned_index: 1 })
    t.same(list.totals, { count: 2, active: 2, unrouted_last_30d: 2 })
    t.match(await ok('PUT', `/api/cases/routing-rules/${rr.id}/`, admin, { is_active: false }), { is_active: false, name: 'Urgent rotation' }, 'a partial PUT')
    t.equal((await call('GET', `/api/cases/routing-rules/${rr.id}/`, globex.admin.headers)).statusCode, 404)
    t.equal((await call('POST', `/api/cases/routing-rules/${rr.id}/test/`, admin, { case_id: globex.admin.profileId })).statusCode, 404, 'no such case')
    t.match(await ok('DELETE', `/api/cases/routing-rules/${billing.id}/`), { error: false })
    t.equal((await call('GET', `/api/cases/routing-rules/${billing.id}/`)).statusCode, 404)
  })

  t.test('approvals gate closing; decided by the pool, judged on the case as it is', async (t) => {
    const generic = await ok('POST', '/api/cases/approval-rules/', admin, { name: 'Any urgent', match_priority: 'Urgent', approver_ids: [bob.profileId], approver_role: 'MANAGER', trigger_event: 'pre_close' })
    const specific = await ok('POST', '/api/cases/approval-rules/', admin, { name: 'Urgent incidents', match_priority: 'Urgent', match_case_type: 'Incident', approver_ids: [bob.profileId] })
    t.match(specific, { match_team: null, approvers: [{ id: bob.profileId, email: 'bob@acme.test' }], approver_role: 'ADMIN', is_active: true })
    t.equal((await call('POST', '/api/cases/approval-rules/', ann.headers, { name: 'Mine' })).statusCode, 403)
    const incident = (await ok('POST', '/api/cases/', ann.headers, { name: 'Outage', priority: 'Urgent', case_type: 'Incident', assigned_to: [ann.profileId] })).id
    const close = { status: 'Closed', closed_on: '2026-11-22' }
    const refused = await call('PATCH', `/api/cases/${incident}/`, ann.headers, close)
    t.equal(refused.statusCode, 400)
    t.match(refused.json().errors, { status: [/rule: Urgent incidents/] }, 'the most specific rule gates')
    t.equal((await call('PATCH', `/api/cases/${incident}/move/`, ann.headers, { status: 'Closed' })).statusCode, 400, 'a board move closes through the same gate')

    const asked = await ok('POST', `/api/cases/${incident}/request-approval/`, ann.headers, { note: 'Fixed upstream' })
    t.match(asked, { state: 'pending', rule_summary: { id: specific.id }, requested_by: { id: ann.profileId }, is_own_request: true, can_act: false, case_summary: { id: incident, priority: 'Urgent' } })
    t.equal((await call('POST', `/api/cases/${incident}/request-approval/`, ann.headers, {})).statusCode, 409, 'one pending request per rule')
    t.equal((await call('POST', `/api/cases/${incident}/request-approval/`, bob.headers, {})).statusCode, 403, 'bob may not change the case')
    t.equal((await call('POST', `/api/cases/approvals/${asked.id}/approve/`, ann.headers, {})).statusCode, 403, 'not her own request')
    t.equal((await call('POST', `/api/cases/approvals/${asked.id}/reject/`, bob.headers, {})).statusCode, 400, 'a rejection needs a reason')
    t.same((await ok('GET', '/api/cases/approvals/?mine=true', bob.headers)).approvals.map((a: Json) => [a.id, a.can_act]), [[asked.id, true]], "in bob's queue, though he cannot see the case")
    t.same((await ok('GET', '/api/cases/approvals/', globex.admin.headers)).approvals, [])

    await ok('PATCH', `/api/cases/${incident}/`, ann.headers, { case_type: 'Problem' })
    t.equal((await call('POST', `/api/cases/approvals/${asked.id}/approve/`, bob.headers, {})).statusCode, 409, 'the rule no longer applies to the case as it is now')
    await ok('PATCH', `/api/cases/${incident}/`, ann.headers, { case_type: 'Incident' })
    t.match(await ok('POST', `/api/cases/approvals/${asked.id}/approve/`, bob.headers, { note: 'Go' }), { state: 'approved', approver: { id: bob.profileId }, note: 'Go' })
    t.equal((await call('POST', `/api/cases/approvals/${asked.id}/cancel/`, ann.headers, {})).statusCode, 400, 'already approved')
    await ok('PATCH', `/api/cases/${incident}/`, ann.headers, close)

    const other = (await ok('POST', '/api/cases/', ann.headers, { name: 'Slow', priority: 'Urgent', case_type: 'Question', assigned_to: [ann.profileId] })).id
    const second = await ok('POST', `/api/cases/${other}/request-approval/`, ann.headers, {})
    t.match(second, { rule_summary: { id: generic.id } }, 'the less specific rule gates a question')
    t.match(await ok('POST', `/api/cases/approvals/${second.id}/cancel/`, ann.headers, {}), { state: 'cancelled' })
    const rules = await ok('GET', '/api/cases/approval-rules/', ann.headers)
    t.same(rules.totals, { count: 2, active: 2, pending: 0 })
    t.same((await ok('GET', `/api/cases/approvals/?state=all&case=${other}`, ann.headers)).approvals.map((a: Json) => a.state), ['cancelled'])
    const removed = await call('DELETE', `/api/cases/approval-rules/${generic.id}/`)
    t.same([removed.statusCode, removed.json()], [200, { id: generic.id, is_active: false }], 'a rule with history is turned off')
    await ok('PATCH', `/api/cases/${other}/`, ann.headers, close)
    const unused = await ok('POST', '/api/cases/approval-rules/', admin, { name: 'Unused', match_priority: 'Low' })
    t.equal((await call('DELETE', `/api/cases/approval-rules/${unused.id}/`)).statusCode, 204)
  })

  t.test('escalation policies: one per priority, priority fixed', async (t) => {
    const policy = await ok('POST', '/api/cases/escalation-policies/', admin, { priority: 'Urgent', first_response_action: 'reassign', first_response_target_id: bob.profileId, resolution_target_id: null, notify_team_id: null, is_active: true })
    t.match(policy, { priority: 'Urgent', first_response_target: { id: bob.profileId, user_details: { email: 'bob@acme.test' } }, resolution_action: 'notify', breaches_last_30d: { first_response: 0, resolution: 0 } })
    t.equal((await call('POST', '/api/cases/escalation-policies/', admin, { priority: 'Urgent' })).statusCode, 400, 'a priority has one policy')
    t.equal((await call('POST', '/api/cases/escalation-policies/', ann.headers, { priority: 'Low' })).statusCode, 403)
    t.match(await ok('PUT', `/api/cases/escalation-policies/${policy.id}/`, admin, { priority: 'Low', is_active: false }), { priority: 'Urgent', is_active: false })
    t.same((await ok('GET', '/api/cases/escalation-policies/', ann.headers)).policies.map((p: Json) => p.priority), ['Urgent'])
    t.equal((await call('GET', `/api/cases/escalation-policies/${policy.id}/`, globex.admin.headers)).statusCode, 404)
    await ok('DELETE', `/api/cases/escalation-policies/${policy.id}/`)
    t.match(await ok('POST', '/api/cases/escalation-policies/', admin, { priority: 'Urgent' }), { id: policy.id, first_response_target: null }, 'written again on its stream')
  })

  t.test('rebuild equals live', async (t) => {
    await rebuildEqualsLive(t, { db: database.db, store }, [caseApprovalsProjector, caseRoutingProjector, escalationPoliciesProjector], { oneByOne: true })
  })
})
