import { ConflictError, NotFoundError, ValidationError } from '../../errors.ts'
import type { Decider } from '../decider.ts'
import type { PipelineFacts, PipelineState } from '../pipeline/pipeline.ts'
import type { Stage, StageKind } from '../pipeline/stage-rules.ts'
import { changedFields, replacing, retagged } from '../record.ts'
import { streamCategory } from '../streams.ts'
import { customValuesAfter } from '../custom-field/values.ts'
import type { CustomValues, CustomValuesInput, CustomValuesMode, Definition } from '../custom-field/values.ts'
import type { LEAD_SOURCES, OPPORTUNITY_TYPES } from './enums.ts'
import { calculatedAmount, decideLineItems } from './line-items.ts'
import type { LineItem, LineItemInput } from './line-items.ts'
import { decideNotes } from './notes.ts'
import { assertMayAccess, assertMayDelete, checkClosingRules, probabilityFor } from './rules.ts'
import type { Actor } from '../caller.ts'
import type { AttachmentData } from '../notes.ts'

/**
 * A deal (opportunity, §2.1, §3.1): one stream per deal. Every path that changes it (create, PUT,
 * PATCH, board move, delete) is a command decided here against the folded deal and the facts of
 * its pipeline, so every rule holds whichever path is taken.
 */

/** The fields a deal keeps besides its place in a pipeline. Amounts are decimal strings (no floating point). */
export type DealFields = {
  name: string
  account: string | null
  opportunity_type: (typeof OPPORTUNITY_TYPES)[number] | null
  currency: string | null
  amount: string | null
  probability: number | null
  closed_on: string | null
  lead_source: (typeof LEAD_SOURCES)[number] | null
  description: string | null
  is_active: boolean
  contacts: string[]
  tags: string[]
  teams: string[]
  assigned_to: string[]
  /** Output-only: the profile that put the deal in a won or lost stage; null while open. */
  closed_by: string | null
  /** Values of the organization's custom fields for deals, by key (see custom-field/values.ts). */
  custom_fields: CustomValues
}

/** Where the deal is: the stage's code (what clients read and send) and id (what survives a relabel). */
export type Placement = { pipeline_id: string; stage: string; stage_id: string; stage_kind: StageKind }

export const emptyDeal = (): DealFields => ({
  name: '', account: null, opportunity_type: null, currency: null, amount: null, probability: null, closed_on: null, lead_source: null, description: null, is_active: true, contacts: [], tags: [], teams: [], assigned_to: [], closed_by: null,
  custom_fields: {},
})

// Events: the storage contract (never change a type name or data shape).
export type FieldChanges = { [K in keyof DealFields]?: { from: DealFields[K]; to: DealFields[K] } }
export type OpportunityEvent =
  | { type: 'OpportunityCreated'; data: DealFields & Placement & { opportunity_id: string; org_id: string; created_by: string | null; kanban_order: number; at: string } }
  /** Only the fields that changed, each with its value before and after. */
  | { type: 'OpportunityUpdated'; data: { changes: FieldChanges; at: string } }
  /** Its own event, so analysts can replay stage changes; `by` is the profile that moved it. */
  | { type: 'OpportunityStageChanged'; data: { from: Placement; to: Placement; by: string | null; at: string } }
  | { type: 'OpportunityPositioned'; data: { kanban_order: number; at: string } }
  | { type: 'OpportunityDeleted'; data: { at: string } }
  /** `mentions`: the profiles its `@name`s named when it was written (absent when none). */
  | { type: 'OpportunityCommentAdded'; data: { comment_id: string; comment: string; by: string | null; mentions?: string[]; at: string } }
  | { type: 'OpportunityCommentEdited'; data: { comment_id: string; comment: string; at: string } }
  | { type: 'OpportunityCommentDeleted'; data: { comment_id: string; at: string } }
  /** `storage_key` names the file in the file store; the bytes never enter the log. */
  | { type: 'OpportunityAttachmentAdded'; data: AttachmentData & { by: string | null; at: string } }
  | { type: 'OpportunityAttachmentRemoved'; data: { attachment_id: string; at: string } }
  | { type: 'OpportunityLineItemAdded'; data: { line_item: LineItem; at: string } }
  | { type: 'OpportunityLineItemChanged'; data: { line_item_id: string; changes: Partial<LineItemInput>; at: string } }
  | { type: 'OpportunityLineItemRemoved'; data: { line_item_id: string; at: string } }

