import t from 'tap'
import { defaultPipelineId, pipelineDecider } from '../../src/commands/pipeline/pipeline.ts'
import type { PipelineCommand, PipelineEvent } from '../../src/commands/pipeline/pipeline.ts'
import { seededStages, stageCode } from '../../src/commands/pipeline/stage-rules.ts'
import type { Stage } from '../../src/commands/pipeline/stage-rules.ts'
import { NotFoundError, ValidationError } from '../../src/errors.ts'
import { spec } from '../helpers/given-when-then.ts'
import { pipelineEvent } from '../helpers/events.ts'
import type { DataOf } from '../helpers/events.ts'

const org = '00000000-0000-4000-8000-00000000000a'
const otherOrg = '00000000-0000-4000-8000-00000000000b'
const at = '2026-11-22T09:00:00.000Z'
const ids = ['s1', 's2', 's3', 's4', 's5', 's6']
const stages = seededStages(ids)
const created = pipelineEvent('PipelineCreated', { pipeline_id: 'p1', org_id: org, name: 'Sales', is_default: false, stages, created_by: 'a0', at })
const createdDefault = pipelineEvent('PipelineCreated', { ...created.data, is_default: true })
const removed = (stage_id: string): PipelineEvent => ({ type: 'StageRemoved', data: { stage_id, at } })
const locked = (stage_id: string): PipelineEvent => ({ type: 'StageLocked', data: { stage_id, at } })
const pipelineLocked: PipelineEvent = { type: 'PipelineLocked', data: { at } }
const base = { orgId: org, at }
const update = (stageId: string, changes: Partial<Extract<PipelineCommand, { type: 'UpdateStage' }>>): PipelineCommand => ({ type: 'UpdateStage', ...base, stageId, dealsInStage: 0, ...changes })
const added = (stage: Partial<Stage> & Pick<Stage, 'id' | 'code' | 'label' | 'order' | 'kind'>): PipelineEvent => ({ type: 'StageAdded', data: { stage: { expected_days: null, warning_days: null, probability: null, ...stage }, at } })

