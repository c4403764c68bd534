import t from 'tap'
import { emptyDeal, opportunityDecider } from '../../src/commands/opportunity/opportunity.ts'
import type { DealFields, DealInput, OpportunityCommand, OpportunityEvent, Placement } from '../../src/commands/opportunity/opportunity.ts'
import { placeBetween } from '../../src/commands/opportunity/placement.ts'
import type { Actor } from '../../src/commands/caller.ts'
import { evolvePipeline, initialPipelineState } from '../../src/commands/pipeline/pipeline.ts'
import type { PipelineEvent, PipelineState } from '../../src/commands/pipeline/pipeline.ts'
import { seededStages } from '../../src/commands/pipeline/stage-rules.ts'
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../../src/errors.ts'
import { spec } from '../helpers/given-when-then.ts'
import { opportunityEvent, pipelineEvent } from '../helpers/events.ts'
import type { DataOf } from '../helpers/events.ts'

const org = '00000000-0000-4000-8000-00000000000a'
const otherOrg = '00000000-0000-4000-8000-00000000000b'
const at = '2026-11-22T09:00:00.000Z'
const later = '2026-11-23T09:00:00.000Z'
const stages = seededStages(['s1', 's2', 's3', 's4', 's5', 's6'])
const pipelineOf = (id: string, events: PipelineEvent[] = [], orgId = org): PipelineState =>
  [pipelineEvent('PipelineCreated', { pipeline_id: id, org_id: orgId, name: id, is_default: id === 'p1', stages: id === 'p1' ? stages : seededStages(['t1', 't2', 't3', 't4', 't5', 't6']), created_by: null, at }), ...events].reduce(evolvePipeline, initialPipelineState())
const p1 = { id: 'p1', state: pipelineOf('p1') }
const p2 = { id: 'p2', state: pipelineOf('p2') }

const admin: Actor = { profileId: 'admin', isAdmin: true, isSuperuser: false }
const creator: Actor = { profileId: 'creator', isAdmin: false, isSuperuser: false }
const assignee: Actor = { profileId: 'assignee', isAdmin: false, isSuperuser: false }
const stranger: Actor = { profileId: 'stranger', isAdmin: false, isSuperuser: false }
const superuser: Actor = { profileId: 'root', isAdmin: false, isSuperuser: true }

const facts = { orgId: org, at: later, defaultCurrency: 'EUR', pipeline: p1, customFields: [] }
const create = (input: DealInput, actor = creator, pipeline = p1): OpportunityCommand => ({ type: 'CreateOpportunity', opportunityId: 'd1', input, ...facts, at, actor, pipeline })
const patch = (input: DealInput, actor: Actor = creator, pipeline = p1): OpportunityCommand => ({ type: 'UpdateOpportunity', input, replace: false, ...facts, actor, pipeline })
const put = (input: DealInput, actor: Actor = creator, pipeline = p1): OpportunityCommand => ({ type: 'UpdateOpportunity', input, replace: true, ...facts, actor, pipeline })
const move = (columnId: string, actor: Actor = creator, kanbanOrder: number | null = null, pipeline = p1): OpportunityCommand => ({ type: 'MoveOpportunity', columnId, kanbanOrder, today: '2026-11-23', ...facts, actor, pipeline })
const remove = (actor: Actor, orgId = org): OpportunityCommand => ({ type: 'DeleteOpportunity', orgId, actor, at: later })

const place = (code: string, pipelineId = 'p1'): Placement => {
  const stage = (pipelineId === 'p1' ? p1 : p2).state.stages.find((s) => s.code === code)!
  return { pipeline_id: pipelineId, stage: stage.code, stage_id: stage.id, stage_kind: stage.kind }
}
const fieldsOf = (changes: Partial<DealFields>): DealFields => ({ ...emptyDeal(), currency: 'EUR', probability: 10, ...changes })
const createdEvent = (changes: Partial<DealFields> = {}, code = 'PROSPECTING') =>
  opportunityEvent('OpportunityCreated', { opportunity_id: 'd1', org_id: org, ...fieldsOf({ name: 'Acme', assigned_to: ['assignee'], ...changes }), ...place(code), created_by: 'creator', kanban_order: Date.parse(at), at })
