import { randomUUID } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { replacing } from '../../commands/record.ts'
import { SOLUTION_STATUSES, emptySolution, solutionDecider, solutionNames, solutionStreams } from '../../commands/solution/solution.ts'
import type { SolutionCommand, SolutionFields } from '../../commands/solution/solution.ts'
import { orNotFound } from '../../errors.ts'
import { isAdmin } from '../../identity/identity.ts'
import { linkedCases } from '../../projections/case/solution-links.ts'
import { listSolutions, solutionOf, solutionTotals } from '../../projections/solution/solutions.ts'
import type { SolutionRow } from '../../projections/solution/solutions.ts'
import type { Deps } from '../../deps.ts'
import { requestCommands } from '../kernel/commands.ts'
import { pageLinks } from '../kernel/page-links.ts'
import { identityOf, requireAdmin, viewerOf } from '../kernel/auth.ts'
import { optionalText } from '../kernel/relations.ts'
import { ErrorBody, IdParams, PageQuery, authErrors } from '../kernel/schemas/common.ts'
import { formBoolean } from '../kernel/schemas/form-values.ts'
import { Solution, solutionBodies } from './views.ts'

const TAGS = ['solutions']
/** How many linked cases the detail lists at most (the original's). */
const LINKED_CASES_SHOWN = 10
const SolutionDetail = Solution.extend({
  linked_cases: z
    .array(z.object({ id: z.uuid(), name: z.string(), status: z.string(), priority: z.string(), created_at: z.string().nullable() }))
    .describe('The linked live cases the caller may read, newest first, at most 10 (case_count counts them all)'),
})
const SolutionBody = z.object({
  title: z.string().trim().min(1, 'This field may not be blank.').max(255),
  description: optionalText(20_000),
  status: z.enum(SOLUTION_STATUSES).optional().describe('Default draft'),
  is_published: formBoolean(z.boolean()).optional().describe('Default false'),
})
const Totals = z
  .object({ count: z.number().int(), published: z.number().int(), draft: z.number().int(), reviewed: z.number().int(), approved_unpublished: z.number().int() })
  .describe('Of the whole knowledge base, whatever the filters')
const ListQuery = PageQuery.extend({
  title: z.string().optional().describe('Case-insensitive contains'),
  search: z.string().optional().describe('Case-insensitive contains on the title or the description'),
  status: z.string().optional().describe('Exact; an unknown status matches nothing'),
  is_published: z.enum(['true', 'false']).optional(),
})
const SolutionList = z.object({
  count: z.number().int(),
  next: z.string().nullable().describe('URL of the next page, or null on the last'),
  previous: z.string().nullable().describe('URL of the previous page, or null on the first'),
  results: z.array(Solution),
  totals: Totals,
})
const errors = { 400: ErrorBody, ...authErrors, 404: ErrorBody } as const

/**
 * Solutions, the knowledge base of support cases (§4.1, §4.8): bare-data answers (the record
 * itself; validation failures by status), the standard `{count, next, previous, results}` list
 * plus `totals`. Members read, create and edit; deleting needs an admin or the creator;
 * publishing and unpublishing are admin-only.
 */
export function solutionRoutes(deps: Deps): FastifyPluginAsyncZod {
  const { db, clock } = deps
  const at = () => clock().toISOString()
  const found = (orgId: string, id: string) => orNotFound(solutionOf(db, orgId, id))
  const answer = async (orgId: string, row: SolutionRow) => (await solutionBodies(db, orgId, [row]))[0]!
  const run = async (request: FastifyRequest, reply: FastifyReply, id: string, command: SolutionCommand) => {
    const commands = requestCommands(deps, request, reply)
    await commands.run(solutionDecider, solutionStreams.stream(id), command)
    await commands.settle()
  }
  const change = async (request: FastifyRequest, reply: FastifyReply, id: string, changes: Partial<SolutionFields>) => {
    const { orgId } = identityOf(request)
    const current = await found(orgId, id)
    await run(request, reply, current.id, { type: solutionNames.commands.update, orgId, changes, at: at() })
    return answer(orgId, await found(orgId, current.id))
  }

  return async (app) => {
    app.get('/api/cases/solutions/', { schema: { tags: TAGS, summary: 'Solutions, most recently changed first (then by title), with totals of the whole knowledge base', querystring: ListQuery, response: { 200: SolutionList, ...authErrors } } }, async (request) => {
      const { orgId } = identityOf(request)
      const { limit, offset, title, search, status, is_published } = request.query
      const [{ count, rows }, totals] = await Promise.all([
        listSolutions(db, orgId, { limit, offset, title, search, status, isPublished: is_published === undefined ? undefined : is_published === 'true' }),
        solutionTotals(db, orgId),
      ])
      return { count, ...pageLinks(request, { count, limit, offset }), results: await solutionBodies(db, orgId, rows), totals }
    })

    app.post('/api/cases/solutions/', { schema: { tags: TAGS, summary: 'Create a solution; answers 201 with it', body: SolutionBody, response: { 201: Solution, ...errors } } }, async (request, reply) => {
      const identity = identityOf(request)
      const id = randomUUID()
      const fields = replacing(emptySolution(), request.body)
      await run(request, reply, id, { type: solutionNames.commands.create, solutionId: id, orgId: identity.orgId, fields, actorId: identity.profileId, at: at() })
      return reply.code(201).send(await answer(identity.orgId, await found(identity.orgId, id)))
    })

    app.get('/api/cases/solutions/:id/', { schema: { tags: TAGS, summary: 'One solution, with the linked cases the caller may read', params: IdParams, response: { 200: SolutionDetail, ...errors } } }, async (request) => {
      const viewer = viewerOf(request)
      const row = await found(viewer.orgId, request.params.id)
      const [body, cases] = await Promise.all([answer(viewer.orgId, row), linkedCases(db, viewer, row.id, LINKED_CASES_SHOWN)])
      return { ...body, linked_cases: cases.map((c) => ({ ...c, created_at: c.created_at.toISOString() })) }
    })

    app.put('/api/cases/solutions/:id/', { schema: { tags: TAGS, summary: 'Replace a solution (fields left out take their defaults)', params: IdParams, body: SolutionBody, response: { 200: Solution, ...errors } } }, (request, reply) =>
      change(request, reply, request.params.id, replacing(emptySolution(), request.body)),
    )

    app.patch('/api/cases/solutions/:id/', { schema: { tags: TAGS, summary: 'Change the named fields of a solution', params: IdParams, body: SolutionBody.partial(), response: { 200: Solution, ...errors } } }, (request, reply) =>
      change(request, reply, request.params.id, request.body),
    )

    app.delete('/api/cases/solutions/:id/', { schema: { tags: TAGS, summary: 'Delete a solution (admins or its creator); answers 204', params: IdParams, response: { 204: z.null().describe('No content'), ...errors } } }, async (request, reply) => {
      const identity = identityOf(request)
      const current = await found(identity.orgId, request.params.id)
      await run(request, reply, current.id, { type: solutionNames.commands.delete, orgId: identity.orgId, actor: { profileId: identity.profileId, isAdmin: isAdmin(identity) }, at: at() })
      return reply.code(204).send(null)
    })

    for (const [action, is_published] of [['publish', true], ['unpublish', false]] as const) {
      app.post(`/api/cases/solutions/:id/${action}/`, { schema: { tags: TAGS, summary: `${action === 'publish' ? 'Publish' : 'Unpublish'} a solution (admins); answers it`, params: IdParams, response: { 200: Solution, ...errors } } }, (request, reply) => {
        requireAdmin(request)
        return change(request, reply, request.params.id, { is_published })
      })
    }
  }
}
