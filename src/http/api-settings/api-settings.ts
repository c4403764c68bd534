import type { FastifyReply, FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { changeApiSetting, createApiSetting, deleteApiSetting } from '../../commands/api-setting/write-api-setting.ts'
import type { ApiSettingInput } from '../../commands/api-setting/write-api-setting.ts'
import type { Deps } from '../../deps.ts'
import { orNotFound } from '../../errors.ts'
import { activeMembers, membersByIds } from '../../identity/users.ts'
import { apiSettingOf, listApiSettings } from '../../projections/api-setting/api-settings.ts'
import type { ApiSettingRow } from '../../projections/api-setting/api-settings.ts'
import { requireAdmin } from '../kernel/auth.ts'
import { callerOf, settle } from '../kernel/commands.ts'
import { IdList, ProfileRef, TagRef, profileRefOf, tagRefs } from '../kernel/relations.ts'
import { formList } from '../kernel/schemas/form-values.ts'
import { ErrorBody, IdParams, Message, authErrors } from '../kernel/schemas/common.ts'

const TAGS = ['api-settings']
const errors = { 400: ErrorBody, ...authErrors, 404: ErrorBody } as const

// The original's rule: a scheme, a host with a top-level domain, an optional port, and nothing after (no path, no trailing slash).
const SITE = /^https?:\/\/[A-Za-z0-9.-]+\.[A-Za-z]{2,63}(:[0-9]{2,5})?$/
const Website = z.preprocess(
  (value) => (typeof value === 'string' && value.trim() === '' ? null : typeof value === 'string' ? value.trim() : value),
  z.string().max(255).regex(SITE, 'Please provide a valid URL with schema and without trailing slash - Example: http://google.com').nullable(),
)

const Body = z.object({
  title: z.string().trim().min(1, 'This field may not be blank.').max(1000),
  website: Website.optional(),
  lead_assigned_to: IdList('active profiles the site\'s leads are assigned to').optional(),
  tags: formList(z.array(z.string().trim().min(1).max(100))).describe('Tags the site\'s leads get: ids or names of the organization\'s tags').optional(),
})
const Patch = Body.partial()

const ApiSetting = z.object({
  id: z.uuid(),
  title: z.string(),
  apikey_prefix: z.string().describe('The start of the key, to tell keys apart: the key itself is shown only when created'),
  website: z.string().nullable(),
  created_at: z.string(),
  created_by: ProfileRef.nullable(),
  lead_assigned_to: z.array(ProfileRef),
  tags: z.array(TagRef),
})

/** Settings as the API answers them: people and tags as objects, the key never (its prefix only). */
async function settingViews(deps: Deps, orgId: string, rows: readonly ApiSettingRow[]): Promise<z.infer<typeof ApiSetting>[]> {
  const profileIds = [...new Set(rows.flatMap((row) => [...row.lead_assigned_to, ...(row.created_by ? [row.created_by] : [])]))]
  const [members, tags] = await Promise.all([membersByIds(deps.db, orgId, profileIds), tagRefs(deps.db, orgId, [...new Set(rows.flatMap((row) => row.tags))])])
  const member = new Map(members.map((row) => [row.id, profileRefOf(row)]))
  return rows.map((row) => ({
    id: row.id,
    title: row.title,
    apikey_prefix: row.key_prefix,
    website: row.website,
    created_at: row.created_at.toISOString(),
    created_by: (row.created_by && member.get(row.created_by)) || null,
    lead_assigned_to: row.lead_assigned_to.flatMap((id) => (member.has(id) ? [member.get(id)!] : [])),
    tags: tags.filter((tag) => row.tags.includes(tag.id)),
  }))
}

/**
 * API settings (the original's common/views/settings_views.py, "domains"): keys the organization
 * hands to its websites, each with the members and tags its leads get. Admins only, every route:
 * the original let any member list the keys in clear. A key is shown once, in the create answer.
 */
export function apiSettingRoutes(deps: Deps): FastifyPluginAsyncZod {
  const current = async (request: FastifyRequest, id: string) => orNotFound(apiSettingOf(deps.db, requireAdmin(request).orgId, id))
  const change = async (request: FastifyRequest, reply: FastifyReply, id: string, input: ApiSettingInput) => {
    const { position } = await changeApiSetting(deps, callerOf(request), await current(request, id), input)
    await settle(deps, reply, position)
    return { error: false as const, message: 'API setting Updated successfully' }
  }

  return async (app) => {
    app.get('/api/api-settings/', { schema: { tags: TAGS, summary: 'The organization\'s API settings, newest first, and its active members (admins)', response: { 200: z.object({ error: z.literal(false), api_settings: z.array(ApiSetting), users: z.array(ProfileRef) }), ...errors } } }, async (request) => {
      const { orgId } = requireAdmin(request)
      const [rows, members] = await Promise.all([listApiSettings(deps.db, orgId), activeMembers(deps.db, orgId)])
      return { error: false as const, api_settings: await settingViews(deps, orgId, rows), users: members.map(profileRefOf) }
    })

    app.post('/api/api-settings/', { schema: { tags: TAGS, summary: 'Create an API setting and its key (admins); the raw `apikey` is shown only in this answer', body: Body, response: { 201: Message.extend({ id: z.uuid(), apikey: z.string(), api_setting: ApiSetting }), ...errors } } }, async (request, reply) => {
      const { orgId } = requireAdmin(request)
      const { id, apikey, position } = await createApiSetting(deps, callerOf(request), request.body)
      await settle(deps, reply, position)
      const [view] = await settingViews(deps, orgId, [await orNotFound(apiSettingOf(deps.db, orgId, id))])
      return reply.code(201).send({ error: false as const, message: 'API key added successfully', id, apikey, api_setting: view! })
    })

    app.get('/api/api-settings/:id/', { schema: { tags: TAGS, summary: 'One API setting under `domain`, without its key (admins)', params: IdParams, response: { 200: z.object({ error: z.literal(false), domain: ApiSetting }), ...errors } } }, async (request) => {
      const row = await current(request, request.params.id)
      const [view] = await settingViews(deps, row.org_id, [row])
      return { error: false as const, domain: view! }
    })

    app.put('/api/api-settings/:id/', { schema: { tags: TAGS, summary: 'Replace an API setting (admins): its key stays', description: 'lead_assigned_to and tags left out are cleared, as the original does; a website left out stays.', params: IdParams, body: Body, response: { 200: Message, ...errors } } }, (request, reply) =>
      change(request, reply, request.params.id, { lead_assigned_to: [], tags: [], ...request.body }),
    )

    app.patch('/api/api-settings/:id/', { schema: { tags: TAGS, summary: 'Change the named fields of an API setting (admins)', params: IdParams, body: Patch, response: { 200: Message, ...errors } } }, (request, reply) => change(request, reply, request.params.id, request.body))

    app.delete('/api/api-settings/:id/', { schema: { tags: TAGS, summary: 'Delete an API setting and its key (admins)', params: IdParams, response: { 200: Message, ...errors } } }, async (request, reply) => {
      const row = await current(request, request.params.id)
      const { position } = await deleteApiSetting(deps, callerOf(request), row.id)
      await settle(deps, reply, position)
      return { error: false as const, message: 'API setting deleted successfully' }
    })
  }
}
