import type { FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { opportunityDecider, opportunityStreams } from '../../commands/opportunity/opportunity.ts'
import { mayAccess } from '../../visibility/policy.ts'
import { pipelineDecider, pipelineStreams } from '../../commands/pipeline/pipeline.ts'
import { dealHistory, pipelineHistory, stageIntervals } from '../../projections/opportunity/opportunity-history.ts'
import { stageOf } from '../../projections/pipeline/pipelines.ts'
import type { Deps } from '../../deps.ts'
import { identityOf } from '../kernel/auth.ts'
import { HISTORY_PAGING, actorNames, namedHistoryPage, readableStream } from '../kernel/history.ts'
import { ErrorBody, IdParams, authErrors } from '../kernel/schemas/common.ts'
import { HistoryPage, HistoryQuery } from '../kernel/schemas/history.ts'
import { StageIntervals } from './history-schemas.ts'

const errors = { 400: ErrorBody, ...authErrors, 404: ErrorBody } as const

/**
 * History (issue 8), read from the streams themselves rather than the read models, so a deleted
 * deal or pipeline keeps it: a deal's every event (comments and attachments included) under the
 * detail's access rule, admins also for a deleted deal; a pipeline's under the members' read rule;
 * and a deal's stage ledger. Another organization's id answers 404, like a missing one.
 */
export function opportunityHistoryRoutes(deps: Deps): FastifyPluginAsyncZod {
  const { db, store, clock } = deps

  /** The deal's events, once the caller may see them: admin, creator or assignee (403); deleted: admins only with `deletedToAdmins`, else 404. */
  const dealEvents = (request: FastifyRequest, id: string, deletedToAdmins: boolean) =>
    readableStream(store, request, opportunityStreams.stream(id), opportunityDecider, {
      what: 'Opportunity',
      deletedToAdmins,
      mayRead: { rule: (deal, actor) => mayAccess('Opportunity', { createdBy: deal.createdBy, assignedTo: deal.fields.assigned_to }, actor), refusal: 'Only an admin, the creator or an assignee may see this opportunity' },
    })

  /** The pipeline's events for any member; a deleted pipeline's for admins only (404 otherwise). */
  const pipelineEvents = (request: FastifyRequest, id: string) => readableStream(store, request, pipelineStreams.stream(id), pipelineDecider, { what: 'Pipeline', deletedToAdmins: true })

  return async (app) => {
    app.get('/api/opportunities/:id/history/', { schema: { tags: ['opportunities'], summary: "A deal's history: every event of it, comments and attachments included (admin, creator or assignee)", description: `${HISTORY_PAGING} A deleted deal keeps its history, readable by admins. Relation changes (contacts, tags, teams, assigned_to) show the ids added and removed.`, params: IdParams, querystring: HistoryQuery, response: { 200: HistoryPage, ...errors } } }, async (request) =>
      namedHistoryPage(db, request, dealHistory(await dealEvents(request, request.params.id, true)), request.query),
    )

    app.get('/api/opportunities/pipelines/:id/history/', { schema: { tags: ['pipelines'], summary: "A pipeline's history: every event of it (members)", description: `${HISTORY_PAGING} A deleted pipeline keeps its history, readable by admins. Stage events name their stage in \`subject\`.`, params: IdParams, querystring: HistoryQuery, response: { 200: HistoryPage, ...errors } } }, async (request) =>
      namedHistoryPage(db, request, pipelineHistory(await pipelineEvents(request, request.params.id)), request.query),
    )

    app.get('/api/opportunities/:id/stage-intervals/', { schema: { tags: ['opportunities'], summary: "A deal's stage ledger: one row per stay in a stage, oldest first (admin, creator or assignee)", description: 'Labels are the stages\' current ones (null once removed); `days` count whole days to the exit, or to now while the deal is still there.', params: IdParams, response: { 200: StageIntervals, ...errors } } }, async (request) => {
      const { orgId } = identityOf(request)
      const intervals = stageIntervals(await dealEvents(request, request.params.id, false), clock())
      const stageIds = [...new Set(intervals.map((i) => i.stage_id))]
      const stages = new Map(await Promise.all(stageIds.map(async (id) => [id, (await stageOf(db, orgId, id))?.label ?? null] as const)))
      const actor = await actorNames(db, orgId, intervals.flatMap((i) => [i.entered_by, i.exited_by]))
      return {
        count: intervals.length,
        results: intervals.map((i) => ({ ...i, label: stages.get(i.stage_id) ?? null, entered_by: actor(i.entered_by), exited_by: actor(i.exited_by) })),
      }
    })
  }
}
