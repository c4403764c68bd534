import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { viewerOfIdentity } from '../../visibility/policy.ts'
import { countActivities, listActivities, mayReadRecord } from '../../projections/activity/dashboard-activity.ts'
import { caseOf } from '../../projections/case/queries.ts'
import type { RecordKinds } from '../../projections/record/record-kinds.ts'
import type { Deps } from '../../deps.ts'
import { identityOf } from '../kernel/auth.ts'
import { ErrorBody, IdParams, authErrors } from '../kernel/schemas/common.ts'
import { activityBody, activitySchema } from './activity-views.ts'

/** The ticket timeline pages by 20 (TicketActivityTimeline's PAGE_SIZE); the feed's cap of 50 holds here too. */
const CaseActivityQuery = z.object({
  limit: z.coerce.number().int().min(1).default(20).transform((n) => Math.min(n, 50)).describe('Entries per page: 20 by default, at most 50'),
  offset: z.coerce.number().int().min(0).default(0),
})

/**
 * GET /api/cases/{id}/activities/: one case's entries of the activity feed (the same read model as
 * /api/activities/), newest first, for the ticket's timeline. As the original: 404 for no such case
 * in the organization, 403 for a member who may not read it; `count` is the case's whole history,
 * `offset` where the next page starts (null on the last).
 */
export function caseActivityRoutes(deps: Deps, kinds: RecordKinds): FastifyPluginAsyncZod {
  const { db, clock } = deps
  const CaseActivityPage = z.object({ activities: z.array(activitySchema(kinds)), count: z.number().int(), offset: z.number().int().nullable() })
  return async (app) => {
    app.get('/api/cases/:id/activities/', { schema: { tags: ['cases'], summary: "A case's activity, newest first (its timeline)", params: IdParams, querystring: CaseActivityQuery, response: { 200: CaseActivityPage, 404: ErrorBody, ...authErrors } } }, async (request, reply) => {
      const viewer = viewerOfIdentity(identityOf(request))
      const { id } = request.params
      if (!(await caseOf(db, viewer.orgId, id))) return reply.code(404).send({ error: true, errors: 'Case not found' })
      if (!(await mayReadRecord(db, kinds, viewer, 'Case', id))) return reply.code(403).send({ error: true, errors: "You don't have permission to view this case" })
      const { limit, offset } = request.query
      const filter = { entityType: 'Case', entityId: id }
      const [rows, count] = await Promise.all([listActivities(db, kinds, viewer, { ...filter, limit, offset }), countActivities(db, kinds, viewer, filter)])
      const now = clock()
      const next = offset + rows.length
      return { activities: rows.map((row) => activityBody(row, now)), count, offset: next < count ? next : null }
    })
  }
}
