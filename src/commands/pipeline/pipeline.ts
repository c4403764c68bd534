import { nameBasedId } from '../name-based-id.ts'
import { NotFoundError, ValidationError } from '../../errors.ts'
import type { Decider } from '../decider.ts'
import { streamCategory } from '../streams.ts'
import { DEAL_SEED, checkLabelFree, checkNoDeals, checkNotLastOfKind, checkThresholds, defaultProbability, seededStages, stageCode } from './stage-rules.ts'
import type { Stage, StageKind, StageSeed, Thresholds } from './stage-rules.ts'

/**
 * A pipeline: a named, ordered list of stages a deal moves through (§2.2, §4.5). One stream per
 * pipeline, so every stage rule is checked against the pipeline's folded state and appended with
 * its expected revision: two concurrent stage writes can never both pass a rule only one may.
 * Lead pipelines (kinds.ts) follow the same rules with their own seed; "deals" below then reads "leads".
 */

/** What sets the pipelines of deals and of leads apart in the rules: the seeded stages, and what enters the stages (named in refusals). */
export type PipelineRules = { seed: StageSeed; records: 'deals' | 'leads' | 'tasks' | 'cases' }
export const DEAL_PIPELINE_RULES: PipelineRules = { seed: DEAL_SEED, records: 'deals' }

// Events: the storage contract. Stage snapshots are recorded whole, so a replay needs no rule.
export type PipelineEvent =
  | { type: 'PipelineCreated'; data: { pipeline_id: string; org_id: string; name: string; is_default: boolean; stages: Stage[]; created_by: string | null; at: string } }
  | { type: 'PipelineRenamed'; data: { name: string; at: string } }
  | { type: 'StageAdded'; data: { stage: Stage; at: string } }
  | { type: 'StageUpdated'; data: { stage_id: string; label?: string; kind?: StageKind; expected_days?: number | null; warning_days?: number | null; probability?: number | null; at: string } }
  | { type: 'StagesReordered'; data: { stage_ids: string[]; at: string } }
  | { type: 'StageRemoved'; data: { stage_id: string; at: string } }
  | { type: 'PipelineDeleted'; data: { at: string } }
  // Closed to deals: no deal may enter while a removal or kind change counts the deals in it (see `LockStage`).
  | { type: 'StageLocked'; data: { stage_id: string; at: string } }
  | { type: 'StageUnlocked'; data: { stage_id: string; at: string } }
  | { type: 'PipelineLocked'; data: { at: string } }
  | { type: 'PipelineUnlocked'; data: { at: string } }

// Fold. `stages` is kept in order, with `order` = position (1-based).
export type PipelineState = {
  exists: boolean
  orgId: string | null
  name: string
  isDefault: boolean
  stages: Stage[]
  removedStageIds: string[]
  deleted: boolean
  /** Stages closed to deals: a removal or kind change is counting the deals in them. */
  lockedStageIds: string[]
  /** The whole pipeline is closed to deals: its deletion is counting them. */
  locked: boolean
}

/** A record's target pipeline (a deal's, a lead's, a task's), folded from its stream by the caller (the deciders stay pure). */
export type PipelineFacts = { id: string; state: PipelineState }

export const initialPipelineState = (): PipelineState => ({ exists: false, orgId: null, name: '', isDefault: false, stages: [], removedStageIds: [], deleted: false, lockedStageIds: [], locked: false })

const without = (ids: readonly string[], id: string) => ids.filter((x) => x !== id)

const renumber = (stages: readonly Stage[]): Stage[] => stages.map((s, i) => ({ ...s, order: i + 1 }))

