import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { TASK_STATUSES } from '../../commands/task/fields.ts'
import { statusOfStage } from '../../commands/task/move.ts'
import { moveTask } from '../../commands/task/move-task.ts'
import { visibleTask } from '../../commands/task/write-task.ts'
import type { Deps } from '../../deps.ts'
import { NotFoundError, orNotFound } from '../../errors.ts'
import { boardCards, inColumns } from '../../projections/kernel/record-board.ts'
import { taskPipelineModel } from '../../projections/pipeline/pipelines.ts'
import type { PipelineStageRow } from '../../projections/pipeline/pipelines.ts'
import { TASK_BOARD, taskConditions, taskStageColumn, taskStatusColumn } from '../../projections/task/tasks.ts'
import type { TaskRow } from '../../projections/task/tasks.ts'
import { identityOf, viewerOf } from '../kernel/auth.ts'
import { callerOf, requestCommands } from '../kernel/commands.ts'
import { isUuid } from '../kernel/relations.ts'
import { ErrorBody, IdParams, authErrors } from '../kernel/schemas/common.ts'
import { TaskBoard, TaskBoardQuery, TaskMoveAnswer, TaskMoveBody } from './schemas.ts'
import { filterOf } from './task-filter.ts'
import { activeTaskFields, tasksOf, todayOf } from './task-views.ts'
import { viewerOfIdentity } from '../../visibility/policy.ts'

const TAGS = ['tasks']
/** As on the deal and lead boards: each column shows at most this many cards; task_count still counts them all. */
const CARDS_PER_COLUMN = 100
const STAGE_TYPES = { New: 'open', 'In Progress': 'in_progress', Completed: 'completed' } as const
/** The original's colours of the status board's columns; stages of a task pipeline store none (null). */
const STATUS_COLORS = { New: '#3B82F6', 'In Progress': '#F59E0B', Completed: '#22C55E' } as const

const statusColumns = TASK_STATUSES.map((status, i) => ({ key: status, id: status, name: status, order: i + 1, color: STATUS_COLORS[status], stage_type: STAGE_TYPES[status], stage_kind: null, maps_to_status: status, is_status_column: true }))
const stageColumns = (stages: readonly PipelineStageRow[]) =>
  stages.map((stage) => {
    const status = statusOfStage(stages, stage)
    return { key: stage.id, id: stage.id, name: stage.label, order: stage.position, color: null, stage_type: STAGE_TYPES[status], stage_kind: stage.kind, maps_to_status: status, is_status_column: false }
  })

/**
 * The task board (the original's /api/tasks/kanban/: by status, or
 * by the stages of the pipeline named) and the card move (/api/tasks/{id}/move/). The board has the
 * task list's filters and visibility.
 */
export function taskBoardRoutes(deps: Deps): FastifyPluginAsyncZod {
  const { db, clock } = deps
  return async (app) => {
    app.get('/api/tasks/kanban/', { schema: { tags: TAGS, summary: 'The task board: a column per status, or per stage of the task pipeline named (pipeline_id), at most 100 cards each', description: 'Every task list filter applies, with the same visibility (a non-admin sees tasks they created or are assigned to). Cards by kanban_order.', querystring: TaskBoardQuery, response: { 200: TaskBoard, 400: ErrorBody, 404: ErrorBody, ...authErrors } } }, async (request) => {
      const identity = identityOf(request)
      const { pipeline_id: given, ...query } = request.query
      const id = given?.trim().toLowerCase()
      if (id !== undefined && id !== '' && !isUuid(id)) throw new NotFoundError('Pipeline not found')
      const pipeline = id ? await orNotFound(taskPipelineModel.pipelineOf(db, identity.orgId, id)) : null
      const conditions = taskConditions(viewerOfIdentity(identity), filterOf(query, await activeTaskFields(db, identity.orgId)))
      const columns = pipeline ? stageColumns(pipeline.stages) : statusColumns
      const column = pipeline ? taskStageColumn : taskStatusColumn
      if (pipeline) conditions.push(inColumns(column, columns.map((c) => c.key)))
      const { rows, counts } = await boardCards<TaskRow>(db, TASK_BOARD, conditions, column, columns.map((c) => c.key), CARDS_PER_COLUMN)
      const cards = await tasksOf(db, viewerOfIdentity(identity), rows, todayOf(clock()))
      return {
        mode: pipeline ? ('pipeline' as const) : ('status' as const),
        pipeline: pipeline && { id: pipeline.id, name: pipeline.name, is_default: pipeline.is_default },
        columns: columns.map(({ key, ...rest }) => ({ ...rest, wip_limit: null, task_count: counts.get(key) ?? 0, tasks: cards.filter((_, i) => rows[i]!.column_key === key) })),
        total_tasks: [...counts.values()].reduce((a, b) => a + b, 0),
      }
    })

    app.patch('/api/tasks/:id/move/', { schema: { tags: TAGS, summary: 'Move a task card on the board (admin, creator or assignee)', description: 'stage_id places it in a stage of a task pipeline (its status follows the stage: the first stage New, other open stages In Progress, won and lost Completed); status moves it on the status board (and wins over the stage\'s). kanban_order, above_task_id or below_task_id place it in the column as on the deal board; otherwise it goes to the column\'s end when it enters a column. Answers the moved card.', params: IdParams, body: TaskMoveBody, response: { 200: TaskMoveAnswer, 400: ErrorBody, ...authErrors, 404: ErrorBody, 409: ErrorBody } } }, async (request, reply) => {
      const { stage_id, status, kanban_order, above_task_id, below_task_id } = request.body
      const commands = requestCommands(deps, request, reply)
      await moveTask(deps, callerOf(request), request.params.id, { stageId: stage_id, status, kanbanOrder: kanban_order, aboveId: above_task_id, belowId: below_task_id }, commands.session)
      await commands.settle()
      const row = await visibleTask(db, callerOf(request), request.params.id)
      const [task] = await tasksOf(db, viewerOf(request), [row], todayOf(clock()))
      return { error: false as const, message: 'Task moved successfully', task: task! }
    })
  }
}
