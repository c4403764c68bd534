import t from 'tap'
import { lineItemsTotal, lineTotal } from '../../src/commands/opportunity/line-items.ts'
import type { LineItem } from '../../src/commands/opportunity/line-items.ts'
import { emptyDeal, opportunityDecider } from '../../src/commands/opportunity/opportunity.ts'
import type { OpportunityCommand, OpportunityEvent } from '../../src/commands/opportunity/opportunity.ts'
import type { Actor } from '../../src/commands/caller.ts'
import { seededStages } from '../../src/commands/pipeline/stage-rules.ts'
import { ForbiddenError, NotFoundError, ValidationError } from '../../src/errors.ts'
import { spec } from '../helpers/given-when-then.ts'

const org = '00000000-0000-4000-8000-00000000000a'
const at = '2026-11-22T09:00:00.000Z'
const creator: Actor = { profileId: 'creator', isAdmin: false, isSuperuser: false }
const stranger: Actor = { profileId: 'stranger', isAdmin: false, isSuperuser: false }
const [prospecting, , , , won] = seededStages(['s1', 's2', 's3', 's4', 's5', 's6'])
const created = (stage = prospecting!, fields: object = {}): OpportunityEvent => ({
  type: 'OpportunityCreated',
  data: { opportunity_id: 'd1', org_id: org, ...emptyDeal(), name: 'Acme', currency: 'USD', probability: 10, ...fields, pipeline_id: 'p1', stage: stage.code, stage_id: stage.id, stage_kind: stage.kind, created_by: 'creator', kanban_order: 1, at },
})
const item = (id: string, changes: Partial<LineItem> = {}): LineItem => ({ id, name: 'Seats', description: null, quantity: '2.00', unit_price: '100.00', discount_type: null, discount_value: null, ...changes })
const add = (id: string, changes: Partial<LineItem> = {}, actor = creator): OpportunityCommand => {
  const { id: _id, ...input } = item(id, changes)
  return { type: 'AddLineItem', orgId: org, actor, lineItemId: id, item: input, at }
}
const added = (id: string, changes: Partial<LineItem> = {}): OpportunityEvent => ({ type: 'OpportunityLineItemAdded', data: { line_item: item(id, changes), at } })
const amount = (from: string | null, to: string): OpportunityEvent => ({ type: 'OpportunityUpdated', data: { changes: { amount: { from, to } }, at } })

t.test('line totals in exact decimals', async (t) => {
  t.equal(lineTotal(item('a')), '200.00')
  t.equal(lineTotal(item('a', { quantity: '3.00', unit_price: '0.10' })), '0.30', 'no floating point error')
  t.equal(lineTotal(item('a', { discount_type: 'percentage', discount_value: '12.50' })), '175.00')
  t.equal(lineTotal(item('a', { quantity: '1.00', unit_price: '9.99', discount_type: 'percentage', discount_value: '33.33' })), '6.66', 'rounded half up at the cent')
  t.equal(lineTotal(item('a', { discount_type: 'fixed', discount_value: '250.00' })), '0.00', 'never below zero')
  t.equal(lineItemsTotal([item('a'), item('b', { quantity: '0.50', unit_price: '10.01' })]), '205.01')
})

t.test('line items own the amount while there are any (where-the-spec-is-silent.md)', async (t) => {
  const s = spec(t, opportunityDecider)
  s.given([created()]).when(add('i1')).then([added('i1'), amount(null, '200.00')])
  s.given([created(), added('i1'), amount(null, '200.00')]).when(add('i2', { unit_price: '50.00' })).then([added('i2', { unit_price: '50.00' }), amount('200.00', '300.00')])
  const withItem = [created(), added('i1'), amount(null, '200.00')]
  s.given(withItem).when({ type: 'ChangeLineItem', orgId: org, actor: creator, lineItemId: 'i1', item: { quantity: '1.00' }, at }).then([
    { type: 'OpportunityLineItemChanged', data: { line_item_id: 'i1', changes: { quantity: '1.00' }, at } },
    amount('200.00', '100.00'),
  ])
  s.given(withItem).when({ type: 'RemoveLineItem', orgId: org, actor: creator, lineItemId: 'i1', at }).then([{ type: 'OpportunityLineItemRemoved', data: { line_item_id: 'i1', at } }], 'the last one gone: the amount stays, MANUAL again')
  const patch = (amountValue: string | null | undefined): OpportunityCommand => ({ type: 'UpdateOpportunity', orgId: org, actor: creator, at, defaultCurrency: 'USD', customFields: [], pipeline: { id: 'p1', state: { exists: true, orgId: org, name: 'P', isDefault: true, stages: seededStages(['s1', 's2', 's3', 's4', 's5', 's6']), removedStageIds: [], deleted: false, lockedStageIds: [], locked: false } }, input: { amount: amountValue }, replace: false })
  s.given(withItem).when(patch('150.00')).thenRejects(ValidationError, { errors: { amount: [/line items/] } })
  s.given(withItem).when(patch(null)).thenRejects(ValidationError, { errors: { amount: [String] } })
  s.given(withItem).when(patch('200.00')).then([], 'echoing the computed amount is accepted')
  s.given([created()]).when(patch('150.00')).then([amount(null, '150.00')], 'without line items the amount is the client\'s')
})

t.test('rules: access, discounts, won deals keep an amount', async (t) => {
  const s = spec(t, opportunityDecider)
  s.given([created()]).when(add('i1', {}, stranger)).thenRejects(ForbiddenError)
  s.given([created()]).when(add('i1', { discount_type: 'percentage', discount_value: '120.00' })).thenRejects(ValidationError, { errors: { discount_value: [String] } })
  s.given([created()]).when(add('i1', { discount_type: 'percentage' })).thenRejects(ValidationError, { errors: { discount_value: [String] } })
  s.given([created()]).when({ type: 'RemoveLineItem', orgId: org, actor: creator, lineItemId: 'nope', at }).thenRejects(NotFoundError)
  const wonDeal = created(won!, { amount: '500.00', closed_on: '2026-11-20', closed_by: 'creator', probability: 100 })
  s.given([wonDeal]).when(add('i1', { discount_type: 'fixed', discount_value: '200.00' })).thenRejects(ValidationError, { errors: { amount: [String] } })
  s.given([wonDeal]).when(add('i1')).then([added('i1'), amount('500.00', '200.00')])
})
