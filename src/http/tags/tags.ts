import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { createTag } from '../../commands/tag/create-tag.ts'
import { mergeTag } from '../../commands/tag/merge-tag.ts'
import { TAG_COLORS, TAG_NAME_SCOPE, tagDecider, tagStream } from '../../commands/tag/tag.ts'
import { withClaimedName, withRenamedClaim } from '../../commands/unique-name.ts'
import { orNotFound } from '../../errors.ts'
import { allTags, listTags, noUsage, tagOf, tagUsage } from '../../projections/tag/tags.ts'
import type { TagRow, TagUsage } from '../../projections/tag/tags.ts'
import type { Deps } from '../../deps.ts'
import { callerOf, requestCommands, settle } from '../kernel/commands.ts'
import { identityOf, requireAdmin } from '../kernel/auth.ts'
import { ErrorBody, IdParams, Message, PageQuery, authErrors } from '../kernel/schemas/common.ts'

const HEX = /^#[0-9a-fA-F]{6}$/
const NAMED = new Set<string>(TAG_COLORS)

/** A colour: one of the original's named palette (any case, stored lower case) or a #rrggbb hex. */
const Color = z
  .string()
  .trim()
  .transform((value) => (NAMED.has(value.toLowerCase()) ? value.toLowerCase() : value))
  .refine((value) => NAMED.has(value) || HEX.test(value), `Expected one of ${TAG_COLORS.join(', ')}, or a colour like #1f77b4`)

/** The original's TagsSerializer fields, with ours (is_deleted, created_by, updated_at, merged_into). */
const Tag = z.object({
  id: z.uuid(),
  name: z.string(),
  slug: z.string().describe('Derived from the name (lower case, words joined by hyphens)'),
  color: z.string().nullable(),
  description: z.string(),
  is_active: z.boolean().describe('False once archived (DELETE), merged into another tag, or deleted'),
  is_deleted: z.boolean().describe('Deleted before archiving existed: the name was freed and records no longer show it'),
  merged_into: z.uuid().nullable(),
  created_by: z.uuid().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
})

const NOT_COVERED = ['cases', 'api_settings'] as const
const count = z.number().int()
const Usage = z
  .object({ accounts: count, contacts: count, leads: count, opportunities: count, cases: count, tasks: count, api_settings: count })
  .describe('Live records carrying the tag, per kind (the original\'s keys); cases and API settings are not built yet and count 0')
const ListedTag = Tag.extend({ usage: Usage })
const Totals = z.object({ count: count.describe('Every tag of the organization, archived ones included'), active: count, unused: count.describe('Active tags no record carries') })
const TagList = z.object({
  tags_count: count,
  tags: z.array(ListedTag).describe('Every matching tag, by name (not paged)'),
  totals: Totals.describe('Over all tags of the organization, whatever the filters'),
  not_covered: z.array(z.enum(NOT_COVERED)).describe('Usage keys of modules not built yet: they count 0'),
  count: count.describe('Same as tags_count'),
  offset: count,
  limit: count,
  results: z.array(ListedTag).describe('The page of `tags` that limit and offset select'),
})
/** A tag written or read: the tag's fields (as before) and the original's envelope around it. */
const TagAnswer = Tag.extend({ tag: Tag })
const WriteAnswer = TagAnswer.extend({ error: z.literal(false), message: z.string() })

const TagBody = z.object({
  name: z.string().trim().min(1, 'This field may not be blank.').max(100),
  color: Color.nullable().optional(),
  description: z.string().max(2000).optional(),
})
const flag = z.string().optional().describe('`true` (any case) to include them')
const ListQuery = PageQuery.extend({
  name: z.string().optional().describe('Names containing this, any case'),
  search: z.string().optional().describe('Same as name'),
  include_archived: flag.describe('`true` (any case): also archived, merged and deleted tags'),
  include_deleted: flag.describe('Same as include_archived'),
})
const SCOPE = TAG_NAME_SCOPE
const isTrue = (value: string | undefined) => value?.toLowerCase() === 'true'

/** Django's slugify, which derived the original's slugs: ASCII letters, digits, underscores and hyphens; spaces and hyphens joined. */
export const slugOf = (name: string): string =>
  name
    .normalize('NFKD')
    .replace(/[^\w\t\n\f\r -]/g, '')
    .trim()
    .toLowerCase()
    .replace(/[-\s]+/g, '-')
    .replace(/^[-_]+|[-_]+$/g, '')

const tagBody = (row: TagRow) => ({
  id: row.id,
  name: row.name,
  slug: slugOf(row.name),
  color: row.color,
  description: row.description,
  is_active: row.is_active,
  is_deleted: row.is_deleted,
  merged_into: row.merged_into,
  created_by: row.created_by,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
})
const tagAnswer = (row: TagRow) => ({ ...tagBody(row), tag: tagBody(row) })
const usageTotal = (usage: TagUsage) => Object.values(usage).reduce((sum, n) => sum + n, 0)

/**
 * Tags (issue 4; issue 22 gives them the original's shapes): any member reads, creates and renames;
 * archiving (DELETE), restoring and merging are admin-only. Names are unique per organization,
 * case-insensitively, also under concurrency; an archived tag keeps its name, and creating that name
 * again turns it back on.
 */