t.test('seeded stages and codes', async (t) => {
  t.same(
    stages.map((s) => [s.code, s.label, s.order, s.kind, s.expected_days, s.warning_days, s.probability]),
    [
      ['PROSPECTING', 'Prospecting', 1, 'open', 14, null, 10],
      ['QUALIFICATION', 'Qualification', 2, 'open', 14, null, 25],
      ['PROPOSAL', 'Proposal', 3, 'open', 10, null, 50],
      ['NEGOTIATION', 'Negotiation', 4, 'open', 10, null, 75],
      ['CLOSED_WON', 'Closed Won', 5, 'won', null, null, 100],
      ['CLOSED_LOST', 'Closed Lost', 6, 'lost', null, null, 0],
    ],
  )
  t.equal(stageCode('Demo  booked!', []), 'DEMO_BOOKED')
  t.equal(stageCode('--Négociation (2nd)--', []), 'NEGOCIATION_2ND', 'accents dropped, runs collapsed, ends trimmed')
  t.equal(stageCode('Demo', ['DEMO', 'DEMO_2']), 'DEMO_3', 'unique within the pipeline')
  t.equal(stageCode('!!!', []), 'STAGE', 'a label with no letters or digits')
  t.equal(defaultPipelineId(org), defaultPipelineId(org.toUpperCase()), 'the default id depends on the org id only')
  t.not(defaultPipelineId(org), defaultPipelineId(otherOrg))
  t.match(defaultPipelineId(org), /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
})

t.test('create, rename, delete', async (t) => {
  const p = spec(t, pipelineDecider)
  const create: PipelineCommand = { type: 'CreatePipeline', pipelineId: 'p1', orgId: org, name: 'Sales', isDefault: false, stageIds: ids, actorId: 'a0', at }
  p.given([]).when(create).then([created], 'seeded with the six stages')
  p.given([created]).when({ ...create, stageIds: ['x1', 'x2', 'x3', 'x4', 'x5', 'x6'] }).then([], 'creating again (the lazy default race) is a no-op')
  p.given([created]).when({ type: 'RenamePipeline', ...base, name: 'Field' }).then([{ type: 'PipelineRenamed', data: { name: 'Field', at } }])
  p.given([created]).when({ type: 'RenamePipeline', ...base, name: 'Sales' }).then([], 'same name, no event')
  p.given([created]).when({ type: 'RenamePipeline', ...base, orgId: otherOrg, name: 'X' }).thenRejects(NotFoundError)
  p.given([]).when({ type: 'RenamePipeline', ...base, name: 'X' }).thenRejects(NotFoundError)
  p.given([created, pipelineLocked]).when({ type: 'DeletePipeline', ...base, dealCount: 0 }).then([{ type: 'PipelineDeleted', data: { at } }])
  p.given([created]).when({ type: 'DeletePipeline', ...base, dealCount: 0 }).thenRejects(Error, { message: /locked/ })
  p.given([created, { type: 'PipelineDeleted', data: { at } }]).when({ type: 'DeletePipeline', ...base, dealCount: 0 }).then([], 'deleting twice is a no-op')
  p.given([created, { type: 'PipelineDeleted', data: { at } }]).when({ type: 'RenamePipeline', ...base, name: 'X' }).thenRejects(NotFoundError)
  p.given([createdDefault]).when({ type: 'DeletePipeline', ...base, dealCount: 0 }).thenRejects(ValidationError, { errors: { pipeline: [/default/] } })
  p.given([created, pipelineLocked]).when({ type: 'DeletePipeline', ...base, dealCount: 2 }).thenRejects(ValidationError, { errors: { pipeline: [/deals/] } })
  p.given([created]).when({ type: 'DeletePipeline', ...base, orgId: otherOrg, dealCount: 0 }).thenRejects(NotFoundError)
})

t.test('add a stage', async (t) => {
  const p = spec(t, pipelineDecider)
  const add = (c: object): PipelineCommand => ({ type: 'AddStage', ...base, stageId: 's7', label: 'Demo booked', kind: 'open', ...c })
  p.given([created]).when(add({ expected_days: 5 })).then([added({ id: 's7', code: 'DEMO_BOOKED', label: 'Demo booked', order: 7, kind: 'open', expected_days: 5 })], 'appended last, code from the label')
  p.given([created]).when(add({ label: 'Won again', kind: 'won' })).then([added({ id: 's7', code: 'WON_AGAIN', label: 'Won again', order: 7, kind: 'won', probability: 100 })], 'won stages default to 100')
  p.given([created, removed('s1')]).when(add({ label: 'prospecting!' })).then([added({ id: 's7', code: 'PROSPECTING', label: 'prospecting!', order: 6, kind: 'open', probability: 10 })], "a seeded code gets its seeded probability; a removed stage's code is free")
  p.given([created]).when(add({ label: 'Proposal sent' })).then([added({ id: 's7', code: 'PROPOSAL_SENT', label: 'Proposal sent', order: 7, kind: 'open' })])
  p.given([created, added({ id: 's7', code: 'DEMO', label: 'Demo', order: 7, kind: 'open' })]).when(add({ stageId: 's8', label: 'Demo?' })).then([added({ id: 's8', code: 'DEMO_2', label: 'Demo?', order: 8, kind: 'open' })], 'codes stay unique')
  p.given([created]).when(add({ label: 'PROPOSAL' })).thenRejects(ValidationError, { errors: { label: [String] } })
  p.given([created]).when(add({ expected_days: 0 })).thenRejects(ValidationError, { errors: { expected_days: [String] } })
  p.given([created]).when(add({ warning_days: 3651 })).thenRejects(ValidationError, { errors: { warning_days: [String] } })
  p.given([created]).when(add({ expected_days: 3650, warning_days: 1 })).then([added({ id: 's7', code: 'DEMO_BOOKED', label: 'Demo booked', order: 7, kind: 'open', expected_days: 3650, warning_days: 1 })], 'the bounds are allowed')
  p.given([created]).when(add({ kind: 'lost', expected_days: 10 })).thenRejects(ValidationError, { errors: { expected_days: [/lost/] } })
  p.given([created, added({ id: 's7', code: 'DEMO', label: 'Demo', order: 7, kind: 'open' })]).when(add({ label: 'Other' })).then([], 'the same stage id again is a no-op')
  p.given([created]).when(add({ orgId: otherOrg })).thenRejects(NotFoundError)
})

t.test('update a stage', async (t) => {
  const p = spec(t, pipelineDecider)
  const stageUpdated = (data: Omit<DataOf<PipelineEvent, 'StageUpdated'>, 'stage_id' | 'at'>) => pipelineEvent('StageUpdated', { stage_id: 's1', ...data, at })
  p.given([created]).when(update('s1', { label: 'Discovery' })).then([stageUpdated({ label: 'Discovery' })], 'a relabel keeps the code (no code in the event)')
  p.given([created]).when(update('s1', { label: 'qualification' })).thenRejects(ValidationError, { errors: { label: [String] } })
  p.given([created]).when(update('s1', { label: 'PROSPECTING' })).then([stageUpdated({ label: 'PROSPECTING' })], "its own label in another case is no clash")
  p.given([created]).when(update('s1', { label: 'Prospecting', expected_days: 14 })).then([], 'no change, no event')
  p.given([created]).when(update('s1', { expected_days: 20, warning_days: 7 })).then([stageUpdated({ expected_days: 20, warning_days: 7 })])
  p.given([created]).when(update('s1', { expected_days: null })).then([stageUpdated({ expected_days: null })], 'null: never rots')
  p.given([created]).when(update('s1', { expected_days: 0 })).thenRejects(ValidationError, { errors: { expected_days: [String] } })
  p.given([created]).when(update('s1', { warning_days: 4000 })).thenRejects(ValidationError, { errors: { warning_days: [String] } })
  p.given([created]).when(update('s5', { expected_days: 3 })).thenRejects(ValidationError, { errors: { expected_days: [/won/] } })
  p.given([created]).when(update('s1', { kind: 'won' })).thenRejects(Error, { message: /locked/ })
  p.given([created, locked('s1')]).when(update('s1', { kind: 'won' })).then([{ type: 'StageUpdated', data: { stage_id: 's1', kind: 'won', probability: 100, expected_days: null, at } }], 'into won: thresholds cleared, probability 100')
  p.given([created]).when(update('s1', { kind: 'lost', expected_days: 5 })).thenRejects(ValidationError, { errors: { expected_days: [String] } })
  p.given([created]).when(update('s5', { kind: 'open' })).thenRejects(ValidationError, { errors: { kind: [/last/] } })
  p.given([created]).when(update('s6', { kind: 'won' })).thenRejects(ValidationError, { errors: { kind: [/last/] } })
  const secondWon = added({ id: 's7', code: 'WON_2', label: 'Won 2', order: 7, kind: 'won', probability: 100 })
  p.given([created, secondWon, locked('s5')]).when(update('s5', { kind: 'open', expected_days: 30 })).then([{ type: 'StageUpdated', data: { stage_id: 's5', kind: 'open', probability: null, expected_days: 30, at } }], 'not the last won: may become open')
  p.given([created, locked('s1')]).when(update('s1', { kind: 'lost', dealsInStage: 1 })).thenRejects(ValidationError, { errors: { kind: [/deals/] } })
  p.given([created]).when(update('s1', { label: 'X', dealsInStage: 3 })).then([stageUpdated({ label: 'X' })], 'deals only block a kind change')
  p.given([created]).when(update('nope', { label: 'X' })).thenRejects(NotFoundError)
  p.given([created]).when(update('s1', { orgId: otherOrg, label: 'X' })).thenRejects(NotFoundError)
})

t.test('reorder and remove stages', async (t) => {
  const p = spec(t, pipelineDecider)
  const reorder = (stageIds: string[]): PipelineCommand => ({ type: 'ReorderStages', ...base, stageIds })
  p.given([created]).when(reorder(['s2', 's1', 's3', 's4', 's5', 's6'])).then([{ type: 'StagesReordered', data: { stage_ids: ['s2', 's1', 's3', 's4', 's5', 's6'], at } }])
  p.given([created]).when(reorder([...ids])).then([], 'same order, no event')
  for (const [bad, why] of [[['s1', 's2', 's3', 's4', 's5'], 'one missing'], [[...ids, 's1'], 'a duplicate'], [['s1', 's2', 's3', 's4', 's5', 's1'], 'a duplicate instead of one'], [['s1', 's2', 's3', 's4', 's5', 'x'], 'a stranger']] as const) {
    p.given([created]).when(reorder([...bad])).thenRejects(ValidationError, { errors: { stage_ids: [String] } })
    t.pass(`reorder refused: ${why}`)
  }
  const remove = (stageId: string, dealsInStage = 0): PipelineCommand => ({ type: 'RemoveStage', ...base, stageId, dealsInStage })
  p.given([created, locked('s2')]).when(remove('s2')).then([removed('s2')])
  p.given([created]).when(remove('s2')).thenRejects(Error, { message: /locked/ })
  p.given([created, removed('s2')]).when(remove('s2')).then([], 'removing twice is a no-op')
  p.given([created]).when(remove('s5')).thenRejects(ValidationError, { errors: { stage: [/won/] } })
  p.given([created]).when(remove('s6')).thenRejects(ValidationError, { errors: { stage: [/lost/] } })
  p.given([created, removed('s1'), removed('s2'), removed('s3')]).when(remove('s4')).thenRejects(ValidationError, { errors: { stage: [/open/] } })
  p.given([created, locked('s2')]).when(remove('s2', 1)).thenRejects(ValidationError, { errors: { stage: [/deals/] } })
  p.given([created]).when(remove('nope')).thenRejects(NotFoundError)
  p.given([created, removed('s2')]).when(reorder(['s1', 's3', 's4', 's5', 's6'])).then([], 'the removed stage is not expected in a reorder')
})

t.test('locks: a stage or the pipeline closed to deals while its deals are counted', async (t) => {
  const p = spec(t, pipelineDecider)
  const lock = (stageId: string | null): PipelineCommand => ({ type: 'LockStage', ...base, stageId })
  const unlock = (stageId: string | null): PipelineCommand => ({ type: 'UnlockStage', ...base, stageId })
  p.given([created]).when(lock('s2')).then([locked('s2')])
  p.given([created, locked('s2')]).when(lock('s2')).then([], 'locking twice is a no-op (a crashed removal is resumed)')
  p.given([created, locked('s2')]).when(unlock('s2')).then([{ type: 'StageUnlocked', data: { stage_id: 's2', at } }])
  p.given([created]).when(unlock('s2')).then([])
  p.given([created]).when(lock(null)).then([pipelineLocked])
  p.given([created, pipelineLocked]).when(unlock(null)).then([{ type: 'PipelineUnlocked', data: { at } }])
  p.given([created]).when(lock('nope')).thenRejects(NotFoundError)
  p.given([created]).when({ ...lock('s1'), orgId: otherOrg } as PipelineCommand).thenRejects(NotFoundError)
  const fold = (events: PipelineEvent[]) => events.reduce(pipelineDecider.evolve, pipelineDecider.initialState())
  t.same(fold([created, locked('s2'), removed('s2')]).lockedStageIds, [], 'a removal ends the lock')
  t.same(fold([created, locked('s1'), { type: 'StageUpdated', data: { stage_id: 's1', kind: 'won', at } }]).lockedStageIds, [], 'so does a kind change')
  t.same(fold([created, locked('s1'), { type: 'StageUpdated', data: { stage_id: 's1', label: 'X', at } }]).lockedStageIds, ['s1'], 'a relabel does not')
})

t.test('aging thresholds by stage code', async (t) => {
  const p = spec(t, pipelineDecider)
  const set = (thresholds: Record<string, object>): PipelineCommand => ({ type: 'SetStageThresholds', ...base, thresholds })
  p.given([createdDefault]).when(set({ PROSPECTING: { expected_days: 7, warning_days: 5 }, PROPOSAL: { expected_days: 10 }, CLOSED_WON: { expected_days: null } })).then(
    [{ type: 'StageUpdated', data: { stage_id: 's1', expected_days: 7, warning_days: 5, at } }],
    'one StageUpdated per changed stage; unchanged values and null on won/lost decide nothing',
  )
  p.given([createdDefault]).when(set({ NOPE: { expected_days: 3 } })).thenRejects(ValidationError, { errors: { NOPE: [String] } })
  p.given([createdDefault]).when(set({ QUALIFICATION: { warning_days: 0 } })).thenRejects(ValidationError, { errors: { 'QUALIFICATION.warning_days': [String] } })
  p.given([createdDefault]).when(set({ CLOSED_LOST: { expected_days: 3 } })).thenRejects(ValidationError, { errors: { 'CLOSED_LOST.expected_days': [String] } })
})

t.test('fold: the state follows the events', async (t) => {
  const history: PipelineEvent[] = [created, removed('s2'), { type: 'StagesReordered', data: { stage_ids: ['s6', 's1', 's3', 's4', 's5'], at } }, added({ id: 's7', code: 'X', label: 'X', order: 6, kind: 'open' })]
  const state = history.reduce(pipelineDecider.evolve, pipelineDecider.initialState())
  t.same(state.stages.map((s) => [s.id, s.order]), [['s6', 1], ['s1', 2], ['s3', 3], ['s4', 4], ['s5', 5], ['s7', 6]])
})
