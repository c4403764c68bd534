import type { FastifyReply, FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import type { z } from 'zod'
import { TASK_PRIORITIES, TASK_STATUSES } from '../../commands/task/fields.ts'
import { changeTask, createTask, deleteTask, visibleTask } from '../../commands/task/write-task.ts'
import type { TaskInput } from '../../commands/task/task.ts'
import type { Deps } from '../../deps.ts'
import { orNotFound } from '../../errors.ts'
import type { FileStore } from '../../files/file-store.ts'
import type { Identity } from '../../identity/identity.ts'
import { liveAccounts } from '../../projections/account/accounts.ts'
import { liveContacts } from '../../projections/contact/contacts.ts'
import { TASK_NOTES, listTasks, taskConditions, taskTotals } from '../../projections/task/tasks.ts'
import { assignableChoices } from '../accounts/schemas.ts'
import { fieldBody } from '../custom-fields/schemas.ts'
import { identityOf } from '../kernel/auth.ts'
import { callerOf, requestCommands } from '../kernel/commands.ts'
import { notesView } from '../kernel/note-views.ts'
import { ErrorBody, IdParams, Message, authErrors, nextOffset } from '../kernel/schemas/common.ts'
import { AsOfQuery } from '../kernel/schemas/history.ts'
import { Created } from '../kernel/schemas/records.ts'
import { TaskBody, TaskDetail, TaskList, TaskListQuery, TaskPatch } from './schemas.ts'
import { taskBoardRoutes } from './task-board.ts'
import { filterOf } from './task-filter.ts'
import { taskHistoryRoutes, taskRowThen } from './task-history.ts'
import { taskNoteRoutes } from './task-notes.ts'
import { activeTaskFields, tasksOf, todayOf } from './task-views.ts'
import { primaryEmailContactRef } from '../kernel/relations.ts'
import { viewerOfIdentity } from '../../visibility/policy.ts'

const TAGS = ['tasks']
const errors = { 400: ErrorBody, ...authErrors, 404: ErrorBody } as const
const pairs = (values: readonly string[]): [string, string][] => values.map((value) => [value, value])
/** Whom a task may be assigned to, as the original offers it: every active member to an admin, the admins to anyone else. */
const assignable = (deps: Deps, identity: Identity) => assignableChoices(deps.db, viewerOfIdentity(identity))

const WRITABLE = Object.keys(TaskBody.shape).filter((key) => key !== 'custom_fields')

/** A validated body as the use case takes it: the writable fields it names, its custom values (`cf_<key>`, `custom_fields`) apart. */
function inputOf(body: z.infer<typeof TaskPatch>): TaskInput {
  const input = Object.fromEntries(Object.entries(body).filter(([key, value]) => WRITABLE.includes(key) && value !== undefined)) as TaskInput
  return { ...input, custom: { cfFields: body, customFields: body.custom_fields } }
}

/**
 * Tasks (the original's tasks app): list with totals and the form's pickers, create, detail, PUT,
 * PATCH, DELETE; comments and attachments (POST /{id}/, comment/{id}/, attachment/{id}/) in
 * task-notes.ts. Who: an admin, the creator or an assignee reads and changes a task; an admin or
 * the creator deletes it; a non-admin's list holds only the tasks they may open.
 */
export function taskRoutes(deps: Deps, files: FileStore): FastifyPluginAsyncZod {
  const { db, clock } = deps

  const write = async (request: FastifyRequest, reply: FastifyReply, id: string, input: TaskInput, replace: boolean) => {
    const commands = requestCommands(deps, request, reply)
    await changeTask(deps, callerOf(request), id, { input, replace }, commands.session)
    await commands.settle()
    return { error: false as const, message: 'Task updated Successfully' }
  }

  return async (app) => {
    app.get('/api/tasks/', { schema: { tags: TAGS, summary: 'Tasks, newest first, with totals over the whole filtered set and the task form\'s pickers', description: 'A non-admin sees only tasks they created or are assigned to, in the page and the totals alike. Blank filter values are no filter; malformed ones match nothing.', querystring: TaskListQuery, response: { 200: TaskList, ...errors } } }, async (request) => {
      const identity = identityOf(request)
      const { limit, offset } = request.query
      const now = clock()
      const conditions = taskConditions(viewerOfIdentity(identity), filterOf(request.query, await activeTaskFields(db, identity.orgId)))
      const slim = request.query.slim === 'true'
      const [{ count, rows }, totals, users, accounts, contacts] = await Promise.all([
        listTasks(db, conditions, { limit, offset }),
        taskTotals(db, conditions, todayOf(now)),
        assignable(deps, identity),
        slim ? undefined : liveAccounts(db, identity.orgId),
        slim ? undefined : liveContacts(db, identity.orgId),
      ])
      const tasks = await tasksOf(db, viewerOfIdentity(identity), rows, todayOf(now))
      return {
        count,
        offset,
        limit,
        results: tasks,
        tasks_count: count,
        next_offset: nextOffset(offset, tasks.length, count),
        tasks,
        totals,
        status: pairs(TASK_STATUSES),
        priority: pairs(TASK_PRIORITIES),
        users,
        ...(accounts && { accounts_list: accounts.map(({ id, name }) => ({ id, name })) }),
        ...(contacts && { contacts_list: contacts.map(primaryEmailContactRef) }),
      }
    })

    app.post('/api/tasks/', { schema: { tags: TAGS, summary: 'Create a task (any member); its creator may then read, change and delete it', description: 'Parents, contacts, teams, assignees and tags must be live records of the caller\'s organization (400 naming the field otherwise). At most one parent.', body: TaskBody, response: { 200: Created, ...errors } } }, async (request, reply) => {
      const commands = requestCommands(deps, request, reply)
      const { id } = await createTask(deps, callerOf(request), inputOf(request.body), commands.session)
      await commands.settle()
      return { error: false as const, message: 'Task Created Successfully', id }
    })

    const detailDescription = "`?as_of=<ISO instant>` answers `task_obj` as it stood then, folded from its events (404 before it existed or once it was deleted; access is checked on the task as it is now; is_overdue and days_until_due as of that day; comments, attachments and the names of related records stay current)."
    app.get('/api/tasks/:id/', { schema: { tags: TAGS, summary: 'One task under task_obj, with its comments and attachments (admin, creator or assignee)', description: detailDescription, params: IdParams, querystring: AsOfQuery, response: { 200: TaskDetail, ...errors } } }, async (request) => {
      const identity = identityOf(request)
      const current = await visibleTask(db, callerOf(request), request.params.id)
      const asOf = request.query.as_of
      const row = asOf ? await orNotFound(taskRowThen(deps.store, identity.orgId, current.id, asOf)) : current
      const [[task], notes, users, definitions] = await Promise.all([tasksOf(db, viewerOfIdentity(identity), [row], todayOf(asOf ?? clock())), notesView(db, identity.orgId, TASK_NOTES, 'tasks', row.id), assignable(deps, identity), activeTaskFields(db, identity.orgId)])
      return { task_obj: task!, ...notes, users, assigned_data: task!.assigned_to.map((p) => ({ id: p.id, user__email: p.email })), custom_field_definitions: definitions.map(fieldBody) }
    })

    app.put('/api/tasks/:id/', { schema: { tags: TAGS, summary: 'Replace a task (admin, creator or assignee)', description: 'Fields left out take their empty value and relation lists left out are cleared.', params: IdParams, body: TaskBody, response: { 200: Message, ...errors } } }, (request, reply) =>
      write(request, reply, request.params.id, inputOf(request.body), true),
    )

    app.patch('/api/tasks/:id/', { schema: { tags: TAGS, summary: 'Change the named fields of a task (admin, creator or assignee)', description: 'Moving a task to another parent names the new one and nulls the old one in the same body (at most one parent).', params: IdParams, body: TaskPatch, response: { 200: Message, ...errors } } }, (request, reply) =>
      write(request, reply, request.params.id, inputOf(request.body), false),
    )

    app.delete('/api/tasks/:id/', { schema: { tags: TAGS, summary: 'Delete a task (admin or its creator)', params: IdParams, response: { 200: Message, ...errors } } }, async (request, reply) => {
      const commands = requestCommands(deps, request, reply)
      await deleteTask(deps, callerOf(request), request.params.id, commands.session)
      await commands.settle()
      return { error: false as const, message: 'Task deleted Successfully' }
    })

    await app.register(taskNoteRoutes(deps, files))
    await app.register(taskBoardRoutes(deps))
    await app.register(taskHistoryRoutes(deps))
  }
}
