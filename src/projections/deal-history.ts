import { evolveOpportunity, initialOpportunityState } from '../commands/opportunity/opportunity.ts'
import type { DealFields, FieldChanges, OpportunityEvent, OpportunityState, Placement } from '../commands/opportunity/opportunity.ts'
import { evolvePipeline, initialPipelineState } from '../commands/pipeline/pipeline.ts'
import type { PipelineEvent, PipelineState } from '../commands/pipeline/pipeline.ts'
import type { Stage, StageKind } from '../commands/pipeline/stage-rules.ts'
import { formatPosition } from '../eventstore/event-store.ts'
import type { RecordedEvent } from '../eventstore/event-store.ts'
import { daysSince } from './aging.ts'
import type { OpportunityView } from './opportunities.ts'

/**
 * A deal's and a pipeline's history, read straight from their streams (issue 8): one entry per
 * event, the stage ledger of a deal, and a deal folded up to an instant. Pure: the routes read the
 * stream and name the actors. Times are the events' own `at` (the clock the command saw), so a
 * test's movable clock moves them too; an event without one falls back to when it was stored.
 */

/** What these functions read of a recorded event. */
export type StoredEvent = Pick<RecordedEvent, 'type' | 'data' | 'metadata' | 'revision' | 'position' | 'createdAt'>

/** A field's values before and after, or a relation list's ids added and removed. */
export type Change = { from: unknown; to: unknown } | { added: string[]; removed: string[] }
/** The comment, attachment or stage an event is about; `name` is the file name or stage code (null for a comment). */
export type Subject = { kind: 'comment' | 'attachment' | 'stage' | 'line_item'; id: string; name: string | null }

export type HistoryEntry = {
  /** The global position, `commit-prepare`. */
  position: string
  revision: number
  type: string
  at: string
  /** The profile that caused the event; null for system work and the organization API key. */
  actor_id: string | null
  changes: Record<string, Change>
  subject: Subject | null
}

const RELATIONS: readonly string[] = ['contacts', 'tags', 'teams', 'assigned_to'] satisfies (keyof DealFields)[]

export const atOf = (event: Pick<StoredEvent, 'data' | 'createdAt'>): string => {
  const at = (event.data as { at?: unknown } | null)?.at
  return typeof at === 'string' ? at : event.createdAt.toISOString()
}

const listChange = (from: readonly string[], to: readonly string[]): Change => ({ added: to.filter((id) => !from.includes(id)), removed: from.filter((id) => !to.includes(id)) })

/** Field changes as history shows them: relation lists as added and removed ids, every other field as from and to. */
function dealChanges(changes: FieldChanges): Record<string, Change> {
  return Object.fromEntries(
    Object.entries(changes).map(([key, change]) => [key, RELATIONS.includes(key) ? listChange(change.from as string[], change.to as string[]) : { from: change.from, to: change.to }]),
  )
}

/** Every step of a history: the state before, the event, and what the entry says. */
type Step<State, Event> = (state: State, event: Event) => { state: State; changes: Record<string, Change>; subject: Subject | null }

function historyOf<State, Event extends { type: string; data: unknown }>(events: readonly StoredEvent[], initial: State, step: Step<State, Event>): HistoryEntry[] {
  let state = initial
  return events.map((recorded) => {
    const next = step(state, { type: recorded.type, data: recorded.data } as Event)
    state = next.state
    return {
      position: formatPosition(recorded.position),
      revision: Number(recorded.revision),
      type: recorded.type,
      at: atOf(recorded),
      actor_id: recorded.metadata.actorId ?? null,
      changes: next.changes,
      subject: next.subject,
    }
  })
}

type AttachmentName = { file_name: string }
type DealHistoryState = { deal: OpportunityState; files: Record<string, AttachmentName> }

