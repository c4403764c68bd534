import type { CustomValues } from '../custom-field/values.ts'

/** A task's fields and the values they take (the original's Task model), shared by its decisions. */

/** The original's Task.STATUS_CHOICES and PRIORITY_CHOICES, exact strings. */
export const TASK_STATUSES = ['New', 'In Progress', 'Completed'] as const
export const TASK_PRIORITIES = ['Low', 'Medium', 'High'] as const
export type TaskStatus = (typeof TASK_STATUSES)[number]
export type TaskPriority = (typeof TASK_PRIORITIES)[number]
/** The parent links, of which a task holds at most one. */
export const TASK_PARENTS = ['account', 'opportunity', 'case', 'lead'] as const
export type TaskParent = (typeof TASK_PARENTS)[number]

export type TaskFields = {
  title: string
  status: TaskStatus
  priority: TaskPriority
  /** YYYY-MM-DD (a date, not a time, as the original's DateField). */
  due_date: string | null
  description: string | null
  /** Parent record ids of the task's organization, checked by the use case before the command. */
  account: string | null
  opportunity: string | null
  case: string | null
  lead: string | null
  contacts: string[]
  teams: string[]
  assigned_to: string[]
  tags: string[]
  /** Values of the organization's custom fields for tasks, by key (see custom-field/values.ts). */
  custom_fields: CustomValues
}

export const emptyTask = (): TaskFields => ({
  title: '', status: 'New', priority: 'Medium', due_date: null, description: null, account: null, opportunity: null, case: null, lead: null, contacts: [], teams: [], assigned_to: [], tags: [], custom_fields: {},
})

/**
 * What a reader of one event (a notifier, a webhook consumer) needs without folding the stream:
 * the task's title, state, assignees and parent after the event.
 */
export type TaskSummary = Pick<TaskFields, 'title' | 'status' | 'priority' | 'due_date' | 'assigned_to' | TaskParent>
export const summaryOf = (fields: TaskFields): TaskSummary => ({
  title: fields.title, status: fields.status, priority: fields.priority, due_date: fields.due_date, assigned_to: fields.assigned_to, account: fields.account, opportunity: fields.opportunity, case: fields.case, lead: fields.lead,
})