export function evolvePipeline(state: PipelineState, event: PipelineEvent): PipelineState {
  switch (event.type) {
    case 'PipelineCreated':
      return { ...state, exists: true, orgId: event.data.org_id, name: event.data.name, isDefault: event.data.is_default, stages: renumber(event.data.stages) }
    case 'PipelineRenamed':
      return { ...state, name: event.data.name }
    case 'StageAdded':
      return { ...state, stages: renumber([...state.stages, event.data.stage]) }
    case 'StageUpdated': {
      const { stage_id, at: _at, ...changes } = event.data
      // A kind change completes the locked count that allowed it.
      const lockedStageIds = changes.kind === undefined ? state.lockedStageIds : without(state.lockedStageIds, stage_id)
      return { ...state, stages: state.stages.map((s) => (s.id === stage_id ? { ...s, ...changes } : s)), lockedStageIds }
    }
    case 'StagesReordered': {
      const byId = new Map(state.stages.map((s) => [s.id, s]))
      return { ...state, stages: renumber(event.data.stage_ids.flatMap((id) => byId.get(id) ?? [])) }
    }
    case 'StageRemoved':
      return { ...state, stages: renumber(state.stages.filter((s) => s.id !== event.data.stage_id)), removedStageIds: [...state.removedStageIds, event.data.stage_id], lockedStageIds: without(state.lockedStageIds, event.data.stage_id) }
    case 'PipelineDeleted':
      return { ...state, deleted: true }
    case 'StageLocked':
      return { ...state, lockedStageIds: [...without(state.lockedStageIds, event.data.stage_id), event.data.stage_id] }
    case 'StageUnlocked':
      return { ...state, lockedStageIds: without(state.lockedStageIds, event.data.stage_id) }
    case 'PipelineLocked':
      return { ...state, locked: true }
    case 'PipelineUnlocked':
      return { ...state, locked: false }
  }
}

// Decisions. Time, new ids, the caller and looked-up facts (deal counts) arrive in the command.
type ThresholdInput = { expected_days?: number | null; warning_days?: number | null }
export type PipelineCommand =
  | { type: 'CreatePipeline'; pipelineId: string; orgId: string; name: string; isDefault: boolean; stageIds: string[]; actorId: string | null; at: string }
  | { type: 'RenamePipeline'; orgId: string; name: string; at: string }
  /** `dealCount`: deals in the pipeline, counted while it is locked (see `LockStage`). */
  | { type: 'DeletePipeline'; orgId: string; dealCount: number; at: string }
  | ({ type: 'AddStage'; orgId: string; stageId: string; label: string; kind: StageKind; at: string } & ThresholdInput)
  /** `dealsInStage`: deals in the stage, counted while it is locked when the kind changes. */
  | ({ type: 'UpdateStage'; orgId: string; stageId: string; label?: string; kind?: StageKind; dealsInStage: number; at: string } & ThresholdInput)
  | { type: 'ReorderStages'; orgId: string; stageIds: string[]; at: string }
  | { type: 'RemoveStage'; orgId: string; stageId: string; dealsInStage: number; at: string }
  /**
   * Closes a stage (or, with no stageId, the whole pipeline) to deals before its deals are counted.
   * Deal commands entering a stage append only while the pipeline stream is still at the revision
   * they decided on (a guarded append), so once the lock is stored no deal can enter, and every deal
   * that entered is before the lock in the log: a count taken after the read models reach the lock
   * is final. Removal, a kind change and pipeline deletion are refused unless locked.
   */
  | { type: 'LockStage'; orgId: string; stageId: string | null; at: string }
  | { type: 'UnlockStage'; orgId: string; stageId: string | null; at: string }
  /** aging-config PUT: thresholds of stages named by code, one StageUpdated per changed stage. */
  | { type: 'SetStageThresholds'; orgId: string; thresholds: Record<string, ThresholdInput>; at: string }

type Of<T extends PipelineCommand['type']> = Extract<PipelineCommand, { type: T }>
type StageChanges = Omit<Extract<PipelineEvent, { type: 'StageUpdated' }>['data'], 'stage_id' | 'at'>

function existing(state: PipelineState, orgId: string): void {
  if (!state.exists || state.orgId !== orgId || state.deleted) throw new NotFoundError('Pipeline not found')
}

function stageOf(state: PipelineState, stageId: string): Stage {
  const stage = state.stages.find((s) => s.id === stageId)
  if (!stage) throw new NotFoundError('Stage not found')
  return stage
}

/** The thresholds a stage ends with: given values win, won/lost clear them; only the given values need checking. */
function nextThresholds(stage: Stage, kind: StageKind, given: ThresholdInput, prefix = ''): Thresholds {
  checkThresholds(kind, { expected_days: given.expected_days ?? null, warning_days: given.warning_days ?? null }, prefix)
  if (kind !== 'open') return { expected_days: null, warning_days: null }
  return { expected_days: given.expected_days === undefined ? stage.expected_days : given.expected_days, warning_days: given.warning_days === undefined ? stage.warning_days : given.warning_days }
}

