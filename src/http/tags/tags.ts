import { randomUUID } from 'node:crypto'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { mergeTag } from '../../commands/tag/merge-tag.ts'
import { TAG_NAME_SCOPE, tagDecider, tagStream } from '../../commands/tag/tag.ts'
import { withClaimedName, withReleasedName, withRenamedClaim } from '../../commands/unique-name.ts'
import { orNotFound } from '../../errors.ts'
import { listTags, tagOf } from '../../projections/tags.ts'
import type { TagRow } from '../../projections/tags.ts'
import type { Deps } from '../../deps.ts'
import { callerOf, requestCommands, settle } from '../kernel/commands.ts'
import { identityOf, requireAdmin } from '../kernel/auth.ts'
import { IdParams, Message, PageQuery, authErrors, pageOf } from '../kernel/schemas/common.ts'

const Tag = z.object({ id: z.uuid(), name: z.string(), color: z.string().nullable(), is_deleted: z.boolean(), created_by: z.uuid().nullable(), created_at: z.string(), updated_at: z.string() })
const TagBody = z.object({
  name: z.string().trim().min(1, 'This field may not be blank.').max(100),
  color: z.string().regex(/^#[0-9a-fA-F]{6}$/, 'Expected a colour like #1f77b4').nullable().optional(),
})
const ListQuery = PageQuery.extend({ search: z.string().optional(), include_deleted: z.enum(['true', 'false']).optional() })
const SCOPE = TAG_NAME_SCOPE

const tagBody = (row: TagRow) => ({ id: row.id, name: row.name, color: row.color, is_deleted: row.is_deleted, created_by: row.created_by, created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString() })

/**
 * Tags (issue 4): any member reads, creates and renames; deleting (soft), restoring and merging
 * are admin-only. Names are unique per organization, case-insensitively, also under concurrency.
 */
export function tagRoutes(deps: Deps): FastifyPluginAsyncZod {
  const { db, clock } = deps
  return async (app) => {
    const found = (orgId: string, id: string) => orNotFound(tagOf(db, orgId, id))

    app.get('/api/tags/', { schema: { tags: ['tags'], summary: 'Tags of the organization, by name', querystring: ListQuery, response: { 200: pageOf(Tag), ...authErrors } } }, async (request) => {
      const { orgId } = identityOf(request)
      const { limit, offset, search, include_deleted } = request.query
      const { count, rows } = await listTags(db, orgId, { limit, offset, search, includeDeleted: include_deleted === 'true' })
      return { count, offset, limit, results: rows.map(tagBody) }
    })

    app.post('/api/tags/', { schema: { tags: ['tags'], summary: 'Create a tag', body: TagBody, response: { 201: Tag, ...authErrors } } }, async (request, reply) => {
      const identity = identityOf(request)
      const commands = requestCommands(deps, request, reply)
      const tagId = randomUUID()
      const { name, color } = request.body
      await withClaimedName(commands.run, { scope: SCOPE, orgId: identity.orgId, ownerId: tagId, name, field: 'name' }, (run) =>
        run(tagDecider, tagStream(tagId), { type: 'CreateTag', tagId, orgId: identity.orgId, name, color: color ?? null, actorId: identity.profileId, at: clock().toISOString() }),
      )
      await commands.settle()
      return reply.code(201).send(tagBody(await found(identity.orgId, tagId)))
    })

    app.get('/api/tags/:id/', { schema: { tags: ['tags'], summary: 'One tag (also a deleted one)', params: IdParams, response: { 200: Tag, ...authErrors } } }, async (request) => tagBody(await found(identityOf(request).orgId, request.params.id)))

    app.put('/api/tags/:id/', { schema: { tags: ['tags'], summary: 'Rename or recolour a tag', params: IdParams, body: TagBody, response: { 200: Tag, ...authErrors } } }, async (request, reply) => {
      const { orgId } = identityOf(request)
      const current = await found(orgId, request.params.id)
      const commands = requestCommands(deps, request, reply)
      const { name, color } = request.body
      await withRenamedClaim(commands.run, { scope: SCOPE, orgId, ownerId: current.id, name, previousName: current.name, field: 'name' }, (run) =>
        run(tagDecider, tagStream(current.id), { type: 'UpdateTag', orgId, name, color, at: clock().toISOString() }),
      )
      await commands.settle()
      return tagBody(await found(orgId, current.id))
    })

    app.delete('/api/tags/:id/', { schema: { tags: ['tags'], summary: 'Delete a tag (soft; admins). Its name becomes free', params: IdParams, response: { 200: Message, ...authErrors } } }, async (request, reply) => {
      const { orgId } = requireAdmin(request)
      const current = await found(orgId, request.params.id)
      const commands = requestCommands(deps, request, reply)
      await withReleasedName(commands.run, { scope: SCOPE, orgId, ownerId: current.id, name: current.name }, (run) =>
        run(tagDecider, tagStream(current.id), { type: 'DeleteTag', orgId, at: clock().toISOString() }),
      )
      await commands.settle()
      return { error: false as const, message: 'Tag deleted' }
    })

    app.post('/api/tags/:id/restore/', { schema: { tags: ['tags'], summary: 'Restore a deleted tag (admins); 400 if its name was taken meanwhile', params: IdParams, response: { 200: Tag, ...authErrors } } }, async (request, reply) => {
      const { orgId } = requireAdmin(request)
      const current = await found(orgId, request.params.id)
      const commands = requestCommands(deps, request, reply)
      if (current.is_deleted) {
        await withClaimedName(commands.run, { scope: SCOPE, orgId, ownerId: current.id, name: current.name, field: 'name' }, (run) =>
          run(tagDecider, tagStream(current.id), { type: 'RestoreTag', orgId, at: clock().toISOString() }),
        )
      }
      await commands.settle()
      return tagBody(await found(orgId, current.id))
    })

    app.post(
      '/api/tags/:id/merge/',
      { schema: { tags: ['tags'], summary: 'Merge a tag into another (admins): the source disappears', description: 'Every live account and contact tagged with the source first gets an update event carrying the target instead (once, if it already had the target); then the source is recorded as merged. A merge that failed half-way may be repeated.', params: IdParams, body: z.object({ into: z.uuid() }), response: { 200: Message.extend({ into: Tag }), ...authErrors } } },
      async (request, reply) => {
        requireAdmin(request)
        const { into, position } = await mergeTag(deps, callerOf(request), { sourceId: request.params.id, intoId: request.body.into })
        await settle(deps, reply, position)
        return { error: false as const, message: `Merged into ${into.name}`, into: tagBody(into) }
      },
    )
  }
}
