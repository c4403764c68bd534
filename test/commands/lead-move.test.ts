import t from 'tap'
import { emptyLead, leadDecider } from '../../src/commands/lead/lead.ts'
import type { LeadCommand, LeadEvent } from '../../src/commands/lead/lead.ts'
import type { LeadPlacement } from '../../src/commands/lead/move.ts'
import { leadPipelines } from '../../src/commands/pipeline/kinds.ts'
import type { PipelineEvent, PipelineState } from '../../src/commands/pipeline/pipeline.ts'
import { fold } from '../../src/commands/decider.ts'
import type { Actor } from '../../src/commands/caller.ts'
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../../src/errors.ts'
import { spec } from '../helpers/given-when-then.ts'
import { leadEvent } from '../helpers/events.ts'

const org = '00000000-0000-4000-8000-00000000000a'
const otherOrg = '00000000-0000-4000-8000-00000000000b'
const at = '2026-11-22T09:00:00.000Z'
const later = '2026-11-23T09:00:00.000Z'
const creator: Actor = { profileId: 'creator', isAdmin: false, isSuperuser: false }
const stranger: Actor = { profileId: 'stranger', isAdmin: false, isSuperuser: false }
const admin: Actor = { profileId: 'admin', isAdmin: true, isSuperuser: false }

const stageIds = ['s1', 's2', 's3', 's4', 's5']
const pipelineState = (id: string, ...events: PipelineEvent[]): PipelineState =>
  fold(leadPipelines.decider, [...leadPipelines.decider.decide({ type: 'CreatePipeline', pipelineId: id, orgId: org, name: id, isDefault: id === 'p1', stageIds: id === 'p1' ? stageIds : stageIds.map((s) => `${id}${s}`), actorId: null, at }, fold(leadPipelines.decider, [])), ...events])
const p1 = { id: 'p1', state: pipelineState('p1') }

const created = leadEvent('LeadCreated', { lead_id: 'l1', org_id: org, ...emptyLead(), first_name: 'Ann', created_by: 'creator', at })
const move = (columnId: string, kanbanOrder: number | null = null, pipeline = p1, actor = creator, pipelineNamed = false): LeadCommand => ({ type: 'MoveLead', orgId: org, actor, at: later, pipeline, pipelineNamed, columnId, kanbanOrder })
const place = (pipeline: string, stage: string, stage_id: string, stage_kind: LeadPlacement['stage_kind'] = 'open'): LeadPlacement => ({ pipeline_id: pipeline, stage, stage_id, stage_kind })
const moved = (from: LeadPlacement | null, to: LeadPlacement, kanban_order: number, by = 'creator'): LeadEvent => ({ type: 'LeadMoved', data: { from, to, kanban_order, by, at: later } })
const NEW = place('p1', 'NEW', 's1')
const CONTACTED = place('p1', 'CONTACTED', 's2')

t.test('the lead pipeline seed: three open stages, then won and lost', async (t) => {
  t.same(p1.state.stages.map((s) => [s.code, s.kind, s.expected_days, s.probability]), [
    ['NEW', 'open', null, null],
    ['CONTACTED', 'open', null, null],
    ['QUALIFIED', 'open', null, null],
    ['CONVERTED', 'won', null, 100],
    ['DISQUALIFIED', 'lost', null, 0],
  ])
})

t.test('MoveLead: the first move places the lead; later moves change stage or order', async (t) => {
  const s = spec(t, leadDecider)
  const createdOrder = Date.parse(at)
  s.given([created]).when(move('NEW')).then([moved(null, NEW, createdOrder)], 'placed, keeping its creation-time order when no position is given')
  s.given([created]).when(move('CONTACTED', 500)).then([moved(null, CONTACTED, 500)])
  s.given([created, moved(null, NEW, 500)]).when(move('CONTACTED', 1500)).then([moved(NEW, CONTACTED, 1500)])
  s.given([created, moved(null, NEW, 500)]).when(move('NEW', 250)).then([moved(NEW, NEW, 250)], 'within the column: only the order changes')
  s.given([created, moved(null, NEW, 500)]).when(move('NEW')).then([], 'already there: nothing')
  s.given([created, moved(null, NEW, 500)]).when(move('NEW', 500)).then([], 'same order: nothing')
  s.given([created, moved(null, NEW, 500)]).when(move('CONVERTED', 1)).then([moved(NEW, place('p1', 'CONVERTED', 's4', 'won'), 1)], 'a won stage: no conversion, only a move')
})