/** A comment or attachment as the rules need it: who wrote or uploaded it, and whether it is gone. */
export type Authored = { id: string; by: string | null; comment?: string; removed: boolean }

export type OpportunityState = {
  exists: boolean
  orgId: string | null
  createdBy: string | null
  deleted: boolean
  fields: DealFields
  placement: Placement | null
  stageChangedAt: string | null
  kanbanOrder: number | null
  comments: Authored[]
  attachments: Authored[]
  /** The live line items, in the order they were added. */
  lineItems: LineItem[]
}

export const initialOpportunityState = (): OpportunityState => ({ exists: false, orgId: null, createdBy: null, deleted: false, fields: emptyDeal(), placement: null, stageChangedAt: null, kanbanOrder: null, comments: [], attachments: [], lineItems: [] })

const changeOne = (items: Authored[], id: string, change: Partial<Authored>) => items.map((item) => (item.id === id ? { ...item, ...change } : item))

export function evolveOpportunity(state: OpportunityState, event: OpportunityEvent): OpportunityState {
  switch (event.type) {
    case 'OpportunityCreated': {
      const { opportunity_id: _id, org_id, created_by, kanban_order, at, pipeline_id, stage, stage_id, stage_kind, ...fields } = event.data
      // Deals created before custom fields existed have none.
      return { ...initialOpportunityState(), exists: true, orgId: org_id, createdBy: created_by, fields: { ...fields, custom_fields: fields.custom_fields ?? {} }, placement: { pipeline_id, stage, stage_id, stage_kind }, stageChangedAt: at, kanbanOrder: kanban_order }
    }
    case 'OpportunityUpdated': {
      const fields = { ...state.fields }
      for (const [key, change] of Object.entries(event.data.changes)) (fields as Record<string, unknown>)[key] = change.to
      return { ...state, fields }
    }
    case 'OpportunityStageChanged':
      return { ...state, placement: event.data.to, stageChangedAt: event.data.at }
    case 'OpportunityPositioned':
      return { ...state, kanbanOrder: event.data.kanban_order }
    case 'OpportunityDeleted':
      return { ...state, deleted: true }
    case 'OpportunityCommentAdded':
      return { ...state, comments: [...state.comments, { id: event.data.comment_id, by: event.data.by, comment: event.data.comment, removed: false }] }
    case 'OpportunityCommentEdited':
      return { ...state, comments: changeOne(state.comments, event.data.comment_id, { comment: event.data.comment }) }
    case 'OpportunityCommentDeleted':
      return { ...state, comments: changeOne(state.comments, event.data.comment_id, { removed: true }) }
    case 'OpportunityAttachmentAdded':
      return { ...state, attachments: [...state.attachments, { id: event.data.attachment_id, by: event.data.by, removed: false }] }
    case 'OpportunityAttachmentRemoved':
      return { ...state, attachments: changeOne(state.attachments, event.data.attachment_id, { removed: true }) }
    case 'OpportunityLineItemAdded':
      return { ...state, lineItems: [...state.lineItems, event.data.line_item] }
    case 'OpportunityLineItemChanged': {
      const { line_item_id, changes } = event.data
      return { ...state, lineItems: state.lineItems.map((item) => (item.id === line_item_id ? { ...item, ...changes } : item)) }
    }
    case 'OpportunityLineItemRemoved':
      return { ...state, lineItems: state.lineItems.filter((item) => item.id !== event.data.line_item_id) }
  }
}

