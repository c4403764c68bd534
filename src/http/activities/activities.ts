import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { viewerOfIdentity } from '../../visibility/policy.ts'
import { listActivities } from '../../projections/activity/dashboard-activity.ts'
import type { RecordKinds } from '../../projections/record/record-kinds.ts'
import type { Deps } from '../../deps.ts'
import { identityOf } from '../kernel/auth.ts'
import { ErrorBody, authErrors } from '../kernel/schemas/common.ts'
import { activityBody, activitySchema } from './activity-views.ts'

/** The original caps a page at 50 (a larger limit is read as 50) and gives 10 by default. */
const MAX_LIMIT = 50
const activityQuery = (kinds: RecordKinds) => z.object({
  limit: z.coerce.number().int().min(1).default(10).transform((n) => Math.min(n, MAX_LIMIT)).describe(`Entries per page: 10 by default, at most ${MAX_LIMIT} (a larger value is read as ${MAX_LIMIT})`),
  offset: z.coerce.number().int().min(0).default(0),
  entity_type: z.enum(kinds.types).optional().describe('Only entries about records of this kind'),
  entity_id: z.uuid().optional().describe('Only entries about this record'),
  actor: z.uuid().optional().describe('Only what this profile did'),
})
const activityPage = (kinds: RecordKinds) => z.object({
  error: z.literal(false),
  count: z.number().int().describe('Entries on this page, as the original counts them'),
  offset: z.number().int(),
  limit: z.number().int(),
  next_offset: z.number().int().nullable().describe('The offset of the next page; null on the last'),
  activities: z.array(activitySchema(kinds)),
})

/**
 * GET /api/activities/: the organization's activity feed (issue 19), a projection of the event log
 * (projections/activity/dashboard-activity.ts), newest first. Every member may call it and sees entries about
 * the records their lists show them, of the `kinds` the manifests declare (modules/activity.ts).
 */
export function activityRoutes(deps: Deps, kinds: RecordKinds): FastifyPluginAsyncZod {
  const { db, clock } = deps
  return async (app) => {
    app.get('/api/activities/', { schema: { tags: ['activities'], summary: "The organization's activity: who did what to which record, newest first", description: 'One entry per change of an account, contact, lead, deal or task (created, changed, moved, converted, deleted, a comment or file added, edited or removed), read off the event log. A member sees entries about the records their lists show them: every account and contact, and the leads, deals and tasks they created or are assigned to; an admin sees all.', querystring: activityQuery(kinds), response: { 200: activityPage(kinds), 400: ErrorBody, ...authErrors } } }, async (request) => {
      const identity = identityOf(request)
      const { limit, offset, entity_type, entity_id, actor } = request.query
      const viewer = viewerOfIdentity(identity)
      // One more than the page: whether another page follows, without counting the whole feed.
      const rows = await listActivities(db, kinds, viewer, { entityType: entity_type, entityId: entity_id, actorId: actor, limit: limit + 1, offset })
      const page = rows.slice(0, limit)
      const now = clock()
      return { error: false as const, count: page.length, offset, limit, next_offset: rows.length > limit ? offset + limit : null, activities: page.map((row) => activityBody(row, now)) }
    })
  }
}