function thresholdChanges(stage: Stage, next: Thresholds): StageChanges {
  const changes: StageChanges = {}
  if (next.expected_days !== stage.expected_days) changes.expected_days = next.expected_days
  if (next.warning_days !== stage.warning_days) changes.warning_days = next.warning_days
  return changes
}

const updated = (stage: Stage, changes: StageChanges, at: string): PipelineEvent[] => (Object.keys(changes).length ? [{ type: 'StageUpdated', data: { stage_id: stage.id, ...changes, at } }] : [])

function decideAddStage(command: Of<'AddStage'>, state: PipelineState, rules: PipelineRules): PipelineEvent[] {
  existing(state, command.orgId)
  if (state.stages.some((s) => s.id === command.stageId) || state.removedStageIds.includes(command.stageId)) return []
  checkLabelFree(state.stages, command.label)
  checkThresholds(command.kind, { expected_days: command.expected_days ?? null, warning_days: command.warning_days ?? null })
  const code = stageCode(command.label, state.stages.map((s) => s.code))
  const { kind, label } = command
  const stage: Stage = { id: command.stageId, code, label, order: state.stages.length + 1, kind, expected_days: command.expected_days ?? null, warning_days: command.warning_days ?? null, probability: defaultProbability(kind, code, rules.seed) }
  return [{ type: 'StageAdded', data: { stage, at: command.at } }]
}

function decideUpdateStage(command: Of<'UpdateStage'>, state: PipelineState, rules: PipelineRules): PipelineEvent[] {
  existing(state, command.orgId)
  const stage = stageOf(state, command.stageId)
  const changes: StageChanges = {}
  if (command.label !== undefined && command.label !== stage.label) {
    checkLabelFree(state.stages, command.label, stage.id)
    changes.label = command.label
  }
  const kind = command.kind ?? stage.kind
  const thresholds = nextThresholds(stage, kind, command)
  if (kind !== stage.kind) {
    checkNotLastOfKind(state.stages, stage, 'kind')
    checkLocked(state.lockedStageIds.includes(stage.id))
    checkNoDeals(command.dealsInStage, 'kind', rules.records)
    changes.kind = kind
    const probability = defaultProbability(kind, stage.code, rules.seed)
    if (probability !== stage.probability) changes.probability = probability
  }
  Object.assign(changes, thresholdChanges(stage, thresholds))
  return updated(stage, changes, command.at)
}

function decideReorder(command: Of<'ReorderStages'>, state: PipelineState): PipelineEvent[] {
  existing(state, command.orgId)
  const current = state.stages.map((s) => s.id)
  const given = new Set(command.stageIds)
  if (given.size !== command.stageIds.length || given.size !== current.length || current.some((id) => !given.has(id))) {
    throw new ValidationError({ stage_ids: ['Expected every stage of the pipeline exactly once'] })
  }
  if (command.stageIds.every((id, i) => id === current[i])) return []
  return [{ type: 'StagesReordered', data: { stage_ids: [...command.stageIds], at: command.at } }]
}

function decideRemoveStage(command: Of<'RemoveStage'>, state: PipelineState, rules: PipelineRules): PipelineEvent[] {
  existing(state, command.orgId)
  if (state.removedStageIds.includes(command.stageId)) return []
  const stage = stageOf(state, command.stageId)
  checkNotLastOfKind(state.stages, stage, 'stage')
  checkLocked(state.lockedStageIds.includes(stage.id))
  checkNoDeals(command.dealsInStage, 'stage', rules.records)
  return [{ type: 'StageRemoved', data: { stage_id: stage.id, at: command.at } }]
}

function decideThresholds(command: Of<'SetStageThresholds'>, state: PipelineState): PipelineEvent[] {
  existing(state, command.orgId)
  return Object.entries(command.thresholds).flatMap(([code, given]) => {
    const stage = state.stages.find((s) => s.code === code)
    if (!stage) throw new ValidationError({ [code]: ['Expected a stage code of the default pipeline'] })
    return updated(stage, thresholdChanges(stage, nextThresholds(stage, stage.kind, given, `${code}.`)), command.at)
  })
}