const created = createdEvent()
const updated = (changes: DataOf<OpportunityEvent, 'OpportunityUpdated'>['changes']) => opportunityEvent('OpportunityUpdated', { changes, at: later })
const stageChanged = (from: string, to: string, by = 'creator', pipelines: [string, string] = ['p1', 'p1']): OpportunityEvent => ({ type: 'OpportunityStageChanged', data: { from: place(from, pipelines[0]), to: place(to, pipelines[1]), by, at: later } })
const won = { amount: '500.00', closed_on: '2026-11-20' }

t.test('create: defaults (§2.1, §3.1 row 1)', async (t) => {
  const s = spec(t, opportunityDecider)
  s.given([]).when(create({ name: 'Acme', assigned_to: ['assignee'] })).then([created], 'default pipeline, first open stage, currency from the organization, probability from the stage')
  s.given([]).when(create({ name: 'Acme', stage: 'PROPOSAL', probability: 0, currency: 'USD' })).then([createdEvent({ probability: 50, currency: 'USD', assigned_to: [] }, 'PROPOSAL')], 'probability 0 is auto-filled')
  s.given([]).when(create({ name: 'Acme', probability: 33 })).then([createdEvent({ probability: 33, assigned_to: [] })], 'a given probability stays')
  s.given([created]).when(create({ name: 'Acme' })).then([], 'a repeated create decides nothing')
  s.given([]).when(create({ name: 'Acme', pipeline: 'p2', stage: 'PROPOSAL' }, creator, p2)).then([
    opportunityEvent('OpportunityCreated', { ...createdEvent({ probability: 50, assigned_to: [] }).data, ...place('PROPOSAL', 'p2') }),
  ], 'another pipeline of the organization')
})

t.test('create: the rules (§2.1 rules 2, 3; stage codes)', async (t) => {
  const s = spec(t, opportunityDecider)
  s.given([]).when(create({ name: 'Acme', stage: 'CLOSED_WON' })).thenRejects(ValidationError, { errors: { closed_on: [String], amount: [String] } })
  s.given([]).when(create({ name: 'Acme', stage: 'CLOSED_WON', closed_on: '2026-11-20', amount: '0.00' })).thenRejects(ValidationError, { errors: { amount: [String] } })
  s.given([]).when(create({ name: 'Acme', stage: 'CLOSED_LOST' })).thenRejects(ValidationError, { errors: { closed_on: [String] } })
  s.given([]).when(create({ name: 'Acme', stage: 'closed_won', ...won })).thenRejects(ValidationError, { errors: { stage: [/PROSPECTING/] } })
  s.given([]).when(create({ name: 'Acme', pipeline: 'p2' })).thenRejects(ConflictError)
  s.given([]).when(create({ name: 'Acme' }, creator, { id: 'p1', state: pipelineOf('p1', [], otherOrg) })).thenRejects(ValidationError, { errors: { pipeline: [String] } })
  s.given([]).when(create({ name: 'Acme', stage: 'CLOSED_WON', ...won })).then([createdEvent({ ...won, probability: 100, closed_by: 'creator', assigned_to: [] }, 'CLOSED_WON')], 'won with amount and closed_on; the creator closed it')
  s.given([]).when(create({ name: 'Acme', stage: 'CLOSED_LOST', closed_on: '2026-11-20' })).then([createdEvent({ closed_on: '2026-11-20', probability: 0, closed_by: 'creator', assigned_to: [] }, 'CLOSED_LOST')])
})

