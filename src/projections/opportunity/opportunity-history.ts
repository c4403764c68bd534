import { evolveOpportunity, initialOpportunityState } from '../../commands/opportunity/opportunity.ts'
import type { DealFields, OpportunityEvent, OpportunityState, Placement } from '../../commands/opportunity/opportunity.ts'
import { evolvePipeline, initialPipelineState } from '../../commands/pipeline/pipeline.ts'
import type { PipelineEvent, PipelineState } from '../../commands/pipeline/pipeline.ts'
import type { Stage, StageKind } from '../../commands/pipeline/stage-rules.ts'
import { daysSince } from './aging.ts'
import type { OpportunityView } from './opportunities.ts'
import { createdChanges, fieldChanges, foldAsOf, historyOf, listChange, noNoteNames, noteEntry } from '../kernel/stream-history.ts'
import type { AsOf, Change, HistoryEntry, NoteNames, Step, StoredEvent, Subject } from '../kernel/stream-history.ts'

/**
 * A deal's and a pipeline's history, read straight from their streams (issue 8): one entry per
 * event, the stage ledger of a deal, and a deal folded up to an instant (stream-history.ts holds
 * what every record's history shares).
 */

const RELATIONS: readonly string[] = ['contacts', 'tags', 'teams', 'assigned_to'] satisfies (keyof DealFields)[]

type DealHistoryState = { deal: OpportunityState; notes: NoteNames }

function dealStep(state: DealHistoryState, event: OpportunityEvent): ReturnType<Step<DealHistoryState, OpportunityEvent>> {
  const deal = evolveOpportunity(state.deal, event)
  const note = noteEntry('Opportunity', state.notes, event)
  if (note) return { ...note, state: { deal, notes: note.state } }
  const next = { deal, notes: state.notes }
  switch (event.type) {
    case 'OpportunityCreated': {
      const { pipeline_id, stage } = event.data
      return { state: next, changes: { ...createdChanges(deal.fields, RELATIONS), pipeline: { from: null, to: pipeline_id }, stage: { from: null, to: stage } }, subject: null }
    }
    case 'OpportunityUpdated':
      return { state: next, changes: fieldChanges(event.data.changes, RELATIONS), subject: null }
    case 'OpportunityStageChanged': {
      const { from, to } = event.data
      const changes: Record<string, Change> = { stage: { from: from.stage, to: to.stage } }
      if (from.pipeline_id !== to.pipeline_id) changes.pipeline = { from: from.pipeline_id, to: to.pipeline_id }
      if (from.stage_kind !== to.stage_kind) changes.stage_kind = { from: from.stage_kind, to: to.stage_kind }
      return { state: next, changes, subject: null }
    }
    case 'OpportunityPositioned':
      return { state: next, changes: { kanban_order: { from: state.deal.kanbanOrder, to: event.data.kanban_order } }, subject: null }
    case 'OpportunityDeleted':
      return { state: next, changes: {}, subject: null }
    case 'OpportunityLineItemAdded':
    case 'OpportunityLineItemChanged':
    case 'OpportunityLineItemRemoved': {
      // The line item whole, before and after (null when it did not exist).
      const id = event.type === 'OpportunityLineItemAdded' ? event.data.line_item.id : event.data.line_item_id
      const before = state.deal.lineItems.find((i) => i.id === id) ?? null
      const after = deal.lineItems.find((i) => i.id === id) ?? null
      return { state: next, changes: { line_item: { from: before, to: after } }, subject: { kind: 'line_item', id, name: (after ?? before)?.name ?? null } }
    }
    default:
      // Comments and attachments, told by noteEntry above.
      return { state: next, changes: {}, subject: null }
  }
}

/** Every event of a deal's stream as a history entry, in stream order; comments and attachments included. */
export const dealHistory = (events: readonly StoredEvent[]): HistoryEntry[] => historyOf<DealHistoryState, OpportunityEvent>(events, { deal: initialOpportunityState(), notes: noNoteNames() }, dealStep)

const STAGE_FIELDS = ['label', 'kind', 'expected_days', 'warning_days', 'probability'] as const

const stageSubject = (stage: Pick<Stage, 'id' | 'code'> | undefined, id: string): Subject => ({ kind: 'stage', id, name: stage?.code ?? null })
const stageFields = (stage: Stage, present: boolean): Record<string, Change> =>
  Object.fromEntries(STAGE_FIELDS.map((key) => [key, present ? { from: null, to: stage[key] } : { from: stage[key], to: null }]))
const flag = (from: boolean, to: boolean): Record<string, Change> => ({ locked: { from, to } })