function decideDelete(command: Of<'DeletePipeline'>, state: PipelineState, rules: PipelineRules): PipelineEvent[] {
  if (state.exists && state.orgId === command.orgId && state.deleted) return []
  existing(state, command.orgId)
  if (state.isDefault) throw new ValidationError({ pipeline: ['The default pipeline cannot be deleted'] })
  checkLocked(state.locked)
  if (command.dealCount > 0) throw new ValidationError({ pipeline: [`Expected no ${rules.records} in the pipeline; ${command.dealCount} still in it`] })
  return [{ type: 'PipelineDeleted', data: { at: command.at } }]
}

/** Programming error, not a client's: the route must lock before it counts. */
function checkLocked(locked: boolean): void {
  if (!locked) throw new Error('Expected the stage or pipeline to be locked (closed to deals) before its deals are counted')
}

function decideLock(command: Of<'LockStage'> | Of<'UnlockStage'>, state: PipelineState): PipelineEvent[] {
  existing(state, command.orgId)
  const lock = command.type === 'LockStage'
  const at = command.at
  if (command.stageId === null) return state.locked === lock ? [] : [lock ? { type: 'PipelineLocked', data: { at } } : { type: 'PipelineUnlocked', data: { at } }]
  const stage = stageOf(state, command.stageId)
  if (state.lockedStageIds.includes(stage.id) === lock) return []
  return [lock ? { type: 'StageLocked', data: { stage_id: stage.id, at } } : { type: 'StageUnlocked', data: { stage_id: stage.id, at } }]
}

export function decidePipeline(command: PipelineCommand, state: PipelineState, rules: PipelineRules = DEAL_PIPELINE_RULES): PipelineEvent[] {
  switch (command.type) {
    case 'CreatePipeline': {
      // Also what makes the lazy default race-safe: the loser of two first creates finds it created.
      if (state.exists) return []
      const { pipelineId, orgId, name, isDefault, stageIds, actorId, at } = command
      return [{ type: 'PipelineCreated', data: { pipeline_id: pipelineId, org_id: orgId, name, is_default: isDefault, stages: seededStages(stageIds, rules.seed), created_by: actorId, at } }]
    }
    case 'RenamePipeline':
      existing(state, command.orgId)
      return command.name === state.name ? [] : [{ type: 'PipelineRenamed', data: { name: command.name, at: command.at } }]
    case 'DeletePipeline':
      return decideDelete(command, state, rules)
    case 'AddStage':
      return decideAddStage(command, state, rules)
    case 'UpdateStage':
      return decideUpdateStage(command, state, rules)
    case 'ReorderStages':
      return decideReorder(command, state)
    case 'RemoveStage':
      return decideRemoveStage(command, state, rules)
    case 'SetStageThresholds':
      return decideThresholds(command, state)
    case 'LockStage':
    case 'UnlockStage':
      return decideLock(command, state)
  }
}

export type PipelineDecider = Decider<PipelineCommand, PipelineState, PipelineEvent>

/** The pipeline decider under one kind's rules: the events, state and decisions are the same for every kind. */
export const pipelineDeciderOf = (rules: PipelineRules): PipelineDecider => ({ initialState: initialPipelineState, evolve: evolvePipeline, decide: (command, state) => decidePipeline(command, state, rules) })

/** Deal pipelines (§2.2, §4.5). */
export const pipelineDecider = pipelineDeciderOf(DEAL_PIPELINE_RULES)

export const pipelineStreams = streamCategory('pipeline')

/**
 * The id of an organization's default pipeline: a name-based (v5-style, SHA-1) uuid of the org id,
 * so every first request computes the same stream and a concurrent second creation finds it taken.
 * `purpose` keeps the default pipelines of different kinds apart.
 */
export function defaultPipelineId(orgId: string, purpose = 'crm-default-pipeline'): string {
  return nameBasedId(`${purpose}:${orgId.toLowerCase()}`)
}

export const DEFAULT_PIPELINE_NAME = 'Default pipeline'
