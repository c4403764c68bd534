import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { deleteNotification, readAllNotifications, readNotification } from '../../commands/notification/recipient-actions.ts'
import { listNotifications } from '../../projections/notification/notifications.ts'
import type { RecordKinds } from '../../projections/record/record-kinds.ts'
import type { Deps } from '../../deps.ts'
import { viewerOf } from '../kernel/auth.ts'
import { callerOf, settle } from '../kernel/commands.ts'
import { ErrorBody, IdParams, authErrors } from '../kernel/schemas/common.ts'
import { Notification, notificationBodies } from './notification-views.ts'

const TAGS = ['notifications']
const MAX_LIMIT = 100
const Instant = z.iso.datetime({ offset: true })
const ListQuery = z.object({
  limit: z.coerce.number().int().min(1).default(20).transform((n) => Math.min(n, MAX_LIMIT)).describe(`20 by default, at most ${MAX_LIMIT} (a larger value is read as ${MAX_LIMIT})`),
  unread: z.enum(['true', 'false', 'True', 'False']).optional().describe('`true`: unread ones only'),
  since: Instant.optional().describe('Only those created after this instant: the web app polls with the newest `created_at` it has'),
})
const List = z.object({
  count: z.number().int().describe('How many match the filters (under `since`: how many arrived since)'),
  unread_count: z.number().int().describe("The caller's unread notifications, whatever the filters: the bell's badge"),
  results: z.array(Notification),
})
const NoContent = z.null().describe('No content')
const errors = { 400: ErrorBody, ...authErrors, 404: ErrorBody } as const

/**
 * The caller's own notifications (issue 19; the original's /api/notifications/): what they must act
 * on, newest first, with the unread count; read one, read all, delete one. Every member has their
 * own and sees no one else's (another's id is a 404); the organization API key has none. About
 * records of the `kinds` the manifests declare (modules/notification.ts).
 */
export function notificationRoutes(deps: Deps, kinds: RecordKinds): FastifyPluginAsyncZod {
  const { db } = deps
  return async (app) => {
    app.get('/api/notifications/', { schema: { tags: TAGS, summary: "The caller's notifications, newest first, with their unread count", description: 'A record assigned to the caller (by someone else), a comment mentioning them (`@` and the part of their email before the @), a task of theirs due today or overdue, a deal of theirs that turned red (§3.2). Only those about records the caller may see now are listed and counted. `GET /api/stream/notifications/` sends new ones live.', querystring: ListQuery, response: { 200: List, 400: ErrorBody, ...authErrors } } }, async (request) => {
      const viewer = viewerOf(request)
      const { orgId, profileId } = viewer
      if (profileId === null) return { count: 0, unread_count: 0, results: [] }
      const { limit, unread, since } = request.query
      const list = await listNotifications(db, kinds, { ...viewer, profileId }, { unread: unread?.toLowerCase() === 'true', since: since === undefined ? undefined : new Date(since), limit })
      return { count: list.count, unread_count: list.unread_count, results: await notificationBodies(db, orgId, list.rows) }
    })

    app.post('/api/notifications/read-all/', { schema: { tags: TAGS, summary: "Mark all the caller's unread notifications read; answers 204", description: '`before` (ISO 8601): only those created up to then; now when absent. The body may be empty.', body: z.object({ before: Instant.optional() }).nullish(), response: { 204: NoContent, ...errors } } }, async (request, reply) => {
      const before = request.body?.before
      const { position } = await readAllNotifications(deps, callerOf(request), before === undefined ? undefined : new Date(before))
      await settle(deps, reply, position)
      return reply.code(204).send(null)
    })

    app.post('/api/notifications/:id/read/', { schema: { tags: TAGS, summary: 'Mark one of the caller\'s notifications read (again: no change); answers 204', params: IdParams, response: { 204: NoContent, ...errors } } }, async (request, reply) => {
      await settle(deps, reply, await readNotification(deps, callerOf(request), request.params.id))
      return reply.code(204).send(null)
    })

    app.delete('/api/notifications/:id/', { schema: { tags: TAGS, summary: "Delete one of the caller's notifications; answers 204", params: IdParams, response: { 204: NoContent, ...errors } } }, async (request, reply) => {
      await settle(deps, reply, await deleteNotification(deps, callerOf(request), request.params.id))
      return reply.code(204).send(null)
    })
  }
}
