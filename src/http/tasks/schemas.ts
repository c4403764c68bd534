import { z } from 'zod'
import { TASK_PRIORITIES, TASK_STATUSES } from '../../commands/task/fields.ts'
import { RelationList, UserChoice, blankable } from '../accounts/schemas.ts'
import { IdFilter, PrimaryEmailContactRef, optionalText } from '../kernel/relations.ts'
import { PageQuery, pageOf } from '../kernel/schemas/common.ts'
import { CUSTOM_FIELD_ENTRIES } from '../kernel/unknown-fields.ts'
import { formNumber } from '../kernel/schemas/form-values.ts'
import { AttachmentView, CommentView } from '../kernel/schemas/notes.ts'
import { CustomField } from '../custom-fields/schemas.ts'
import { OpportunityBody } from '../opportunities/schemas.ts'
import { Task } from './task-views.ts'

/** The bodies, filters and answers of /api/tasks/ (the original's TaskListView, TaskDetailView). */

const ParentId = (what: string) => blankable(z.uuid()).describe(`Id of ${what} of this organization; blank or null for none. A task has at most one parent (400 on \`account\` otherwise)`)

const TaskFieldsBody = z
  .object({
    title: z.string().trim().min(1, 'This field may not be blank.').max(200),
    status: z.enum(TASK_STATUSES).optional().describe('Default New'),
    priority: z.enum(TASK_PRIORITIES).optional().describe('Default Medium'),
    due_date: blankable(z.iso.date('Expected a date, YYYY-MM-DD.')).describe('YYYY-MM-DD; blank or null for none'),
    description: optionalText(10_000),
    account: ParentId('an account'),
    opportunity: ParentId('a deal'),
    case: ParentId('a case'),
    lead: ParentId('a lead'),
    contacts: RelationList('live contacts').optional(),
    teams: RelationList('teams').optional(),
    assigned_to: RelationList('active profiles').optional(),
    tags: RelationList('live tags').optional(),
    custom_fields: OpportunityBody.shape.custom_fields.describe("Values of the organization's custom fields for tasks, by key (an object, or its JSON text in a form body); wins over cf_<key>. 400 with errors.custom_fields.<key>"),
  })
  .catchall(CUSTOM_FIELD_ENTRIES)
  .describe('Also `cf_<key>`: a custom field value. Any other key is refused (400 naming it)')
export const TaskBody = TaskFieldsBody
export const TaskPatch = TaskFieldsBody.partial()

const Text = z.string().optional()
/** A parent filter: a malformed id matches nothing rather than erring, as the other id filters. */
const ParentFilter = (what: string) => Text.describe(`Tasks linked to ${what} (its id)`)
export const TaskListQuery = PageQuery.extend({
  title: Text.describe('Case-insensitive contains on the title'),
  search: Text.describe('Case-insensitive contains on the title'),
  status: z.union([z.string(), z.array(z.string())]).optional().describe('Repeatable (any of): New, In Progress, Completed; `?status=New&status=In Progress` is "still open"'),
  priority: Text.describe('Low, Medium or High'),
  assigned_to: IdFilter('tasks assigned to a profile'),
  tags: IdFilter('tasks carrying a tag'),
  due_date__gte: Text.describe('YYYY-MM-DD, inclusive; malformed matches nothing'),
  due_date__lte: Text.describe('YYYY-MM-DD, inclusive (the calendar asks for its grid this way)'),
  created_at__gte: Text.describe('YYYY-MM-DD (UTC day)'),
  created_at__lte: Text.describe('YYYY-MM-DD, the whole day included'),
  account: ParentFilter('an account'),
  opportunity: ParentFilter('a deal'),
  case: ParentFilter('a case'),
  lead: ParentFilter('a lead'),
  contact: ParentFilter('a contact (one of its contacts)'),
  slim: Text.describe('`true` leaves out accounts_list and contacts_list (the form pickers)'),
})
  .catchall(z.union([z.string(), z.array(z.string())]))
  .describe("Also cf_<key>=value: the task's custom field equals the value (read by its type); an unknown key or a malformed value matches nothing. Blank values are no filter")

