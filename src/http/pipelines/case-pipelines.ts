import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { casePipelines } from '../../commands/pipeline/kinds.ts'
import type { Deps } from '../../deps.ts'
import { countCases } from '../../projections/case/queries.ts'
import { casePipelineModel } from '../../projections/pipeline/pipelines.ts'
import { pipelineAdminRoutes } from './pipelines.ts'

/**
 * Case pipeline administration (the index's /api/cases/pipelines/ and /api/cases/stages/ routes):
 * the deal pipelines' rules, bodies and answers (§4.5), with PUT where the index says PUT, the case
 * seed (New, In Progress open; Resolved won; Rejected lost), and cases counted where deals are.
 * Cases enter the stages by a move (http/cases/case-board.ts).
 */
export const casePipelineRoutes = (deps: Deps): FastifyPluginAsyncZod =>
  pipelineAdminRoutes(deps, { kind: casePipelines, model: casePipelineModel, base: '/api/cases', updateMethod: 'PUT', tags: ['case pipelines'], count: countCases })