/**
 * What a client may set: the writable fields of §2.1 (relations included), the deal's pipeline and
 * stage code, and custom field values as sent (`cf_<key>` and `custom_fields`, checked here
 * against the definitions the command carries).
 */
export type DealInput = Partial<Omit<DealFields, 'closed_by' | 'custom_fields'>> & { pipeline?: string; stage?: string; custom?: CustomValuesInput }

/** Looked-up facts every writing command carries: the caller, the time, the organization's default currency, the pipeline; create and edit also its custom fields for deals. */
type Facts = { orgId: string; actor: Actor; at: string; defaultCurrency: string; pipeline: PipelineFacts }
type WriteFacts = Facts & { customFields: readonly Definition[] }

export type OpportunityCommand =
  | ({ type: 'CreateOpportunity'; opportunityId: string; input: DealInput } & WriteFacts)
  /** PUT (`replace`: fields left out take their empty value, relation lists left out are cleared) or PATCH. */
  | ({ type: 'UpdateOpportunity'; input: DealInput; replace: boolean } & WriteFacts)
  /** A board move (§4.7): `kanbanOrder` was placed by the route from the column's cards; `today` fills a missing closed_on. */
  | ({ type: 'MoveOpportunity'; columnId: string; kanbanOrder: number | null; today: string } & Facts)
  | { type: 'DeleteOpportunity'; orgId: string; actor: Actor; at: string }
  | { type: 'AddComment'; orgId: string; actor: Actor; commentId: string; comment: string; mentions?: readonly string[]; at: string }
  | { type: 'EditComment'; orgId: string; actor: Actor; commentId: string; comment: string; at: string }
  | { type: 'DeleteComment'; orgId: string; actor: Actor; commentId: string; at: string }
  | { type: 'AddAttachment'; orgId: string; actor: Actor; attachment: AttachmentData; at: string }
  | { type: 'RemoveAttachment'; orgId: string; actor: Actor; attachmentId: string; at: string }
  | { type: 'AddLineItem'; orgId: string; actor: Actor; lineItemId: string; item: LineItemInput; at: string }
  | { type: 'ChangeLineItem'; orgId: string; actor: Actor; lineItemId: string; item: Partial<LineItemInput>; at: string }
  | { type: 'RemoveLineItem'; orgId: string; actor: Actor; lineItemId: string; at: string }
  /** A tag merge (admins): `from` replaced by `into` in the deal's tags; a deleted deal is left alone. */
  | { type: 'RetagOpportunity'; orgId: string; from: string; into: string; at: string }

export type Of<T extends OpportunityCommand['type']> = Extract<OpportunityCommand, { type: T }>

export function existing(state: OpportunityState, orgId: string): asserts state is OpportunityState & { placement: Placement } {
  if (!state.exists || state.orgId !== orgId || state.deleted || !state.placement) throw new NotFoundError('Opportunity not found')
}

/** The target pipeline as the command saw it; a deal whose pipeline changed meanwhile is decided again by the client. */
function livePipeline(facts: PipelineFacts, id: string, orgId: string): PipelineState {
  if (facts.id !== id) throw new ConflictError('The opportunity changed pipeline concurrently; retry the request')
  const { state } = facts
  if (!state.exists || state.orgId !== orgId || state.deleted) throw new ValidationError({ pipeline: ['Expected a pipeline of this organization.'] })
  return state
}

const placementOf = (pipelineId: string, stage: Stage): Placement => ({ pipeline_id: pipelineId, stage: stage.code, stage_id: stage.id, stage_kind: stage.kind })

/** The stage a create or edit ends in (§2.1: stage defaults to the current one, or the pipeline's first open stage). */
function targetStage(pipeline: PipelineState, code: string | undefined, current: Placement | null): Stage {
  const wanted = code ?? current?.stage
  const stage = wanted === undefined ? pipeline.stages.find((s) => s.kind === 'open') : pipeline.stages.find((s) => s.code === wanted)
  if (!stage) throw new ValidationError({ stage: [`Expected a stage code of the pipeline: ${pipeline.stages.map((s) => s.code).join(', ')}.`] })
  return stage
}