function pipelineStep(state: PipelineState, event: PipelineEvent): ReturnType<Step<PipelineState, PipelineEvent>> {
  const next = evolvePipeline(state, event)
  const stageById = (id: string) => state.stages.find((s) => s.id === id)
  switch (event.type) {
    case 'PipelineCreated':
      return { state: next, changes: { name: { from: null, to: event.data.name }, is_default: { from: null, to: event.data.is_default }, stages: listChange([], event.data.stages.map((s) => s.id)) }, subject: null }
    case 'PipelineRenamed':
      return { state: next, changes: { name: { from: state.name, to: event.data.name } }, subject: null }
    case 'StageAdded':
      return { state: next, changes: stageFields(event.data.stage, true), subject: stageSubject(event.data.stage, event.data.stage.id) }
    case 'StageUpdated': {
      const before = stageById(event.data.stage_id)
      const changes = Object.fromEntries(STAGE_FIELDS.filter((key) => event.data[key] !== undefined).map((key) => [key, { from: before?.[key] ?? null, to: event.data[key] }]))
      return { state: next, changes, subject: stageSubject(before, event.data.stage_id) }
    }
    case 'StagesReordered':
      return { state: next, changes: { order: { from: state.stages.map((s) => s.id), to: next.stages.map((s) => s.id) } }, subject: null }
    case 'StageRemoved': {
      const before = stageById(event.data.stage_id)
      return { state: next, changes: before ? stageFields(before, false) : {}, subject: stageSubject(before, event.data.stage_id) }
    }
    case 'PipelineDeleted':
      return { state: next, changes: {}, subject: null }
    case 'StageLocked':
    case 'StageUnlocked': {
      const was = state.lockedStageIds.includes(event.data.stage_id)
      return { state: next, changes: flag(was, event.type === 'StageLocked'), subject: stageSubject(stageById(event.data.stage_id), event.data.stage_id) }
    }
    case 'PipelineLocked':
    case 'PipelineUnlocked':
      return { state: next, changes: flag(state.locked, event.type === 'PipelineLocked'), subject: null }
  }
}

/** Every event of a pipeline's stream as a history entry, in stream order; stage events name their stage. */
export const pipelineHistory = (events: readonly StoredEvent[]): HistoryEntry[] => historyOf<PipelineState, PipelineEvent>(events, initialPipelineState(), pipelineStep)

/** One stay of a deal in a stage. `exited_at` is null while it is still there; `days` are whole days up to the exit or now. */
export type StageInterval = {
  stage: string
  stage_id: string
  kind: StageKind
  pipeline_id: string
  entered_at: string
  exited_at: string | null
  days: number
  entered_by: string | null
  exited_by: string | null
}

/**
 * A deal's stage ledger: one row per stay, oldest first. A stay starts at creation or a stage
 * change and ends at the next stage change; deleting the deal ends its last stay (by the deleter).
 */
export function stageIntervals(events: readonly StoredEvent[], now: Date): StageInterval[] {
  const stays: Omit<StageInterval, 'days'>[] = []
  const open = (placement: Placement, at: string, by: string | null) =>
    stays.push({ stage: placement.stage, stage_id: placement.stage_id, kind: placement.stage_kind, pipeline_id: placement.pipeline_id, entered_at: at, exited_at: null, entered_by: by, exited_by: null })
  const close = (at: string, by: string | null) => {
    const last = stays.at(-1)
    if (last && last.exited_at === null) Object.assign(last, { exited_at: at, exited_by: by })
  }
  for (const recorded of events) {
    const event = { type: recorded.type, data: recorded.data } as OpportunityEvent
    const actor = recorded.metadata.actorId ?? null
    if (event.type === 'OpportunityCreated') open(event.data, event.data.at, event.data.created_by ?? actor)
    else if (event.type === 'OpportunityStageChanged') {
      close(event.data.at, event.data.by ?? actor)
      open(event.data.to, event.data.at, event.data.by ?? actor)
    } else if (event.type === 'OpportunityDeleted') close(event.data.at, actor)
  }
  return stays.map((stay) => ({ ...stay, days: daysSince(new Date(stay.entered_at), stay.exited_at ? new Date(stay.exited_at) : now) ?? 0 }))
}

/** A deal as it stood at an instant: its folded state (placed) and the facts its read-model row would have had then. */
export type DealAsOf = AsOf<OpportunityState & { placement: Placement }>

// Comments, attachments and line items keep rows of their own: the deal's revision and updated_at ignore them, as in the read model.
const isNote = (type: string) => type.startsWith('OpportunityComment') || type.startsWith('OpportunityAttachment') || type.startsWith('OpportunityLineItem')

/** The deal folded over its events up to `at` (inclusive); undefined when it did not exist yet or was already deleted then. */
export function dealAsOf(events: readonly StoredEvent[], at: Date): DealAsOf | undefined {
  const asOf = foldAsOf<OpportunityState, OpportunityEvent>(events, at, { initialState: initialOpportunityState, evolve: evolveOpportunity }, isNote)
  const placement = asOf?.state.placement
  return asOf && placement ? { ...asOf, state: { ...asOf.state, placement } } : undefined
}

/** The current label and rotting thresholds of the deal's stage then, when it still exists (from the pipelines read model). */
export type StageFacts = { label: string; expected_days: number | null; warning_days: number | null }

/** A read-model row for a deal as of an instant, so the detail's `opportunity_obj` builder serves it unchanged. */
export function opportunityViewAsOf(id: string, asOf: DealAsOf, stage: StageFacts | undefined): OpportunityView {
  const { state } = asOf
  return {
    ...state.fields,
    ...state.placement,
    id,
    org_id: state.orgId!,
    created_by: state.createdBy,
    kanban_order: state.kanbanOrder ?? 0,
    stage_changed_at: new Date(state.stageChangedAt ?? asOf.createdAt),
    stalls_at: null,
    revision: asOf.revision.toString(),
    is_deleted: false,
    created_at: new Date(asOf.createdAt),
    updated_at: new Date(asOf.updatedAt),
    stage_label: stage?.label ?? null,
    expected_days: stage?.expected_days ?? null,
    warning_days: stage?.warning_days ?? null,
  }
}
