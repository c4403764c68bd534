import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { visibleCase, watchCase } from '../../commands/case/write-case.ts'
import type { Deps } from '../../deps.ts'
import { caseConditions, listCases, watchersOf } from '../../projections/case/queries.ts'
import { profileRefs } from '../kernel/relations.ts'
import { viewerOf } from '../kernel/auth.ts'
import { callerOf, requestCommands } from '../kernel/commands.ts'
import { ErrorBody, IdParams, authErrors } from '../kernel/schemas/common.ts'
import { filterOf } from './case-filter.ts'
import { activeCaseFields, casesOf } from './case-views.ts'
import { CaseFilterQuery, WatchAnswer, Watchers, WatchingList } from './schemas.ts'

const TAGS = ['cases']
const errors = { 400: ErrorBody, ...authErrors, 404: ErrorBody } as const
/** The watching list answers every watched case at once, as the original's (no paging): this bounds it. */
const WATCHING_LIMIT = 500

/**
 * Watching a case (the original's watcher_views.py): whoever may see a case may follow it (POST
 * watch/, 201 the first time, 200 after) and stop (DELETE, 204); watchers/ lists who follows it;
 * watching/ lists the caller's followed cases with the case list's filters.
 */
export function caseWatcherRoutes(deps: Deps): FastifyPluginAsyncZod {
  const { db, clock } = deps
  return async (app) => {
    app.post('/api/cases/:id/watch/', { schema: { tags: TAGS, summary: 'Watch a case (whoever may see it); 201 when newly watching, 200 when already', params: IdParams, response: { 200: WatchAnswer, 201: WatchAnswer, ...errors } } }, async (request, reply) => {
      await visibleCase(db, callerOf(request), request.params.id)
      const commands = requestCommands(deps, request, reply)
      const { changed } = await watchCase(deps, callerOf(request), request.params.id, true, commands.session)
      await commands.settle()
      const mine = (await watchersOf(db, request.params.id)).find((row) => row.profile_id === viewerOf(request).profileId)
      return reply.code(changed ? 201 : 200).send({ watching: true as const, subscribed_via: mine?.subscribed_via ?? 'manual' })
    })

    app.delete('/api/cases/:id/watch/', { schema: { tags: TAGS, summary: 'Stop watching a case; answers 204', params: IdParams, response: { 204: z.null().describe('No content'), ...errors } } }, async (request, reply) => {
      await visibleCase(db, callerOf(request), request.params.id)
      const commands = requestCommands(deps, request, reply)
      await watchCase(deps, callerOf(request), request.params.id, false, commands.session)
      await commands.settle()
      return reply.code(204).send(null)
    })

    app.get('/api/cases/:id/watchers/', { schema: { tags: TAGS, summary: 'Who watches a case, first subscriber first (whoever may see it)', params: IdParams, response: { 200: Watchers, ...errors } } }, async (request) => {
      const viewer = viewerOf(request)
      const row = await visibleCase(db, callerOf(request), request.params.id)
      const rows = await watchersOf(db, row.id)
      const people = new Map((await profileRefs(db, viewer.orgId, rows.map((w) => w.profile_id))).map((p) => [p.id, p]))
      const watchers = rows.map((w) => {
        const person = people.get(w.profile_id)
        return { id: `${w.case_id}:${w.profile_id}`, profile_id: w.profile_id, user_id: person?.user_details.id ?? null, name: person?.email ?? '', email: person?.email ?? '', subscribed_via: w.subscribed_via, created_at: w.created_at.toISOString() }
      })
      return { watchers, count: watchers.length, is_current_user_watching: rows.some((w) => w.profile_id === viewer.profileId) }
    })

    app.get('/api/cases/watching/', { schema: { tags: TAGS, summary: "The caller's watched cases, newest first, with the case list's filters (at most 500)", querystring: CaseFilterQuery, response: { 200: WatchingList, ...errors } } }, async (request) => {
      const viewer = viewerOf(request)
      const now = clock()
      const filter = { ...filterOf(request.query, await activeCaseFields(deps, viewer.orgId), now), watching: true }
      const { count, rows } = await listCases(db, caseConditions(viewer, filter), { limit: WATCHING_LIMIT, offset: 0, ordering: request.query.ordering })
      return { cases: await casesOf(deps, viewer, rows, now), count }
    })
  }
}