export const Totals = z
  .object({ count: z.number().int(), open: z.number().int(), overdue: z.number().int(), due_today: z.number().int(), due_this_week: z.number().int(), no_due_date: z.number().int(), unassigned: z.number().int() })
  .describe('Over the whole filtered set (the viewer\'s tasks), not the page: open is not Completed; overdue, due today, due this week (today to 7 days out, UTC), no due date and unassigned count open tasks')
const Choices = z.array(z.tuple([z.string(), z.string()]))
const AccountChoice = z.object({ id: z.uuid(), name: z.string() })

export const TaskList = pageOf(Task)
  .extend({
    tasks_count: z.number().int().describe('How many tasks match (the original\'s name of `count`)'),
    next_offset: z.number().int().nullable().describe('Where the next page starts; null after the last page'),
    tasks: z.array(Task).describe('The page (the original\'s name of `results`), newest first'),
    totals: Totals,
    status: Choices,
    priority: Choices,
    users: z.array(UserChoice).describe('Whom a task may be assigned to, as the original offers it: every active member to an admin, the admins to anyone else'),
    accounts_list: z.array(AccountChoice).optional().describe('Left out with slim=true'),
    contacts_list: z.array(PrimaryEmailContactRef).optional().describe('Left out with slim=true'),
  })
  .describe('A non-admin sees (and counts) only tasks they created or are assigned to')

export const TaskDetail = z.object({
  task_obj: Task,
  comments: z.array(CommentView).describe('Live comments, oldest first'),
  attachments: z.array(AttachmentView).describe('Live attachments, oldest first'),
  users: z.array(UserChoice),
  assigned_data: z.array(UserChoice).describe('The assignees as {id, user__email}'),
  custom_field_definitions: z.array(CustomField).describe("The organization's active custom fields for tasks, in display order"),
})
export const TaskNoteAnswer = z.object({ task_obj: Task, comments: z.array(CommentView), attachments: z.array(AttachmentView) })

/** The list's filters alone (the board has them too). */
export const TaskFilterQuery = TaskListQuery.omit({ limit: true, offset: true, slim: true })
export const TaskBoardQuery = TaskFilterQuery.extend({ pipeline_id: z.string().optional().describe('A task pipeline: its board (a column per stage, its tasks only); without it, the status board (a column per status, every task)') })
const TaskColumn = z.object({
  id: z.string().describe('The status on the status board; the stage id on a pipeline board'),
  name: z.string(),
  order: z.number().int(),
  color: z.string().nullable(),
  stage_type: z.enum(['open', 'in_progress', 'completed']),
  stage_kind: z.enum(['open', 'won', 'lost']).nullable().describe('The pipeline stage\'s kind; null on the status board'),
  maps_to_status: z.enum(TASK_STATUSES).nullable().describe('The status a task entering the stage takes'),
  is_status_column: z.boolean(),
  wip_limit: z.null(),
  task_count: z.number().int().describe('Every task of the column, though at most 100 are shown'),
  tasks: z.array(Task).describe('By kanban_order, then id'),
})
export const TaskBoard = z.object({
  mode: z.enum(['status', 'pipeline']),
  pipeline: z.object({ id: z.uuid(), name: z.string(), is_default: z.boolean() }).nullable(),
  columns: z.array(TaskColumn),
  total_tasks: z.number().int(),
})
export const TaskMoveBody = z.object({
  stage_id: z.uuid().nullable().optional().describe('A stage of a task pipeline of this organization (its status follows the stage); null takes the task off any pipeline'),
  status: z.enum(TASK_STATUSES).optional().describe('A status board column; wins over the stage\'s status'),
  kanban_order: formNumber(z.number().finite()).optional().describe('The position in the column, as given'),
  above_task_id: z.uuid().nullable().optional().describe('Place right below this card of the target column'),
  below_task_id: z.uuid().nullable().optional().describe('Place right above this card of the target column'),
})
export const TaskMoveAnswer = z.object({ error: z.literal(false), message: z.string(), task: Task })
