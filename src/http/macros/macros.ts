import type { FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { MACRO_SCOPES } from '../../commands/macro/macro.ts'
import { PLACEHOLDERS, unknownPlaceholders } from '../../commands/macro/placeholders.ts'
import { applyMacro, changeMacro, createMacro, deleteMacro } from '../../commands/macro/write-macro.ts'
import type { Deps } from '../../deps.ts'
import { orNotFound } from '../../errors.ts'
import { membersByIds } from '../../identity/users.ts'
import { listMacros, macroOf } from '../../projections/macro/macros.ts'
import type { MacroRow } from '../../projections/macro/macros.ts'
import { viewerOf } from '../kernel/auth.ts'
import { callerOf, settle } from '../kernel/commands.ts'
import { ErrorBody, IdParams, authErrors } from '../kernel/schemas/common.ts'
import { formBoolean } from '../kernel/schemas/form-values.ts'

const TAGS = ['macros']
const errors = { 400: ErrorBody, ...authErrors, 404: ErrorBody } as const
const NoContent = z.null().describe('No content')

const Title = z.string().trim().min(1, 'This field may not be blank.').max(255)
const Text = z.string().trim().min(1, 'This field may not be blank.').max(20_000)
const Fields = {
  title: Title,
  body: Text,
  scope: z.enum(MACRO_SCOPES, "scope must be 'org' or 'personal'.").describe('`org`: shared with everyone, managed by an admin; `personal`: the caller\'s own').optional(),
  is_active: formBoolean(z.boolean()).optional(),
}
const Body = z.object(Fields)
const Patch = z.object(Fields).partial()

const Macro = z.object({
  id: z.uuid(),
  title: z.string(),
  body: z.string(),
  scope: z.enum(MACRO_SCOPES),
  owner: z.uuid().nullable().describe('The profile a personal macro belongs to; null for an org macro'),
  owner_name: z.string().nullable().describe("The owner's email"),
  is_active: z.boolean(),
  usage_count: z.number().int(),
  unknown_placeholders: z.array(z.string()).describe('`%token%`s of the body this service does not fill: they stay literal when applied'),
  created_at: z.string(),
  updated_at: z.string(),
})
const Placeholder = z.object({ token: z.string(), resolves: z.string() })
const Totals = z.object({ count: z.number().int(), org: z.number().int(), personal: z.number().int(), inactive: z.number().int(), with_unknown_placeholders: z.number().int() })

async function macroViews(deps: Deps, orgId: string, rows: readonly MacroRow[]): Promise<z.infer<typeof Macro>[]> {
  const owners = await membersByIds(deps.db, orgId, [...new Set(rows.flatMap((row) => (row.owner ? [row.owner] : [])))])
  const email = new Map(owners.map((member) => [member.id, member.email]))
  return rows.map((row) => ({
    id: row.id,
    title: row.title,
    body: row.body,
    scope: row.scope,
    owner: row.owner,
    owner_name: (row.owner && email.get(row.owner)) || null,
    is_active: row.is_active,
    usage_count: row.usage_count,
    unknown_placeholders: unknownPlaceholders(row.body),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  }))
}

/** The stat cards: over everything the caller sees, whatever the list's filters. */
const totalsOf = (rows: readonly MacroRow[]): z.infer<typeof Totals> => ({
  count: rows.length,
  org: rows.filter((row) => row.scope === 'org').length,
  personal: rows.filter((row) => row.scope === 'personal').length,
  inactive: rows.filter((row) => !row.is_active).length,
  with_unknown_placeholders: rows.filter((row) => unknownPlaceholders(row.body).length > 0).length,
})

/**
 * Macros (the original's backend/macros/): canned replies, org-wide (admins manage them) or
 * personal (each member's own, seen by nobody else), applied to a case by POST render/. These are
 * the original's "bare serializer data" routes: the macro itself, validation failures by status.
 */
export function macroRoutes(deps: Deps): FastifyPluginAsyncZod {
  const view = async (request: FastifyRequest, id: string) => {
    const viewer = viewerOf(request)
    const [macro] = await macroViews(deps, viewer.orgId, [await orNotFound(macroOf(deps.db, viewer, id))])
    return macro!
  }

  return async (app) => {
    app.get('/api/macros/', { schema: { tags: TAGS, summary: "The caller's macros: the organization's and their own personal ones, last edited first; totals over all of them and the placeholders a body may use", querystring: z.object({ active: z.enum(['true', 'false', 'True', 'False']).optional().describe('Only macros turned on (true) or off (false)'), search: z.string().optional().describe('Title or body contains, case-insensitive') }), response: { 200: z.object({ results: z.array(Macro), totals: Totals, placeholders: z.array(Placeholder) }), ...errors } } }, async (request) => {
      const viewer = viewerOf(request)
      const { active, search } = request.query
      const { rows, all } = await listMacros(deps.db, viewer, { active: active === undefined ? undefined : active.toLowerCase() === 'true', search: search?.trim() || undefined })
      return { results: await macroViews(deps, viewer.orgId, rows), totals: totalsOf(all), placeholders: PLACEHOLDERS.map((p) => ({ ...p })) }
    })

    app.post('/api/macros/', { schema: { tags: TAGS, summary: 'Create a macro: an org macro (the default scope; by an admin) or a personal one (any member); answers 201 with it', body: Body, response: { 201: Macro, ...errors } } }, async (request, reply) => {
      const { title, body, scope = 'org', is_active = true } = request.body
      const { id, position } = await createMacro(deps, callerOf(request), { title, body, scope, is_active })
      await settle(deps, reply, position)
      return reply.code(201).send(await view(request, id))
    })

    app.get('/api/macros/:id/', { schema: { tags: TAGS, summary: 'One macro the caller sees', params: IdParams, response: { 200: Macro, ...errors } } }, (request) => view(request, request.params.id))

    app.put('/api/macros/:id/', { schema: { tags: TAGS, summary: "Replace a macro's title and body (and scope, is_active when given): an org macro by an admin, a personal one by its owner", params: IdParams, body: Body, response: { 200: Macro, ...errors } } }, async (request, reply) => {
      await settle(deps, reply, await changeMacro(deps, callerOf(request), request.params.id, request.body))
      return view(request, request.params.id)
    })

    app.patch('/api/macros/:id/', { schema: { tags: TAGS, summary: "Change a macro's named fields: an org macro by an admin, a personal one by its owner", params: IdParams, body: Patch, response: { 200: Macro, ...errors } } }, async (request, reply) => {
      await settle(deps, reply, await changeMacro(deps, callerOf(request), request.params.id, request.body))
      return view(request, request.params.id)
    })

    app.delete('/api/macros/:id/', { schema: { tags: TAGS, summary: 'Turn an org macro off (by an admin), or delete a personal one (by its owner); answers 204', params: IdParams, response: { 204: NoContent, ...errors } } }, async (request, reply) => {
      await settle(deps, reply, await deleteMacro(deps, callerOf(request), request.params.id))
      return reply.code(204).send(null)
    })

    app.post('/api/macros/:id/render/', { schema: { tags: TAGS, summary: 'Apply a macro to a case: its body with the placeholders filled from the case, and the tokens it could not fill (left as written); counts a use', params: IdParams, body: z.object({ case_id: z.uuid('Expected the id of a case.') }), response: { 200: z.object({ rendered_body: z.string(), unknown_placeholders: z.array(z.string()) }), ...errors } } }, async (request, reply) => {
      const { rendered_body, unknown_placeholders, position } = await applyMacro(deps, callerOf(request), { macroId: request.params.id, caseId: request.body.case_id })
      await settle(deps, reply, position)
      return { rendered_body, unknown_placeholders }
    })
  }
}
