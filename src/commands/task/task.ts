import { ForbiddenError, NotFoundError, ValidationError } from '../../errors.ts'
import type { Actor } from '../caller.ts'
import { customValuesAfter } from '../custom-field/values.ts'
import type { CustomValues, CustomValuesInput, CustomValuesMode, Definition } from '../custom-field/values.ts'
import type { Decider } from '../decider.ts'
import { decideNote, evolveNotes, isNoteCommand, isNoteEvent, noNotes } from '../notes.ts'
import type { NoteCommand, NoteEvent, Notes } from '../notes.ts'
import { mayAccess } from '../../visibility/policy.ts'
import { changedFields, replacing } from '../record.ts'
import { streamCategory } from '../streams.ts'
import { decideTaskMove } from './move.ts'
import type { MoveTask, TaskMoved, TaskPlacement } from './move.ts'
import { TASK_PARENTS, emptyTask, summaryOf } from './fields.ts'
import type { TaskFields, TaskSummary } from './fields.ts'

/**
 * A task (the original's tasks app): a to-do with a status, a priority, an optional due date,
 * assignees and at most one parent record (an account, a deal, a case or a lead). One stream per
 * task. Rules, from the original: an admin, the creator or an assignee may read, edit, move and
 * comment on it; only an admin or the creator deletes it; a task has at most one parent. Custom
 * field values are checked against the organization's definitions for tasks, as a lead's are.
 */

export type TaskFieldChanges = { [K in keyof TaskFields]?: { from: TaskFields[K]; to: TaskFields[K] } }

// Events: the storage contract (never change a type name or data shape).
export type TaskEvent =
  | { type: 'TaskCreated'; data: TaskFields & { task_id: string; org_id: string; created_by: string | null; at: string } }
  /** Only the fields that changed, each before and after, and the task as it now is. */
  | { type: 'TaskUpdated'; data: { changes: TaskFieldChanges; task: TaskSummary; by: string | null; at: string } }
  | { type: 'TaskDeleted'; data: { by: string | null; at: string } }
  | TaskMoved
  | NoteEvent<'Task'>

/** `kanbanOrder`: the card's position in its column; until a move sets it, the creation time in ms (as leads and deals). */
export type TaskState = { exists: boolean; orgId: string | null; createdBy: string | null; deleted: boolean; fields: TaskFields; notes: Notes; placement: TaskPlacement | null; kanbanOrder: number }

export const initialTaskState = (): TaskState => ({ exists: false, orgId: null, createdBy: null, deleted: false, fields: emptyTask(), notes: noNotes(), placement: null, kanbanOrder: 0 })

export function evolveTask(state: TaskState, event: TaskEvent): TaskState {
  if (isNoteEvent('Task', event)) return { ...state, notes: evolveNotes('Task', state.notes, event) }
  switch (event.type) {
    case 'TaskCreated': {
      const { task_id: _id, org_id, created_by, at, ...fields } = event.data
      // Tasks created before custom fields existed have none (the history folds stored data as it was written, not upcast).
      return { ...initialTaskState(), exists: true, orgId: org_id, createdBy: created_by, fields: { ...fields, custom_fields: fields.custom_fields ?? {} }, kanbanOrder: Date.parse(at) }
    }
    case 'TaskUpdated':
      return { ...state, fields: applyChanges(state.fields, event.data.changes) }
    case 'TaskDeleted':
      return { ...state, deleted: true }
    case 'TaskMoved':
      return { ...state, placement: event.data.to, kanbanOrder: event.data.kanban_order, fields: event.data.status ? { ...state.fields, status: event.data.status.to } : state.fields }
  }
}

/** The fields after a change set (the projector applies the same). */
export function applyChanges(fields: TaskFields, changes: TaskFieldChanges): TaskFields {
  const next = { ...fields }
  for (const [key, change] of Object.entries(changes)) (next as Record<string, unknown>)[key] = change.to
  return next
}

/** What a client may set: every field, custom values as sent (`cf_<key>` and `custom_fields`, checked here). */
export type TaskInput = Partial<Omit<TaskFields, 'custom_fields'>> & { custom?: CustomValuesInput }

/** `customFields`: the organization's definitions for tasks, active and inactive (projections/custom-field/custom-fields.ts `definitionsOf`). */
type WriteFacts = { orgId: string; actor: Actor; input: TaskInput; customFields: readonly Definition[]; at: string }

export type TaskCommand =
  | ({ type: 'CreateTask'; taskId: string } & WriteFacts)
  /** PUT (`replace`: fields left out take their empty value, custom values those it names) or PATCH. */
  | ({ type: 'UpdateTask'; replace: boolean } & WriteFacts)
  | { type: 'DeleteTask'; orgId: string; actor: Actor; at: string }
  | MoveTask
  | NoteCommand

