import type { TaskFields } from '../../commands/task/fields.ts'
import { evolveTask, initialTaskState } from '../../commands/task/task.ts'
import type { TaskEvent, TaskState } from '../../commands/task/task.ts'
import { isNoteEvent } from '../../commands/notes.ts'
import { createdChanges, fieldChanges, foldAsOf, historyOf, noNoteNames, noteEntry } from '../kernel/stream-history.ts'
import type { AsOf, Change, HistoryEntry, NoteNames, StepResult, StoredEvent } from '../kernel/stream-history.ts'
import type { TaskRow } from './tasks.ts'

/**
 * A task's history and the task as of an instant (issue 19), read from its own stream as a deal's
 * are (stream-history.ts): one entry per event, comments and attachments included, and the task
 * folded up to an instant as its read-model row would have been then.
 */

const RELATIONS: readonly string[] = ['contacts', 'teams', 'assigned_to', 'tags'] satisfies (keyof TaskFields)[]

type TaskHistoryState = { task: TaskState; notes: NoteNames }

/** A board move: the stage (code) and pipeline when the card changed stage, the status when the move set it, and the card's order. */
function moveChanges(before: TaskState, event: Extract<TaskEvent, { type: 'TaskMoved' }>): Record<string, Change> {
  const { from, to, status, kanban_order } = event.data
  const changes: Record<string, Change> = {}
  if ((from?.stage_id ?? null) !== (to?.stage_id ?? null)) changes.stage = { from: from?.stage ?? null, to: to?.stage ?? null }
  if ((from?.pipeline_id ?? null) !== (to?.pipeline_id ?? null)) changes.pipeline = { from: from?.pipeline_id ?? null, to: to?.pipeline_id ?? null }
  if (status) changes.status = { from: status.from, to: status.to }
  if (kanban_order !== before.kanbanOrder) changes.kanban_order = { from: before.kanbanOrder, to: kanban_order }
  return changes
}

function taskStep(state: TaskHistoryState, event: TaskEvent): StepResult<TaskHistoryState> {
  const task = evolveTask(state.task, event)
  const note = noteEntry('Task', state.notes, event)
  if (note) return { ...note, state: { task, notes: note.state } }
  const next = { task, notes: state.notes }
  switch (event.type) {
    case 'TaskCreated':
      return { state: next, changes: createdChanges(task.fields, RELATIONS), subject: null }
    case 'TaskUpdated':
      return { state: next, changes: fieldChanges(event.data.changes, RELATIONS), subject: null }
    case 'TaskMoved':
      return { state: next, changes: moveChanges(state.task, event), subject: null }
    default:
      // TaskDeleted changes no field; comments and attachments were told by noteEntry above.
      return { state: next, changes: {}, subject: null }
  }
}

/** Every event of a task's stream as a history entry, in stream order; comments and attachments included. */
export const taskHistory = (events: readonly StoredEvent[]): HistoryEntry[] => historyOf<TaskHistoryState, TaskEvent>(events, { task: initialTaskState(), notes: noNoteNames() }, taskStep)

/** The task folded over its events up to `at` (inclusive); undefined when it did not exist yet or was already deleted then. Comments and attachments leave its revision and updated_at, as in the read model. */
export const taskAsOf = (events: readonly StoredEvent[], at: Date): AsOf<TaskState> | undefined =>
  foldAsOf<TaskState, TaskEvent>(events, at, { initialState: initialTaskState, evolve: evolveTask }, (type) => isNoteEvent('Task', { type }))

/** A read-model row for a task as of an instant, so the detail's `tasksOf` serves it unchanged. */
export function taskRowAsOf(id: string, { state, createdAt, updatedAt }: AsOf<TaskState>): TaskRow {
  const { placement } = state
  return {
    ...state.fields,
    id,
    org_id: state.orgId!,
    created_by: state.createdBy,
    is_deleted: false,
    created_at: new Date(createdAt),
    updated_at: new Date(updatedAt),
    pipeline_id: placement?.pipeline_id ?? null,
    stage_id: placement?.stage_id ?? null,
    stage: placement?.stage ?? null,
    kanban_order: state.kanbanOrder,
  }
}