export function tagRoutes(deps: Deps): FastifyPluginAsyncZod {
  const { db, clock } = deps
  return async (app) => {
    const found = (orgId: string, id: string) => orNotFound(tagOf(db, orgId, id))

    app.get(
      '/api/tags/',
      {
        schema: {
          tags: ['tags'],
          summary: 'Tags of the organization, by name, with their usage and totals',
          description: 'Active tags unless include_archived=true. Every matching tag is in `tags` (the original\'s list, not paged); `results` is the page of it limit and offset select.',
          querystring: ListQuery,
          response: { 200: TagList, ...authErrors },
        },
      },
      async (request) => {
        const { orgId } = identityOf(request)
        const { limit, offset } = request.query
        const name = request.query.name || request.query.search
        const [rows, every, usage] = await Promise.all([listTags(db, orgId, { name, includeInactive: isTrue(request.query.include_archived) || isTrue(request.query.include_deleted) }), allTags(db, orgId), tagUsage(db, orgId)])
        const usageOf = (id: string) => usage.get(id) ?? noUsage()
        const tags = rows.map((row) => ({ ...tagBody(row), usage: { ...usageOf(row.id), cases: 0, api_settings: 0 } }))
        const active = every.filter((row) => row.is_active)
        return {
          tags_count: tags.length,
          tags,
          totals: { count: every.length, active: active.length, unused: active.filter((row) => usageTotal(usageOf(row.id)) === 0).length },
          not_covered: [...NOT_COVERED],
          count: tags.length,
          offset,
          limit,
          results: tags.slice(offset, offset + limit),
        }
      },
    )

    app.post(
      '/api/tags/',
      { schema: { tags: ['tags'], summary: 'Create a tag; an archived tag of that name is turned back on instead (200)', body: TagBody, response: { 200: WriteAnswer, 201: WriteAnswer, ...authErrors } } },
      async (request, reply) => {
        const { orgId } = identityOf(request)
        const { tagId, reactivated, position } = await createTag(deps, callerOf(request), request.body)
        await settle(deps, reply, position)
        const answer = { error: false as const, message: reactivated ? 'Tag reactivated successfully' : 'Tag Created Successfully', ...tagAnswer(await found(orgId, tagId)) }
        return reply.code(reactivated ? 200 : 201).send(answer)
      },
    )

    app.get('/api/tags/:id/', { schema: { tags: ['tags'], summary: 'One tag (also an archived or deleted one)', params: IdParams, response: { 200: TagAnswer, ...authErrors } } }, async (request) =>
      tagAnswer(await found(identityOf(request).orgId, request.params.id)),
    )

    app.put(
      '/api/tags/:id/',
      { schema: { tags: ['tags'], summary: 'Rename, recolour or describe a tag (also an archived one)', params: IdParams, body: TagBody, response: { 200: WriteAnswer, ...authErrors } } },
      async (request, reply) => {
        const { orgId } = identityOf(request)
        const current = await found(orgId, request.params.id)
        const commands = requestCommands(deps, request, reply)
        const { name, color, description } = request.body
        await withRenamedClaim(commands.run, { scope: SCOPE, orgId, ownerId: current.id, name, previousName: current.name, field: 'name' }, (run) =>
          run(tagDecider, tagStream(current.id), { type: 'UpdateTag', orgId, name, color, description, at: clock().toISOString() }),
        )
        await commands.settle()
        return { error: false as const, message: 'Tag Updated Successfully', ...tagAnswer(await found(orgId, current.id)) }
      },
    )

    app.delete(
      '/api/tags/:id/',
      { schema: { tags: ['tags'], summary: 'Archive (turn off) a tag (admins): no longer offered for new records; records keep it, and it keeps its name', params: IdParams, response: { 200: Message, ...authErrors } } },
      async (request, reply) => {
        const { orgId } = requireAdmin(request)
        const current = await found(orgId, request.params.id)
        const commands = requestCommands(deps, request, reply)
        await commands.run(tagDecider, tagStream(current.id), { type: 'ArchiveTag', orgId, at: clock().toISOString() })
        await commands.settle()
        return { error: false as const, message: 'Tag archived successfully' }
      },
    )

    app.post(
      '/api/tags/:id/restore/',
      { schema: { tags: ['tags'], summary: 'Turn an archived (or merged, or deleted) tag back on (admins); 400 if its name was taken meanwhile', params: IdParams, response: { 200: WriteAnswer, 400: ErrorBody, ...authErrors } } },
      async (request, reply) => {
        const { orgId } = requireAdmin(request)
        const current = await found(orgId, request.params.id)
        const commands = requestCommands(deps, request, reply)
        if (!current.is_active) {
          // An archived tag still holds its name (claiming again is a no-op); a deleted one, or one merged before merges kept names, claims it back.
          await withClaimedName(commands.run, { scope: SCOPE, orgId, ownerId: current.id, name: current.name, field: 'name' }, (run) =>
            run(tagDecider, tagStream(current.id), { type: 'RestoreTag', orgId, at: clock().toISOString() }),
          )
        }
        await commands.settle()
        return { error: false as const, message: 'Tag restored successfully', ...tagAnswer(await found(orgId, current.id)) }
      },
    )

    app.post(
      '/api/tags/:id/merge/',
      {
        schema: {
          tags: ['tags'],
          summary: 'Merge a tag into another (admins): its records move to the target, and it is archived',
          description:
            'Every live account, contact, deal and lead tagged with the source gets an update event carrying the target instead (once, if it already had the target); then the source is recorded as merged, which archives it (its name kept; restore turns it back on, empty). The target must be another active tag of the organization. A merge that failed half-way may be repeated.',
          params: IdParams,
          body: z.object({ into: z.uuid() }),
          response: { 200: Message.extend({ tag: Tag, moved: count.describe('Records moved to the target'), into: Tag.describe('Same as tag') }), ...authErrors },
        },
      },
      async (request, reply) => {
        requireAdmin(request)
        const { into, moved, position } = await mergeTag(deps, callerOf(request), { sourceId: request.params.id, intoId: request.body.into })
        await settle(deps, reply, position)
        const target = tagBody(into)
        return { error: false as const, message: `Merged into ${into.name}. ${moved} record(s) moved.`, tag: target, moved, into: target }
      },
    )
  }
}
