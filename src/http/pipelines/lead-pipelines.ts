import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { leadPipelines } from '../../commands/pipeline/kinds.ts'
import { countLeads } from '../../projections/lead/leads.ts'
import { leadPipelineModel } from '../../projections/pipeline/pipelines.ts'
import type { Deps } from '../../deps.ts'
import { pipelineAdminRoutes } from './pipelines.ts'

/**
 * Lead pipeline administration (the index's /api/leads/pipelines/ and /api/leads/stages/ routes):
 * the deal pipelines' rules, bodies and answers (§4.5), with PUT where the index says PUT, the lead
 * seed (NEW, CONTACTED, QUALIFIED open; CONVERTED won; DISQUALIFIED lost), and leads counted where
 * deals are (a stage or pipeline with leads in it is not removed, nor its kind changed).
 */
export const leadPipelineRoutes = (deps: Deps): FastifyPluginAsyncZod =>
  pipelineAdminRoutes(deps, { kind: leadPipelines, model: leadPipelineModel, base: '/api/leads', updateMethod: 'PUT', tags: ['lead pipelines'], count: countLeads })
