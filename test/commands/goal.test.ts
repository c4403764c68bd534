import t from 'tap'
import { canonicalAmount, goalDecider, goalStatus } from '../../src/commands/goal/goal.ts'
import type { GoalEvent, GoalFields } from '../../src/commands/goal/goal.ts'
import { NotFoundError, ValidationError } from '../../src/errors.ts'
import { spec } from '../helpers/given-when-then.ts'

const org = '00000000-0000-4000-8000-00000000000a'
const otherOrg = '00000000-0000-4000-8000-00000000000b'
const at = '2026-11-22T09:00:00.000Z'
const fields: GoalFields = { name: 'Q4 Alice', goal_type: 'REVENUE', owner_type: 'profile', owner_id: 'p1', period_type: 'QUARTERLY', period_start: '2026-10-01', period_end: '2026-12-31', target_amount: '1500.00', currency: 'USD', is_active: true }
const set: GoalEvent = { type: 'GoalSet', data: { goal_id: 'g1', org_id: org, ...fields, created_by: 'admin', at } }
const deleted: GoalEvent = { type: 'GoalDeleted', data: { at } }

t.test('goal decider', async (t) => {
  const goal = spec(t, goalDecider)
  goal.given([]).when({ type: 'SetGoal', goalId: 'g1', orgId: org, fields, actorId: 'admin', at }).then([set])
  goal.given([]).when({ type: 'SetGoal', goalId: 'g1', orgId: org, fields: { ...fields, target_amount: '1500' }, actorId: 'admin', at }).then([set], 'the target is kept as a canonical decimal')
  goal.given([set]).when({ type: 'SetGoal', goalId: 'g1', orgId: org, fields, actorId: 'admin', at }).then([], 'setting again is a no-op')
  goal.given([]).when({ type: 'SetGoal', goalId: 'g1', orgId: org, fields: { ...fields, period_end: '2026-09-30' }, actorId: 'admin', at }).thenRejects(ValidationError, { errors: { period_end: [/after period start/] } })
  goal.given([]).when({ type: 'SetGoal', goalId: 'g1', orgId: org, fields: { ...fields, target_amount: '0.00' }, actorId: 'admin', at }).thenRejects(ValidationError, { errors: { target_value: [/greater than 0/] } })
  goal.given([]).when({ type: 'SetGoal', goalId: 'g1', orgId: org, fields: { ...fields, target_amount: '-5' }, actorId: 'admin', at }).thenRejects(ValidationError, { errors: { target_value: [/greater than 0/] } })
  goal.given([]).when({ type: 'SetGoal', goalId: 'g1', orgId: org, fields: { ...fields, period_end: fields.period_start }, actorId: 'admin', at }).thenRejects(ValidationError, { errors: { period_end: [/after period start/] } })
  const orgWide = { ...fields, owner_type: 'org' as const, owner_id: null, goal_type: 'DEALS_CLOSED' as const, target_amount: '12' }
  goal.given([]).when({ type: 'SetGoal', goalId: 'g1', orgId: org, fields: orgWide, actorId: 'admin', at }).then([{ type: 'GoalSet', data: { ...set.data, ...orgWide, target_amount: '12.00' } }], 'a whole-organization goal counting deals')
  goal.given([]).when({ type: 'SetGoal', goalId: 'g1', orgId: org, fields: { ...fields, owner_id: null }, actorId: 'admin', at }).thenRejects(ValidationError, { errors: { assigned_to: [String] } })

  const team = { ...fields, owner_type: 'team' as const, owner_id: 't1', target_amount: '2000.5' }
  goal.given([set]).when({ type: 'ChangeGoal', orgId: org, fields: team, at }).then([{ type: 'GoalChanged', data: { changes: { owner_type: 'team', owner_id: 't1', target_amount: '2000.50' }, at } }], 'only what differs')
  goal.given([set]).when({ type: 'ChangeGoal', orgId: org, fields: { ...fields, target_amount: '1500.0' }, at }).then([], 'the same goal is no change')
  goal.given([set, { type: 'GoalChanged', data: { changes: { name: 'Renamed' }, at } }]).when({ type: 'ChangeGoal', orgId: org, fields: { ...fields, name: 'Renamed' }, at }).then([], 'folds earlier changes')
  goal.given([set]).when({ type: 'ChangeGoal', orgId: otherOrg, fields, at }).thenRejects(NotFoundError)
  goal.given([]).when({ type: 'ChangeGoal', orgId: org, fields, at }).thenRejects(NotFoundError)
  goal.given([set, deleted]).when({ type: 'ChangeGoal', orgId: org, fields, at }).thenRejects(NotFoundError)
  goal.given([set]).when({ type: 'ChangeGoal', orgId: org, fields: { ...fields, period_start: '2027-01-01' }, at }).thenRejects(ValidationError, { errors: { period_end: [/after period start/] } })

  goal.given([set]).when({ type: 'DeleteGoal', orgId: org, at }).then([deleted])
  goal.given([set, deleted]).when({ type: 'DeleteGoal', orgId: org, at }).then([], 'deleting twice is a no-op')
  goal.given([set]).when({ type: 'DeleteGoal', orgId: otherOrg, at }).thenRejects(NotFoundError)
  goal.given([]).when({ type: 'DeleteGoal', orgId: org, at }).thenRejects(NotFoundError)
})

t.test('status against the calendar', async (t) => {
  const q4 = { start: '2026-10-01', end: '2026-12-31' }
  t.equal(goalStatus(100, q4, '2026-10-02'), 'completed')
  t.equal(goalStatus(0, q4, '2026-09-30'), 'on_track', 'before the period')
  t.equal(goalStatus(50, q4, '2026-11-15'), 'on_track', 'half the period, half the target')
  t.equal(goalStatus(40, q4, '2026-11-15'), 'at_risk', 'at least 80% of the pace')
  t.equal(goalStatus(30, q4, '2026-11-15'), 'behind')
  t.equal(goalStatus(99, q4, '2026-12-31'), 'at_risk', 'the last day expects 100')
})

t.test('canonical amounts', async (t) => {
  t.same(['1', '01.5', '1500.25', '0.1', '1.234', 'abc', '1e3', ''].map(canonicalAmount), ['1.00', '1.50', '1500.25', '0.10', null, null, null, null])
})

t.test('fold, decide, fold again: an applied change decides nothing more', async (t) => {
  const state = [set].reduce(goalDecider.evolve, goalDecider.initialState())
  const next = { ...fields, name: 'Q4', period_end: '2026-11-30', currency: 'EUR' }
  const events = goalDecider.decide({ type: 'ChangeGoal', orgId: org, fields: next, at }, state)
  const after = events.reduce(goalDecider.evolve, state)
  t.same(after.fields, next)
  t.same(goalDecider.decide({ type: 'ChangeGoal', orgId: org, fields: next, at }, after), [])
})