t.test('no deal enters a locked stage or pipeline (removal in progress)', async (t) => {
  const s = spec(t, opportunityDecider)
  const locked = { id: 'p1', state: pipelineOf('p1', [{ type: 'StageLocked', data: { stage_id: 's3', at } }]) }
  s.given([]).when(create({ name: 'Acme', stage: 'PROPOSAL' }, creator, locked)).thenRejects(ValidationError, { errors: { stage: [/being removed/] } })
  s.given([created]).when(patch({ stage: 'PROPOSAL' }, creator, locked)).thenRejects(ValidationError, { errors: { stage: [String] } })
  s.given([created]).when(move('PROPOSAL', creator, null, locked)).thenRejects(ValidationError, { errors: { column_id: [String] } })
  s.given([createdEvent({}, 'PROPOSAL')]).when(patch({ name: 'Renamed' }, creator, locked)).then([updated({ name: { from: 'Acme', to: 'Renamed' } })], 'a deal already in the stage may still be edited')
  const pipelineLocked = { id: 'p1', state: pipelineOf('p1', [{ type: 'PipelineLocked', data: { at } }]) }
  s.given([]).when(create({ name: 'Acme' }, creator, pipelineLocked)).thenRejects(ValidationError, { errors: { pipeline: [String] } })
})

t.test('PUT and PATCH (§3.1 row 2, §4.4.3)', async (t) => {
  const s = spec(t, opportunityDecider)
  s.given([created]).when(patch({ name: 'Acme 2', amount: '10.00' })).then([updated({ name: { from: 'Acme', to: 'Acme 2' }, amount: { from: null, to: '10.00' } })], 'only the changed fields, before and after')
  s.given([created]).when(patch({ name: 'Acme', tags: [] })).then([], 'no change, no event')
  s.given([created]).when(patch({ stage: 'NEGOTIATION' })).then([stageChanged('PROSPECTING', 'NEGOTIATION')], 'a stage change is its own event; probability 10 stays (only 0 or unset is filled)')
  s.given([created]).when(patch({ stage: 'CLOSED_WON', ...won })).then([updated({ amount: { from: null, to: '500.00' }, closed_on: { from: null, to: '2026-11-20' }, closed_by: { from: null, to: 'creator' } }), stageChanged('PROSPECTING', 'CLOSED_WON')], 'into won: closed_by is the caller; probability 10 is kept')
  s.given([created]).when(patch({ stage: 'CLOSED_WON', ...won, probability: 0 })).then([
    updated({ amount: { from: null, to: '500.00' }, probability: { from: 10, to: 100 }, closed_on: { from: null, to: '2026-11-20' }, closed_by: { from: null, to: 'creator' } }),
    stageChanged('PROSPECTING', 'CLOSED_WON'),
  ], 'probability 0 is auto-filled to 100 in won')
  s.given([created]).when(patch({ stage: 'CLOSED_WON', closed_on: '2026-11-20' })).thenRejects(ValidationError, { errors: { amount: [String] } })
  s.given([created]).when(patch({ stage: 'CLOSED_LOST' })).thenRejects(ValidationError, { errors: { closed_on: [String] } })
  const wonDeal = [created, updated({ amount: { from: null, to: '500.00' }, closed_on: { from: null, to: '2026-11-20' }, closed_by: { from: null, to: 'creator' } }), stageChanged('PROSPECTING', 'CLOSED_WON')]
  s.given(wonDeal).when(patch({ amount: null })).thenRejects(ValidationError, { errors: { amount: [String] } })
  s.given(wonDeal).when(patch({ closed_on: null })).thenRejects(ValidationError, { errors: { closed_on: [String] } })
  s.given(wonDeal).when(patch({ stage: 'CLOSED_WON' }, assignee)).then([updated({ closed_by: { from: 'creator', to: 'assignee' } })], 'naming a won stage stamps the caller (§4.4.3)')
  s.given(wonDeal).when(patch({ description: 'x' }, assignee)).then([updated({ description: { from: null, to: 'x' } })], 'not naming it keeps closed_by')
  s.given(wonDeal).when(patch({ stage: 'PROPOSAL' })).then([updated({ closed_by: { from: 'creator', to: null } }), stageChanged('CLOSED_WON', 'PROPOSAL')], 'back to open clears closed_by')
  s.given([created]).when(put({ name: 'Acme' })).then([updated({ assigned_to: { from: ['assignee'], to: [] } })], 'PUT clears the relation lists it does not mention, keeps stage and pipeline')
  s.given([created]).when(put({ name: 'Acme', currency: null, assigned_to: ['assignee'] })).then([], 'PUT: currency left out is the default currency again')
})

