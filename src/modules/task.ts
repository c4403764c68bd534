import { sql } from 'kysely'
import { z } from 'zod'
import { taskStreams } from '../commands/task/task.ts'
import { TASK_PRIORITIES, TASK_STATUSES } from '../commands/task/fields.ts'
import type { TaskEvent } from '../commands/task/task.ts'
import { By, CustomValues, Day, Id, Ids, Placement, at, changesOf, eventsOf, noteDefinitions, noPersonalData } from '../events/event-schemas.ts'
import { tasksProjector } from '../projections/task/tasks.ts'
import { str } from '../projections/search/search-documents.ts'
import { created, deleted, noteReadings, updatedChanges } from '../projections/record/record-kinds.ts'
import type { ModuleManifest } from './manifest.ts'

// Tasks (task-<id>).
const taskShape = {
  title: z.string(),
  status: z.enum(TASK_STATUSES),
  priority: z.enum(TASK_PRIORITIES),
  due_date: Day.nullable(),
  description: z.string().nullable(),
  account: Id.nullable(),
  opportunity: Id.nullable(),
  case: Id.nullable(),
  lead: Id.nullable(),
  contacts: Ids,
  teams: Ids,
  assigned_to: Ids,
  tags: Ids,
  custom_fields: CustomValues,
}
const TaskSummary = z.strictObject({ title: taskShape.title, status: taskShape.status, priority: taskShape.priority, due_date: taskShape.due_date, assigned_to: Ids, account: taskShape.account, opportunity: taskShape.opportunity, case: taskShape.case, lead: taskShape.lead }).describe('The task after the event: title, state, assignees and parent')

/** Tasks: to-dos on a record, their board, history, comments and attachments. */
export const taskModule: ModuleManifest = {
  name: 'task',
  events: noPersonalData(eventsOf<TaskEvent>()({
    // task-<id>
    TaskCreated: { stream: 'task', description: 'A task was created: its title, status, priority, due date, assignees and at most one parent (account, opportunity, case or lead) (v2: with its custom field values).', data: z.strictObject({ task_id: Id, org_id: Id, ...taskShape, created_by: By, ...at }) },
    TaskUpdated: { stream: 'task', description: 'Fields of a task changed: only those, each before and after (custom_fields as the whole object of values), with the task as it now is (`task`).', data: z.strictObject({ changes: changesOf(taskShape), task: TaskSummary, by: By, ...at }) },
    TaskDeleted: { stream: 'task', description: 'A task was (soft) deleted.', data: z.strictObject({ by: By, ...at }) },
    TaskMoved: { stream: 'task', description: 'A task card was moved on the task board: into a stage of a task pipeline (`to`), or onto the status board (`to` null); `status` when the move changed it; its order in the column.', data: z.strictObject({ from: Placement.nullable(), to: Placement.nullable(), status: z.strictObject({ from: taskShape.status, to: taskShape.status }).optional(), kanban_order: z.number(), task: TaskSummary, by: By, ...at }) },
    ...noteDefinitions('Task', 'task', 'task'),
  })),
  routes: async (deps, files) => {
    const { taskRoutes } = await import('../http/tasks/tasks.ts')
    return [taskRoutes(deps, files)]
  },
  projectors: [tasksProjector],
  search: {
    kind: 'task',
    order: 6,
    version: 0,
    streams: taskStreams,
    events: { created: 'TaskCreated', updated: 'TaskUpdated', deleted: 'TaskDeleted' },
    changes: 'fromTo',
    // A move on the task board may change its status.
    alsoUpdatedBy: { TaskMoved: (data) => (data.status ? { status: (data.status as { to: string }).to } : {}) },
    keys: ['title', 'description', 'status', 'due_date', 'assigned_to'],
    visibility: 'Task',
    document: (f) => ({ title: str(f.title), subtitle: [str(f.status), str(f.due_date) && `due ${str(f.due_date)}`].filter(Boolean).join(' · '), names: str(f.title), terms: str(f.description) }),
  },
  record: {
    entityType: 'Task',
    version: 0,
    table: 'tasks',
    name: sql<string>`r.title`,
    page: '/tasks',
    noun: 'task',
    activity: {
      TaskCreated: created,
      TaskUpdated: updatedChanges,
      TaskMoved: { action: 'UPDATE', describe: (data) => `Moved the task to ${String((data.to as { stage?: unknown } | null)?.stage ?? (data.status as { to?: unknown } | undefined)?.to ?? 'another place')}` },
      TaskDeleted: deleted,
      ...noteReadings('Task'),
    },
    notifiedBy: { created: 'TaskCreated', updated: 'TaskUpdated', commented: 'TaskCommentAdded' },
  },
  idKinds: [
    [/^\/api\/tasks\/comment\/\{id\}/, 'taskComment'],
    [/^\/api\/tasks\/attachment\/\{id\}/, 'taskAttachment'],
    [/^\/api\/tasks\/\{id\}/, 'task'],
  ],
}
