import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { taskDecider, taskStream } from '../../commands/task/task.ts'
import { visibleTask } from '../../commands/task/write-task.ts'
import type { Deps } from '../../deps.ts'
import type { FileStore } from '../../files/file-store.ts'
import { TASK_NOTES } from '../../projections/task/tasks.ts'
import { viewerOf } from '../kernel/auth.ts'
import { callerOf } from '../kernel/commands.ts'
import { notesView } from '../kernel/note-views.ts'
import { noteLookups, noteRoutes } from '../kernel/note-routes.ts'
import { TaskNoteAnswer } from './schemas.ts'
import { tasksOf, todayOf } from './task-views.ts'

/**
 * A task's comments and attachments (note-routes.ts): added by whoever may access the task (admin,
 * creator or assignee), with the file in `task_attachment` (the original's field); downloads at
 * /api/tasks/attachment/{id}/download/. Events on the task's stream (`TaskCommentAdded` …).
 */
export function taskNoteRoutes(deps: Deps, files: FileStore): FastifyPluginAsyncZod {
  const { db, clock } = deps
  return noteRoutes(deps, files, {
    plural: 'tasks',
    noun: { indefinite: 'a task', adders: 'admin, creator or assignee' },
    fileField: 'task_attachment',
    visible: (request, id) => visibleTask(db, callerOf(request), id),
    run: (commands, id, command) => commands.run(taskDecider, taskStream(id), command),
    ...noteLookups(db, TASK_NOTES),
    answer: TaskNoteAnswer,
    answerOf: async (request, id) => {
      const viewer = viewerOf(request)
      const row = await visibleTask(db, callerOf(request), id)
      const [[task], notes] = await Promise.all([tasksOf(db, viewer, [row], todayOf(clock())), notesView(db, viewer.orgId, TASK_NOTES, 'tasks', id)])
      return { task_obj: task!, ...notes }
    },
  })
}