t.test('pipeline changes need a stage of that pipeline', async (t) => {
  const s = spec(t, opportunityDecider)
  s.given([created]).when(patch({ pipeline: 'p2' }, creator, p2)).thenRejects(ValidationError, { errors: { stage: [/pipeline changes/] } })
  s.given([created]).when(patch({ pipeline: 'p2', stage: 'NOPE' }, creator, p2)).thenRejects(ValidationError, { errors: { stage: [String] } })
  s.given([created]).when(patch({ pipeline: 'p2', stage: 'PROPOSAL' }, creator, p2)).then([stageChanged('PROSPECTING', 'PROPOSAL', 'creator', ['p1', 'p2'])])
  s.given([created]).when(patch({ pipeline: 'p2', stage: 'PROPOSAL' }, creator, p1)).thenRejects(ConflictError, undefined)
})

t.test('access (§4.4, §7)', async (t) => {
  const s = spec(t, opportunityDecider)
  for (const actor of [admin, creator, assignee]) s.given([created]).when(patch({ description: 'ok' }, actor)).then([updated({ description: { from: null, to: 'ok' } })], `${actor.profileId} may edit`)
  s.given([created]).when(patch({ description: 'no' }, stranger)).thenRejects(ForbiddenError)
  s.given([created]).when(move('PROPOSAL', stranger)).thenRejects(ForbiddenError)
  s.given([created]).when(patch({ description: 'no' }, admin, { id: 'p1', state: pipelineOf('p1') })).then([updated({ description: { from: null, to: 'no' } })])
  s.given([created]).when({ ...patch({ description: 'x' }, admin), orgId: otherOrg } as OpportunityCommand).thenRejects(NotFoundError)
  s.given([]).when(patch({ description: 'x' })).thenRejects(NotFoundError)
  for (const actor of [admin, creator, superuser]) s.given([created]).when(remove(actor)).then([{ type: 'OpportunityDeleted', data: { at: later } }], `${actor.profileId} may delete`)
  s.given([created]).when(remove(assignee)).thenRejects(ForbiddenError, { statusCode: 403 })
  s.given([created]).when(remove(stranger)).thenRejects(ForbiddenError)
  s.given([created]).when(remove(admin, otherOrg)).thenRejects(NotFoundError)
  s.given([created, { type: 'OpportunityDeleted', data: { at: later } }]).when(remove(admin)).then([], 'a repeated delete decides nothing')
  s.given([created, { type: 'OpportunityDeleted', data: { at: later } }]).when(patch({ description: 'x' }, admin)).thenRejects(NotFoundError)
})

t.test('board moves (§3.1 rows 3 and 4, §4.7)', async (t) => {
  const s = spec(t, opportunityDecider)
  s.given([created]).when(move('PROPOSAL', assignee, 5)).then([stageChanged('PROSPECTING', 'PROPOSAL', 'assignee'), { type: 'OpportunityPositioned', data: { kanban_order: 5, at: later } }])
  s.given([created]).when(move('CLOSED_LOST')).then([updated({ closed_on: { from: null, to: '2026-11-23' }, closed_by: { from: null, to: 'creator' } }), stageChanged('PROSPECTING', 'CLOSED_LOST')], 'into lost: closed_on becomes today, closed_by the caller')
  s.given([created]).when(move('CLOSED_WON')).thenRejects(ValidationError, { errors: { amount: [String] } })
  s.given([createdEvent({ amount: '9.99' })]).when(move('CLOSED_WON')).then([updated({ closed_on: { from: null, to: '2026-11-23' }, closed_by: { from: null, to: 'creator' } }), stageChanged('PROSPECTING', 'CLOSED_WON')])
  s.given([createdEvent({ amount: '9.99', closed_on: '2026-01-01' })]).when(move('CLOSED_WON')).then([updated({ closed_by: { from: null, to: 'creator' } }), stageChanged('PROSPECTING', 'CLOSED_WON')], 'an existing closed_on stays')
  s.given([createdEvent({ ...won, closed_by: 'creator', probability: 100 }, 'CLOSED_WON')]).when(move('NEGOTIATION', admin)).then([updated({ closed_by: { from: 'creator', to: null } }), stageChanged('CLOSED_WON', 'NEGOTIATION', 'admin')], 'back to open clears closed_by')
  s.given([created]).when(move('NOPE')).thenRejects(ValidationError, { errors: { column_id: [String] } })
  s.given([created]).when(move('PROPOSAL', creator, null, p2)).thenRejects(ConflictError)
  s.given([created]).when(move('PROSPECTING', creator, 7)).then([{ type: 'OpportunityPositioned', data: { kanban_order: 7, at: later } }], 'within the column: only the position')
  s.given([created]).when(move('PROSPECTING', creator, null)).then([], 'no change, no event')
})

