import t from 'tap'
import { emptyDeal } from '../../src/commands/opportunity/opportunity.ts'
import type { OpportunityEvent, Placement } from '../../src/commands/opportunity/opportunity.ts'
import type { PipelineEvent } from '../../src/commands/pipeline/pipeline.ts'
import { seededStages } from '../../src/commands/pipeline/stage-rules.ts'
import { dealAsOf, dealHistory, opportunityViewAsOf, pipelineHistory, stageIntervals } from '../../src/projections/opportunity/opportunity-history.ts'
import { pageOfHistory } from '../../src/projections/kernel/stream-history.ts'
import type { StoredEvent } from '../../src/projections/kernel/stream-history.ts'

const org = '00000000-0000-4000-8000-00000000000a'
const day = (n: number, hour = 9) => new Date(Date.UTC(2026, 10, 1 + n, hour)).toISOString()
const stages = seededStages(['s1', 's2', 's3', 's4', 's5', 's6'])
const place = (code: string): Placement => {
  const stage = stages.find((s) => s.code === code)!
  return { pipeline_id: 'p1', stage: stage.code, stage_id: stage.id, stage_kind: stage.kind }
}

/** Events as the store records them: revisions from 0, positions growing, the actor in the metadata. */
function stored(events: readonly { type: string; data: unknown; actor?: string | null }[]): StoredEvent[] {
  return events.map(({ type, data, actor = 'alice' }, i) => ({ type, data, metadata: { actorId: actor }, revision: BigInt(i), position: { commit: BigInt(100 + i), prepare: 0n }, createdAt: new Date(day(30)) }))
}

const created: OpportunityEvent = {
  type: 'OpportunityCreated',
  data: { ...emptyDeal(), name: 'Acme', currency: 'EUR', probability: 10, tags: ['t1'], assigned_to: ['bob'], opportunity_id: 'd1', org_id: org, ...place('PROSPECTING'), created_by: 'alice', kanban_order: 1, at: day(0) },
}
const deal: (OpportunityEvent & { actor?: string | null })[] = [
  created,
  { type: 'OpportunityUpdated', data: { changes: { name: { from: 'Acme', to: 'Acme 2' }, tags: { from: ['t1'], to: ['t2', 't3'] } }, at: day(1) } },
  { type: 'OpportunityStageChanged', data: { from: place('PROSPECTING'), to: place('PROPOSAL'), by: 'bob', at: day(3) }, actor: 'bob' },
  { type: 'OpportunityCommentAdded', data: { comment_id: 'c1', comment: 'first', by: 'bob', at: day(4) }, actor: 'bob' },
  { type: 'OpportunityCommentEdited', data: { comment_id: 'c1', comment: 'second', at: day(5) }, actor: 'bob' },
  { type: 'OpportunityAttachmentAdded', data: { attachment_id: 'a1', file_name: 'quote.pdf', content_type: 'application/pdf', size: 3, storage_key: 'k', by: 'alice', at: day(5) } },
  { type: 'OpportunityPositioned', data: { kanban_order: 2, at: day(6) } },
  { type: 'OpportunityAttachmentRemoved', data: { attachment_id: 'a1', at: day(7) } },
  { type: 'OpportunityCommentDeleted', data: { comment_id: 'c1', at: day(7) }, actor: null },
  { type: 'OpportunityStageChanged', data: { from: place('PROPOSAL'), to: place('CLOSED_LOST'), by: 'alice', at: day(10, 21) } },
  { type: 'OpportunityDeleted', data: { at: day(12) } },
]
const events = stored(deal)