/** A deal may not enter a stage (or pipeline) whose removal or kind change is counting its deals. */
function checkOpenToDeals(pipeline: PipelineState, stage: Stage, field: 'stage' | 'column_id'): void {
  if (pipeline.locked) throw new ValidationError({ pipeline: ['The pipeline is being deleted.'] })
  if (pipeline.lockedStageIds.includes(stage.id)) throw new ValidationError({ [field]: [`The stage ${stage.code} is being removed or changed; try again.`] })
}

/** The fields after an edit: the stage's auto-filled probability, the default currency, closed_by following the stage. */
function settle(fields: DealFields, stage: Stage, closedBy: string | null | undefined, defaultCurrency: string): DealFields {
  const next = { ...fields, currency: fields.currency ?? defaultCurrency, probability: probabilityFor(fields.probability, stage) }
  if (stage.kind === 'open') next.closed_by = null
  else if (closedBy !== undefined) next.closed_by = closedBy
  return next
}

export function fieldEvents(current: DealFields, next: DealFields, at: string): OpportunityEvent[] {
  const changed = changedFields(current, next)
  const keys = Object.keys(changed) as (keyof DealFields)[]
  if (!keys.length) return []
  const changes = Object.fromEntries(keys.map((key) => [key, { from: current[key], to: next[key] }])) as FieldChanges
  return [{ type: 'OpportunityUpdated', data: { changes, at } }]
}

const stageEvents = (from: Placement, to: Placement, by: string | null, at: string): OpportunityEvent[] => (from.stage_id === to.stage_id ? [] : [{ type: 'OpportunityStageChanged', data: { from, to, by, at } }])

function writable(input: DealInput): Partial<DealFields> {
  const { pipeline: _pipeline, stage: _stage, custom: _custom, ...fields } = input
  return fields
}

/** Custom values after this write: checked against the definitions; a PATCH naming none keeps them untouched. */
const customValues = (command: WriteFacts & { input: DealInput }, current: CustomValues, mode: CustomValuesMode): CustomValues => customValuesAfter(command.customFields, current, command.input.custom, mode)

function decideCreate(command: Of<'CreateOpportunity'>, state: OpportunityState): OpportunityEvent[] {
  if (state.exists) return []
  const { input, orgId, actor, at } = command
  const pipeline = livePipeline(command.pipeline, input.pipeline ?? command.pipeline.id, orgId)
  const stage = targetStage(pipeline, input.stage, null)
  checkOpenToDeals(pipeline, stage, 'stage')
  const fields = settle({ ...replacing(emptyDeal(), writable(input)), custom_fields: customValues(command, {}, 'create') }, stage, actor.profileId, command.defaultCurrency)
  checkClosingRules(fields, stage.kind)
  const placement = placementOf(command.pipeline.id, stage)
  return [{ type: 'OpportunityCreated', data: { opportunity_id: command.opportunityId, org_id: orgId, ...fields, ...placement, created_by: actor.profileId, kanban_order: Date.parse(at), at } }]
}