t.test('card placement', async (t) => {
  t.equal(placeBetween(1000, 2000), 1500)
  t.equal(placeBetween(1000, null), 2000)
  t.equal(placeBetween(null, 1000), 0)
  t.equal(placeBetween(null, null), 1000)
})

t.test('tag merges retag a deal as an ordinary update', async (t) => {
  const s = spec(t, opportunityDecider)
  const retag: OpportunityCommand = { type: 'RetagOpportunity', orgId: org, from: 'tA', into: 'tB', at: later }
  s.given([createdEvent({ tags: ['tA', 'tC'] })]).when(retag).then([updated({ tags: { from: ['tA', 'tC'], to: ['tB', 'tC'] } })])
  s.given([createdEvent({ tags: ['tA', 'tB'] })]).when(retag).then([updated({ tags: { from: ['tA', 'tB'], to: ['tB'] } })], 'held once')
  s.given([createdEvent({ tags: ['tC'] })]).when(retag).then([], 'not tagged: no event')
  s.given([createdEvent({ tags: ['tA'] }), { type: 'OpportunityDeleted', data: { at } }]).when(retag).then([], 'a deleted deal is left alone')
})

t.test('1,000 random moves keep one consistent total order of a column', async (t) => {
  // A model of the board's placement: each move puts a card right below (above_id) or above (below_id) another, as the move route does.
  let seed = 42
  const random = (n: number) => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31
    return seed % n
  }
  const orders = new Map<string, number>(Array.from({ length: 20 }, (_, i) => [`c${i}`, (i + 1) * 1000]))
  const expected = [...orders.keys()]
  const sorted = () => [...orders.entries()].sort((a, b) => a[1] - b[1]).map(([id]) => id)
  for (let move = 0; move < 1000; move++) {
    const card = expected.splice(random(expected.length), 1)[0]!
    const at = random(expected.length + 1)
    const before = at > 0 ? orders.get(expected[at - 1]!)! : null
    const after = at < expected.length ? orders.get(expected[at]!)! : null
    orders.set(card, placeBetween(before, after))
    expected.splice(at, 0, card)
  }
  t.same(sorted(), expected, 'the board order is the order the moves made')
  t.equal(new Set(orders.values()).size, orders.size, 'no two cards share an order')
})

