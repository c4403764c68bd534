import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { mayAccessTask, taskDecider, taskStream } from '../../commands/task/task.ts'
import type { Deps } from '../../deps.ts'
import type { EventStore } from '../../eventstore/event-store.ts'
import { taskAsOf, taskHistory, taskRowAsOf } from '../../projections/task/task-history.ts'
import type { TaskRow } from '../../projections/task/tasks.ts'
import { HISTORY_PAGING, namedHistoryPage, readableStream } from '../kernel/history.ts'
import { ErrorBody, IdParams, authErrors } from '../kernel/schemas/common.ts'
import { HistoryPage, HistoryQuery } from '../kernel/schemas/history.ts'

const errors = { 400: ErrorBody, ...authErrors, 404: ErrorBody } as const

/**
 * The task as it stood at `at`, as a read-model row (for `tasksOf`), or undefined when it did not
 * exist yet then, was deleted by then, or belongs to another organization.
 */
export async function taskRowThen(store: EventStore, orgId: string, id: string, at: Date): Promise<TaskRow | undefined> {
  const asOf = taskAsOf(await store.readStream(taskStream(id)), at)
  return asOf && asOf.state.orgId === orgId ? taskRowAsOf(id, asOf) : undefined
}

/**
 * A task's history (issue 19), read from its stream, so a deleted task keeps it: every event,
 * comments and attachments included, under the detail's rule (an admin, the creator or an
 * assignee), and for admins also once the task is deleted. Another organization's id answers 404.
 */
export function taskHistoryRoutes(deps: Deps): FastifyPluginAsyncZod {
  const { db, store } = deps
  return async (app) => {
    app.get('/api/tasks/:id/history/', { schema: { tags: ['tasks'], summary: "A task's history: every event of it, comments and attachments included (admin, creator or assignee)", description: `${HISTORY_PAGING} A deleted task keeps its history, readable by admins. Relation changes (contacts, teams, assigned_to, tags) show the ids added and removed; a board move shows stage (codes), pipeline, status and kanban_order as they changed.`, params: IdParams, querystring: HistoryQuery, response: { 200: HistoryPage, ...errors } } }, async (request) => {
      const events = await readableStream(store, request, taskStream(request.params.id), taskDecider, {
        what: 'Task',
        deletedToAdmins: true,
        mayRead: { rule: mayAccessTask, refusal: 'Only an admin, the creator or an assignee may see this task' },
      })
      return namedHistoryPage(db, request, taskHistory(events), request.query)
    })
  }
}