function dealStep(state: DealHistoryState, event: OpportunityEvent): ReturnType<Step<DealHistoryState, OpportunityEvent>> {
  const deal = evolveOpportunity(state.deal, event)
  const next = { deal, files: state.files }
  const comment = (id: string, from: string | null, to: string | null) => ({ state: next, changes: { comment: { from, to } }, subject: { kind: 'comment' as const, id, name: null } })
  const textOf = (id: string) => state.deal.comments.find((c) => c.id === id)?.comment ?? null
  switch (event.type) {
    case 'OpportunityCreated': {
      const { pipeline_id, stage } = event.data
      const fields = Object.fromEntries(Object.keys(deal.fields).map((key) => [key, { from: RELATIONS.includes(key) ? [] : null, to: deal.fields[key as keyof DealFields] }])) as FieldChanges
      return { state: next, changes: { ...dealChanges(fields), pipeline: { from: null, to: pipeline_id }, stage: { from: null, to: stage } }, subject: null }
    }
    case 'OpportunityUpdated':
      return { state: next, changes: dealChanges(event.data.changes), subject: null }
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
    case 'OpportunityCommentAdded':
      return comment(event.data.comment_id, null, event.data.comment)
    case 'OpportunityCommentEdited':
      return comment(event.data.comment_id, textOf(event.data.comment_id), event.data.comment)
    case 'OpportunityCommentDeleted':
      return comment(event.data.comment_id, textOf(event.data.comment_id), null)
    case 'OpportunityAttachmentAdded': {
      const { attachment_id: id, file_name } = event.data
      return { state: { deal, files: { ...state.files, [id]: { file_name } } }, changes: { attachment: { from: null, to: file_name } }, subject: { kind: 'attachment', id, name: file_name } }
    }
    case 'OpportunityAttachmentRemoved': {
      const name = state.files[event.data.attachment_id]?.file_name ?? null
      return { state: next, changes: { attachment: { from: name, to: null } }, subject: { kind: 'attachment', id: event.data.attachment_id, name } }
    }
    case 'OpportunityLineItemAdded':
    case 'OpportunityLineItemChanged':
    case 'OpportunityLineItemRemoved': {
      // The line item whole, before and after (null when it did not exist).
      const id = event.type === 'OpportunityLineItemAdded' ? event.data.line_item.id : event.data.line_item_id
      const before = state.deal.lineItems.find((i) => i.id === id) ?? null
      const after = deal.lineItems.find((i) => i.id === id) ?? null
      return { state: next, changes: { line_item: { from: before, to: after } }, subject: { kind: 'line_item', id, name: (after ?? before)?.name ?? null } }
    }
  }
}

/** Every event of a deal's stream as a history entry, in stream order; comments and attachments included. */
export const dealHistory = (events: readonly StoredEvent[]): HistoryEntry[] => historyOf<DealHistoryState, OpportunityEvent>(events, { deal: initialOpportunityState(), files: {} }, dealStep)

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

export type HistoryPage = { order: 'asc' | 'desc'; limit: number; offset: number }

/** One page of entries, oldest first (`asc`) or newest first, with the count of them all. */
export function pageOfHistory<T>(entries: readonly T[], { order, limit, offset }: HistoryPage): { count: number; offset: number; limit: number; results: T[] } {
  const ordered = order === 'desc' ? [...entries].reverse() : entries
  return { count: entries.length, offset, limit, results: ordered.slice(offset, offset + limit) }
}

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

/** A deal as it stood at an instant: its folded state and the facts its read-model row would have had then. */
export type DealAsOf = {
  state: OpportunityState & { placement: Placement }
  createdAt: string
  /** Revision and time of the last change to the deal itself (comments, attachments and line items leave them, as in the read model). */
  revision: bigint
  updatedAt: string
}

// Comments, attachments and line items keep rows of their own: the deal's revision and updated_at ignore them, as in the read model.
const isNote = (type: string) => type.startsWith('OpportunityComment') || type.startsWith('OpportunityAttachment') || type.startsWith('OpportunityLineItem')

/**
 * The deal folded over its events up to `at` (inclusive), stopping at the first later one; undefined
 * when it did not exist yet or was already deleted then (answered 404, like a missing deal).
 */
export function dealAsOf(events: readonly StoredEvent[], at: Date): DealAsOf | undefined {
  const instant = at.getTime()
  let state = initialOpportunityState()
  let createdAt: string | null = null
  let last: { revision: bigint; at: string } | null = null
  for (const recorded of events) {
    const eventAt = atOf(recorded)
    if (Date.parse(eventAt) > instant) break
    state = evolveOpportunity(state, { type: recorded.type, data: recorded.data } as OpportunityEvent)
    if (recorded.type === 'OpportunityCreated') createdAt = eventAt
    if (!isNote(recorded.type)) last = { revision: recorded.revision, at: eventAt }
  }
  const { placement } = state
  if (!state.exists || state.deleted || !placement || createdAt === null || last === null) return undefined
  return { state: { ...state, placement }, createdAt, revision: last.revision, updatedAt: last.at }
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
