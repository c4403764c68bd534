import { z } from 'zod'
import { TASK_PRIORITIES, TASK_STATUSES } from '../../commands/task/fields.ts'
import { RelationList, UserChoice, blankable } from '../accounts/schemas.ts'
import { IdFilter, optionalText } from '../kernel/relations.ts'
import { PageQuery, pageOf } from '../kernel/schemas/common.ts'
import { AttachmentView, CommentView } from '../kernel/schemas/notes.ts'
import { Task } from './task-views.ts'

/** The bodies, filters and answers of /api/tasks/ (the original's TaskListView, TaskDetailView). */

const ParentId = (what: string) => blankable(z.uuid()).describe(`Id of ${what} of this organization; blank or null for none. A task has at most one parent (400 on \`account\` otherwise)`)

const TaskFieldsBody = z.object({
  title: z.string().trim().min(1, 'This field may not be blank.').max(200),
  status: z.enum(TASK_STATUSES).optional().describe('Default New'),
  priority: z.enum(TASK_PRIORITIES).optional().describe('Default Medium'),
  due_date: blankable(z.iso.date('Expected a date, YYYY-MM-DD.')).describe('YYYY-MM-DD; blank or null for none'),
  description: optionalText(10_000),
  account: ParentId('an account'),
  opportunity: ParentId('a deal'),
  case: ParentId('a case').describe('Cases are not built yet: any case id is refused with 400 on `case`'),
  lead: ParentId('a lead'),
  contacts: RelationList('live contacts').optional(),
  teams: RelationList('teams').optional(),
  assigned_to: RelationList('active profiles').optional(),
  tags: RelationList('live tags').optional(),
})
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
  case: ParentFilter('a case (none yet: cases are not built)'),
  lead: ParentFilter('a lead'),
  contact: ParentFilter('a contact (one of its contacts)'),
  slim: Text.describe('`true` leaves out accounts_list and contacts_list (the form pickers)'),
})

export const Totals = z
  .object({ count: z.number().int(), open: z.number().int(), overdue: z.number().int(), due_today: z.number().int(), due_this_week: z.number().int(), no_due_date: z.number().int(), unassigned: z.number().int() })
  .describe('Over the whole filtered set (the viewer\'s tasks), not the page: open is not Completed; overdue, due today, due this week (today to 7 days out, UTC), no due date and unassigned count open tasks')
const Choices = z.array(z.tuple([z.string(), z.string()]))
const AccountChoice = z.object({ id: z.uuid(), name: z.string() })
const ContactChoice = z.object({ id: z.uuid(), first_name: z.string(), last_name: z.string().nullable(), primary_email: z.string().nullable() })

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
    contacts_list: z.array(ContactChoice).optional().describe('Left out with slim=true'),
  })
  .describe('A non-admin sees (and counts) only tasks they created or are assigned to')

export const TaskDetail = z.object({
  task_obj: Task,
  comments: z.array(CommentView).describe('Live comments, oldest first'),
  attachments: z.array(AttachmentView).describe('Live attachments, oldest first'),
  users: z.array(UserChoice),
  assigned_data: z.array(UserChoice).describe('The assignees as {id, user__email}'),
})
export const TaskNoteAnswer = z.object({ task_obj: Task, comments: z.array(CommentView), attachments: z.array(AttachmentView) })