t.test('dealHistory: one entry per event, relations as added and removed ids', async (t) => {
  const entries = dealHistory(events)
  t.equal(entries.length, events.length)
  t.match(entries[0], { position: '100-0', revision: 0, type: 'OpportunityCreated', at: day(0), actor_id: 'alice', subject: null })
  t.match(entries[0]!.changes, { name: { from: null, to: 'Acme' }, tags: { added: ['t1'], removed: [] }, assigned_to: { added: ['bob'], removed: [] }, amount: { from: null, to: null }, pipeline: { from: null, to: 'p1' }, stage: { from: null, to: 'PROSPECTING' } }, 'creation lists every field from null')
  t.same(entries[1]!.changes, { name: { from: 'Acme', to: 'Acme 2' }, tags: { added: ['t2', 't3'], removed: ['t1'] } })
  t.same(entries[2]!.changes, { stage: { from: 'PROSPECTING', to: 'PROPOSAL' } }, 'same pipeline and kind: only the stage')
  t.equal(entries[2]!.actor_id, 'bob')
  t.same(entries.slice(3, 9).map((e) => [e.subject, e.changes]), [
    [{ kind: 'comment', id: 'c1', name: null }, { comment: { from: null, to: 'first' } }],
    [{ kind: 'comment', id: 'c1', name: null }, { comment: { from: 'first', to: 'second' } }],
    [{ kind: 'attachment', id: 'a1', name: 'quote.pdf' }, { attachment: { from: null, to: 'quote.pdf' } }],
    [null, { kanban_order: { from: 1, to: 2 } }],
    [{ kind: 'attachment', id: 'a1', name: 'quote.pdf' }, { attachment: { from: 'quote.pdf', to: null } }],
    [{ kind: 'comment', id: 'c1', name: null }, { comment: { from: 'second', to: null } }],
  ], 'comments and attachments are entries; removals name what was removed')
  t.equal(entries[8]!.actor_id, null, 'no actor: system work')
  t.same(entries[9]!.changes, { stage: { from: 'PROPOSAL', to: 'CLOSED_LOST' }, stage_kind: { from: 'open', to: 'lost' } })
  t.match(entries[10], { type: 'OpportunityDeleted', changes: {} })
})

t.test('pageOfHistory: oldest first or newest first, limit and offset over the count', async (t) => {
  const entries = dealHistory(events)
  const asc = pageOfHistory(entries, { order: 'asc', limit: 3, offset: 1 })
  t.match(asc, { count: 11, offset: 1, limit: 3 })
  t.same(asc.results.map((e) => e.revision), [1, 2, 3])
  t.same(pageOfHistory(entries, { order: 'desc', limit: 2, offset: 0 }).results.map((e) => e.revision), [10, 9])
  t.same(pageOfHistory(entries, { order: 'asc', limit: 5, offset: 20 }).results, [])
})

t.test('stageIntervals: one row per stay, whole days, the deletion ends the last stay', async (t) => {
  const now = new Date(day(20))
  t.same(stageIntervals(events, now), [
    { stage: 'PROSPECTING', stage_id: 's1', kind: 'open', pipeline_id: 'p1', entered_at: day(0), exited_at: day(3), entered_by: 'alice', exited_by: 'bob', days: 3 },
    { stage: 'PROPOSAL', stage_id: 's3', kind: 'open', pipeline_id: 'p1', entered_at: day(3), exited_at: day(10, 21), entered_by: 'bob', exited_by: 'alice', days: 7 },
    { stage: 'CLOSED_LOST', stage_id: 's6', kind: 'lost', pipeline_id: 'p1', entered_at: day(10, 21), exited_at: day(12), entered_by: 'alice', exited_by: 'alice', days: 1 },
  ])
  const live = stageIntervals(events.slice(0, 3), now)
  t.match(live.at(-1), { stage: 'PROPOSAL', exited_at: null, exited_by: null, days: 17 }, 'the current stay counts to now')
  t.same(stageIntervals([], now), [])
})