t.test('MoveLead: refusals', async (t) => {
  const s = spec(t, leadDecider)
  s.given([created]).when(move('PROSPECTING')).thenRejects(ValidationError, { errors: { column_id: [String] } })
  s.given([created]).when(move('NEW', null, p1, stranger)).thenRejects(ForbiddenError)
  s.given([created]).when(move('NEW', null, p1, admin)).then([moved(null, NEW, Date.parse(at), 'admin')], 'an admin may')
  s.given([]).when(move('NEW')).thenRejects(NotFoundError)
  s.given([leadEvent('LeadCreated', { ...created.data, org_id: otherOrg })]).when(move('NEW')).thenRejects(NotFoundError)
  s.given([created, { type: 'LeadDeleted', data: { at } }]).when(move('NEW')).thenRejects(NotFoundError)
  const p2 = { id: 'p2', state: pipelineState('p2') }
  s.given([created, moved(null, NEW, 500)]).when(move('NEW', null, p2)).thenRejects(ConflictError)
  s.given([created, moved(null, NEW, 500)]).when(move('NEW', null, p2, creator, true)).then([moved(NEW, place('p2', 'NEW', 'p2s1'), 500)], 'a pipeline named in the body: the lead changes pipeline')
  const foreign = { id: 'p3', state: { ...pipelineState('p3'), orgId: otherOrg } }
  s.given([created]).when(move('NEW', null, foreign, creator, true)).thenRejects(ValidationError, { errors: { pipeline: [String] } })
})

t.test('MoveLead: a locked stage or pipeline takes no lead in (the counted-write protocol)', async (t) => {
  const s = spec(t, leadDecider)
  const lockedStage = { id: 'p1', state: pipelineState('p1', { type: 'StageLocked', data: { stage_id: 's2', at } }) }
  s.given([created]).when(move('CONTACTED', null, lockedStage)).thenRejects(ValidationError, { errors: { column_id: [String] } })
  s.given([created]).when(move('NEW', null, lockedStage)).then([moved(null, NEW, Date.parse(at))], 'other stages stay open')
  s.given([created, moved(null, CONTACTED, 500)]).when(move('CONTACTED', 100, lockedStage)).then([moved(CONTACTED, CONTACTED, 100)], 'a card already in the locked stage may still be reordered')
  const lockedPipeline = { id: 'p1', state: pipelineState('p1', { type: 'PipelineLocked', data: { at } }) }
  s.given([created]).when(move('NEW', null, lockedPipeline)).thenRejects(ValidationError, { errors: { pipeline: [String] } })
})

t.test('lead pipelines: the pipeline rules name leads', async (t) => {
  const s = spec(t, leadPipelines.decider)
  const createdPipeline = leadPipelines.decider.decide({ type: 'CreatePipeline', pipelineId: 'p1', orgId: org, name: 'Leads', isDefault: false, stageIds, actorId: null, at }, fold(leadPipelines.decider, []))
  const locked: PipelineEvent = { type: 'StageLocked', data: { stage_id: 's1', at } }
  s.given([...createdPipeline, locked]).when({ type: 'RemoveStage', orgId: org, stageId: 's1', dealsInStage: 2, at }).thenRejects(ValidationError, { errors: { stage: ['Expected no leads in the stage; 2 still are in it'] } })
  s.given([...createdPipeline, locked]).when({ type: 'RemoveStage', orgId: org, stageId: 's1', dealsInStage: 0, at }).then([{ type: 'StageRemoved', data: { stage_id: 's1', at } }])
  s.given(createdPipeline).when({ type: 'AddStage', orgId: org, stageId: 's6', label: 'Proposal', kind: 'open', at }).then([{ type: 'StageAdded', data: { stage: { id: 's6', code: 'PROPOSAL', label: 'Proposal', order: 6, kind: 'open', expected_days: null, warning_days: null, probability: null }, at } }], "no deal probability for a lead stage named like a deal's")
})
