import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { taskPipelines } from '../../commands/pipeline/kinds.ts'
import type { Deps } from '../../deps.ts'
import { taskPipelineModel } from '../../projections/pipeline/pipelines.ts'
import { countTasks } from '../../projections/task/tasks.ts'
import { pipelineAdminRoutes } from './pipelines.ts'

/**
 * Task pipeline administration (the index's /api/tasks/pipelines/ and /api/tasks/stages/ routes):
 * the deal pipelines' rules, bodies and answers (§4.5), with PUT where the index says PUT, the task
 * seed (To Do, In Progress, Review open; Done won; Cancelled lost), and tasks counted where deals
 * are. Tasks enter the stages by a move (http/tasks/task-board.ts).
 */
export const taskPipelineRoutes = (deps: Deps): FastifyPluginAsyncZod =>
  pipelineAdminRoutes(deps, { kind: taskPipelines, model: taskPipelineModel, base: '/api/tasks', updateMethod: 'PUT', tags: ['task pipelines'], count: countTasks })