t.test('dealAsOf: the deal folded up to an instant', async (t) => {
  t.equal(dealAsOf(events, new Date(Date.parse(day(0)) - 1)), undefined, 'before its creation: missing')
  t.equal(dealAsOf(events, new Date(day(13))), undefined, 'after its deletion: missing')
  t.equal(dealAsOf([], new Date(day(13))), undefined)
  const atCreation = dealAsOf(events, new Date(day(0)))!
  t.match(atCreation, { createdAt: day(0), updatedAt: day(0), revision: 0n, state: { fields: { name: 'Acme', tags: ['t1'] }, placement: { stage: 'PROSPECTING' } } }, 'the instant itself is included')
  const second = dealAsOf(events, new Date(day(4, 12)))!
  t.match(second, { revision: 2n, updatedAt: day(3), state: { fields: { name: 'Acme 2', tags: ['t2', 't3'] }, placement: { stage: 'PROPOSAL' }, stageChangedAt: day(3) } })
  t.same(second.state.comments.map((c) => c.comment), ['first'])
  const late = dealAsOf(events, new Date(day(11)))!
  t.match(late, { revision: 9n, state: { placement: { stage: 'CLOSED_LOST', stage_kind: 'lost' }, kanbanOrder: 2 } }, 'comments and attachments do not move the revision')
  t.equal(late.revision, 9n)
  const view = opportunityViewAsOf('d1', second, { label: 'Proposal', expected_days: 10, warning_days: null })
  t.match(view, { id: 'd1', org_id: org, name: 'Acme 2', stage: 'PROPOSAL', stage_id: 's3', stage_label: 'Proposal', expected_days: 10, created_by: 'alice', revision: '2', is_deleted: false, kanban_order: 1 })
  t.same([view.created_at, view.updated_at, view.stage_changed_at], [new Date(day(0)), new Date(day(3)), new Date(day(3))])
  t.match(opportunityViewAsOf('d1', second, undefined), { stage_label: null, expected_days: null })
})

t.test('dealAsOf stops at the first later event, even if a later one claims an earlier time', async (t) => {
  const skewed = stored([created, { type: 'OpportunityUpdated', data: { changes: { name: { from: 'Acme', to: 'B' } }, at: day(5) } }, { type: 'OpportunityUpdated', data: { changes: { name: { from: 'B', to: 'C' } }, at: day(2) } }])
  t.equal(dealAsOf(skewed, new Date(day(3)))!.state.fields.name, 'Acme')
})

t.test('pipelineHistory: pipeline and stage events, stages named in the subject', async (t) => {
  const added = { id: 's7', code: 'DEMO', label: 'Demo', order: 7, kind: 'open' as const, expected_days: 5, warning_days: null, probability: null }
  const pipeline: PipelineEvent[] = [
    { type: 'PipelineCreated', data: { pipeline_id: 'p1', org_id: org, name: 'Sales', is_default: false, stages, created_by: 'alice', at: day(0) } },
    { type: 'PipelineRenamed', data: { name: 'Sales EU', at: day(1) } },
    { type: 'StageAdded', data: { stage: added, at: day(2) } },
    { type: 'StageUpdated', data: { stage_id: 's7', label: 'Demo call', expected_days: 7, at: day(3) } },
    { type: 'StagesReordered', data: { stage_ids: ['s7', 's1', 's2', 's3', 's4', 's5', 's6'], at: day(4) } },
    { type: 'StageLocked', data: { stage_id: 's7', at: day(5) } },
    { type: 'StageRemoved', data: { stage_id: 's7', at: day(5) } },
    { type: 'PipelineLocked', data: { at: day(6) } },
    { type: 'PipelineDeleted', data: { at: day(6) } },
  ]
  const entries = pipelineHistory(stored(pipeline))
  t.same(entries.map((e) => e.type), pipeline.map((e) => e.type))
  t.same(entries[0]!.changes, { name: { from: null, to: 'Sales' }, is_default: { from: null, to: false }, stages: { added: ['s1', 's2', 's3', 's4', 's5', 's6'], removed: [] } })
  t.same(entries[1]!.changes, { name: { from: 'Sales', to: 'Sales EU' } })
  t.same(entries[2]!.subject, { kind: 'stage', id: 's7', name: 'DEMO' })
  t.same(entries[2]!.changes, { label: { from: null, to: 'Demo' }, kind: { from: null, to: 'open' }, expected_days: { from: null, to: 5 }, warning_days: { from: null, to: null }, probability: { from: null, to: null } })
  t.same(entries[3]!.changes, { label: { from: 'Demo', to: 'Demo call' }, expected_days: { from: 5, to: 7 } })
  t.same(entries[4]!.changes, { order: { from: ['s1', 's2', 's3', 's4', 's5', 's6', 's7'], to: ['s7', 's1', 's2', 's3', 's4', 's5', 's6'] } })
  t.same(entries[5]!.changes, { locked: { from: false, to: true } })
  t.match(entries[6], { subject: { kind: 'stage', id: 's7', name: 'DEMO' }, changes: { label: { from: 'Demo call', to: null } } })
  t.same(entries[7]!.changes, { locked: { from: false, to: true } })
  t.same(entries[8]!.changes, {})
})