t.test('comments and attachments: access to add, author or admin to change', async (t) => {
  const s = spec(t, opportunityDecider)
  const note = { orgId: org, at: later }
  const commented: OpportunityEvent = { type: 'OpportunityCommentAdded', data: { comment_id: 'k1', comment: 'hi', by: 'assignee', at: later } }
  s.given([created]).when({ type: 'AddComment', ...note, actor: assignee, commentId: 'k1', comment: 'hi' }).then([commented])
  s.given([created, commented]).when({ type: 'AddComment', ...note, actor: assignee, commentId: 'k1', comment: 'hi' }).then([], 'the same comment id twice: once')
  s.given([created]).when({ type: 'AddComment', ...note, actor: stranger, commentId: 'k1', comment: 'hi' }).thenRejects(ForbiddenError)
  s.given([created, commented]).when({ type: 'EditComment', ...note, actor: assignee, commentId: 'k1', comment: 'bye' }).then([{ type: 'OpportunityCommentEdited', data: { comment_id: 'k1', comment: 'bye', at: later } }])
  s.given([created, commented]).when({ type: 'EditComment', ...note, actor: admin, commentId: 'k1', comment: 'hi' }).then([], 'unchanged text: no event')
  s.given([created, commented]).when({ type: 'EditComment', ...note, actor: creator, commentId: 'k1', comment: 'bye' }).thenRejects(ForbiddenError, undefined)
  s.given([created, commented]).when({ type: 'EditComment', ...note, actor: admin, commentId: 'nope', comment: 'bye' }).thenRejects(NotFoundError)
  s.given([created, commented]).when({ type: 'DeleteComment', ...note, actor: admin, commentId: 'k1' }).then([{ type: 'OpportunityCommentDeleted', data: { comment_id: 'k1', at: later } }])
  const gone: OpportunityEvent = { type: 'OpportunityCommentDeleted', data: { comment_id: 'k1', at: later } }
  s.given([created, commented, gone]).when({ type: 'DeleteComment', ...note, actor: admin, commentId: 'k1' }).then([], 'deleting twice: once')
  s.given([created, commented, gone]).when({ type: 'EditComment', ...note, actor: admin, commentId: 'k1', comment: 'x' }).thenRejects(NotFoundError)
  const file = { attachment_id: 'f1', file_name: 'a.txt', content_type: 'text/plain', size: 1, storage_key: 'org/f1' }
  const attached: OpportunityEvent = { type: 'OpportunityAttachmentAdded', data: { ...file, by: 'creator', at: later } }
  s.given([created]).when({ type: 'AddAttachment', ...note, actor: creator, attachment: file }).then([attached])
  s.given([created]).when({ type: 'AddAttachment', ...note, actor: stranger, attachment: file }).thenRejects(ForbiddenError)
  s.given([created, attached]).when({ type: 'RemoveAttachment', ...note, actor: assignee, attachmentId: 'f1' }).thenRejects(ForbiddenError)
  s.given([created, attached]).when({ type: 'RemoveAttachment', ...note, actor: creator, attachmentId: 'f1' }).then([{ type: 'OpportunityAttachmentRemoved', data: { attachment_id: 'f1', at: later } }])
  s.given([created, attached]).when({ type: 'RemoveAttachment', ...note, actor: admin, attachmentId: 'f1' }).then([{ type: 'OpportunityAttachmentRemoved', data: { attachment_id: 'f1', at: later } }])
  s.given([created, attached]).when({ type: 'AddComment', ...note, orgId: otherOrg, actor: admin, commentId: 'k2', comment: 'x' }).thenRejects(NotFoundError)
})

t.test('custom field values are decided with the deal (definitions arrive in the command)', async (t) => {
  const s = spec(t, opportunityDecider)
  const tier = { key: 'tier', type: 'select' as const, options: ['gold', 'silver'], required: true, is_active: true }
  const withFields = <C extends OpportunityCommand>(command: C): C => ({ ...command, customFields: [tier] })
  const custom = (cfFields: Record<string, unknown>) => ({ cfFields })
  s.given([]).when(withFields(create({ name: 'Acme', custom: custom({}) }))).thenRejects(Error, { statusCode: 400, errors: { custom_fields: { tier: [String] } } })
  s.given([]).when(withFields(create({ name: 'Acme', assigned_to: ['assignee'], custom: custom({ cf_tier: 'gold' }) }))).then([createdEvent({ custom_fields: { tier: 'gold' } })])
  const gold = createdEvent({ custom_fields: { tier: 'gold' } })
  s.given([gold]).when(withFields(patch({ custom: custom({ cf_tier: 'silver' }) }))).then([updated({ custom_fields: { from: { tier: 'gold' }, to: { tier: 'silver' } } })])
  s.given([gold]).when(withFields(patch({ description: 'x', custom: custom({}) }))).then([updated({ description: { from: null, to: 'x' } })], 'a PATCH naming no custom value keeps them')
  s.given([gold]).when(withFields(put({ name: 'Acme', assigned_to: ['assignee'], custom: custom({}) }))).thenRejects(Error, { statusCode: 400 })
})