function visible(state: TaskState, orgId: string): void {
  if (!state.exists || state.orgId !== orgId || state.deleted) throw new NotFoundError('Task not found')
}

/** Who may read, edit, move and comment: an admin, the creator or an assignee (the original's tasks/access.py). */
export const mayAccessTask = (state: Pick<TaskState, 'createdBy' | 'fields'>, actor: Actor): boolean => mayAccess('Task', { createdBy: state.createdBy, assignedTo: state.fields.assigned_to }, actor)

function assertMayAccess(state: TaskState, actor: Actor): void {
  if (!mayAccessTask(state, actor)) throw new ForbiddenError('Only an admin, the creator or an assignee may change this task')
}

/** The original's model rule: at most one parent (400 on `account`, where it reports it). */
function checkOneParent(fields: TaskFields): void {
  const set = TASK_PARENTS.filter((parent) => fields[parent] !== null)
  if (set.length > 1) throw new ValidationError({ account: [`A task can only be linked to one parent entity (account, opportunity, case or lead); this one would be linked to: ${set.join(', ')}`] })
}

function checkTitle(fields: TaskFields): void {
  if (!fields.title.trim()) throw new ValidationError({ title: ['This field is required.'] })
}

const writable = ({ custom: _custom, ...fields }: TaskInput): Partial<TaskFields> => fields
const customValues = (command: WriteFacts, current: CustomValues, mode: CustomValuesMode): CustomValues => customValuesAfter(command.customFields, current, command.input.custom, mode)

function decideCreate(command: Extract<TaskCommand, { type: 'CreateTask' }>, state: TaskState): TaskEvent[] {
  if (state.exists) return []
  const fields = { ...emptyTask(), ...withoutUndefined(writable(command.input)), custom_fields: customValues(command, {}, 'create') }
  checkTitle(fields)
  checkOneParent(fields)
  return [{ type: 'TaskCreated', data: { task_id: command.taskId, org_id: command.orgId, ...fields, created_by: command.actor.profileId, at: command.at } }]
}

function decideUpdate(command: Extract<TaskCommand, { type: 'UpdateTask' }>, state: TaskState): TaskEvent[] {
  visible(state, command.orgId)
  assertMayAccess(state, command.actor)
  const custom_fields = customValues(command, state.fields.custom_fields, command.replace ? 'replace' : 'patch')
  const requested = { ...(command.replace ? replacing(emptyTask(), writable(command.input)) : writable(command.input)), custom_fields }
  const changed = changedFields(state.fields, requested)
  const next = { ...state.fields, ...changed }
  checkTitle(next)
  checkOneParent(next)
  const changes: TaskFieldChanges = {}
  for (const key of Object.keys(changed) as (keyof TaskFields)[]) (changes as Record<string, unknown>)[key] = { from: state.fields[key], to: next[key] }
  if (!Object.keys(changes).length) return []
  return [{ type: 'TaskUpdated', data: { changes, task: summaryOf(next), by: command.actor.profileId, at: command.at } }]
}

function decideDelete(command: Extract<TaskCommand, { type: 'DeleteTask' }>, state: TaskState): TaskEvent[] {
  if (state.exists && state.orgId === command.orgId && state.deleted) return []
  visible(state, command.orgId)
  const { actor } = command
  if (!actor.isAdmin && (actor.profileId === null || actor.profileId !== state.createdBy)) throw new ForbiddenError('Only an admin or the creator may delete this task')
  return [{ type: 'TaskDeleted', data: { by: actor.profileId, at: command.at } }]
}

const withoutUndefined = <T extends object>(input: T): Partial<T> => Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined)) as Partial<T>

export function decideTask(command: TaskCommand, state: TaskState): TaskEvent[] {
  if (isNoteCommand(command)) {
    visible(state, command.orgId)
    return decideNote('Task', state.notes, command, mayAccessTask(state, command.actor))
  }
  switch (command.type) {
    case 'CreateTask':
      return decideCreate(command, state)
    case 'UpdateTask':
      return decideUpdate(command, state)
    case 'DeleteTask':
      return decideDelete(command, state)
    case 'MoveTask':
      visible(state, command.orgId)
      assertMayAccess(state, command.actor)
      return decideTaskMove(command, state)
  }
}

export const taskDecider: Decider<TaskCommand, TaskState, TaskEvent> = { initialState: initialTaskState, evolve: evolveTask, decide: decideTask }

export const taskStreams = streamCategory('task')
export const taskStream = taskStreams.stream