function decideUpdate(command: Of<'UpdateOpportunity'>, state: OpportunityState): OpportunityEvent[] {
  existing(state, command.orgId)
  assertMayAccess(state, command.actor)
  const { input, actor, at } = command
  const current = state.placement
  const pipelineId = input.pipeline ?? current.pipeline_id
  const pipeline = livePipeline(command.pipeline, pipelineId, command.orgId)
  if (pipelineId !== current.pipeline_id && input.stage === undefined) throw new ValidationError({ stage: ['Required when the pipeline changes.'] })
  const stage = targetStage(pipeline, input.stage, pipelineId === current.pipeline_id ? current : null)
  if (stage.id !== current.stage_id) checkOpenToDeals(pipeline, stage, 'stage')
  // A PUT keeps what it cannot send: closed_by is output-only.
  const custom_fields = customValues(command, state.fields.custom_fields, command.replace ? 'replace' : 'patch')
  const requested = command.replace ? { ...replacing(emptyDeal(), writable(input)), closed_by: state.fields.closed_by, custom_fields } : { ...state.fields, ...writable(input), custom_fields }
  requested.amount = calculatedAmount(state, input.amount) ?? requested.amount
  // §4.4.3: naming a won or lost stage stamps the caller as closer.
  const fields = settle(requested, stage, input.stage === undefined && stage.id === current.stage_id ? undefined : actor.profileId, command.defaultCurrency)
  checkClosingRules(fields, stage.kind)
  return [...fieldEvents(state.fields, fields, at), ...stageEvents(current, placementOf(pipelineId, stage), actor.profileId, at)]
}

function decideMove(command: Of<'MoveOpportunity'>, state: OpportunityState): OpportunityEvent[] {
  existing(state, command.orgId)
  assertMayAccess(state, command.actor)
  const { actor, at } = command
  const current = state.placement
  // A move never changes the pipeline (§3.1).
  const pipeline = livePipeline(command.pipeline, current.pipeline_id, command.orgId)
  const stage = pipeline.stages.find((s) => s.code === command.columnId)
  if (!stage) throw new ValidationError({ column_id: [`Expected a stage code of the deal's pipeline: ${pipeline.stages.map((s) => s.code).join(', ')}.`] })
  const entering = stage.id !== current.stage_id
  if (entering) checkOpenToDeals(pipeline, stage, 'column_id')
  const closing = stage.kind !== 'open' && entering
  const moved = { ...state.fields, closed_on: closing ? (state.fields.closed_on ?? command.today) : state.fields.closed_on }
  const fields = settle(moved, stage, closing ? actor.profileId : undefined, command.defaultCurrency)
  checkClosingRules(fields, stage.kind)
  const positioned: OpportunityEvent[] = command.kanbanOrder !== null && command.kanbanOrder !== state.kanbanOrder ? [{ type: 'OpportunityPositioned', data: { kanban_order: command.kanbanOrder, at } }] : []
  return [...fieldEvents(state.fields, fields, at), ...stageEvents(current, placementOf(current.pipeline_id, stage), actor.profileId, at), ...positioned]
}

function decideDelete(command: Of<'DeleteOpportunity'>, state: OpportunityState): OpportunityEvent[] {
  if (state.exists && state.orgId === command.orgId && state.deleted) return []
  existing(state, command.orgId)
  assertMayDelete(state, command.actor)
  return [{ type: 'OpportunityDeleted', data: { at: command.at } }]
}

function decideRetag(command: Of<'RetagOpportunity'>, state: OpportunityState): OpportunityEvent[] {
  if (state.deleted) return []
  existing(state, command.orgId)
  return fieldEvents(state.fields, { ...state.fields, tags: retagged(state.fields.tags, command) }, command.at)
}

export function decideOpportunity(command: OpportunityCommand, state: OpportunityState): OpportunityEvent[] {
  switch (command.type) {
    case 'CreateOpportunity':
      return decideCreate(command, state)
    case 'UpdateOpportunity':
      return decideUpdate(command, state)
    case 'MoveOpportunity':
      return decideMove(command, state)
    case 'DeleteOpportunity':
      return decideDelete(command, state)
    case 'RetagOpportunity':
      return decideRetag(command, state)
    case 'AddLineItem':
    case 'ChangeLineItem':
    case 'RemoveLineItem':
      return decideLineItems(command, state)
    default:
      return decideNotes(command, state)
  }
}

export const opportunityDecider: Decider<OpportunityCommand, OpportunityState, OpportunityEvent> = { initialState: initialOpportunityState, evolve: evolveOpportunity, decide: decideOpportunity }

export const opportunityStreams = streamCategory('opportunity')
