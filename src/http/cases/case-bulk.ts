import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { bulkDeleteCases, bulkUpdateCases } from '../../commands/case/bulk-cases.ts'
import type { Deps } from '../../deps.ts'
import { callerOf, requestCommands } from '../kernel/commands.ts'
import { ErrorBody, authErrors } from '../kernel/schemas/common.ts'
import { CaseBodySchema } from './schemas.ts'

const TAGS = ['cases']
const errors = { 400: ErrorBody, ...authErrors } as const
/** One request changes at most this many cases: each is a command of its own. */
const MAX_BULK = 500

const fields = CaseBodySchema.shape
const Ids = z.array(z.string()).min(1, 'ids required').max(MAX_BULK).describe(`The cases, at most ${MAX_BULK}; an id named twice counts once`)
/** The fields the original's bulk update sets (ALLOWED_FIELDS and ALLOWED_M2M); any other is refused. */
const BulkFields = z.strictObject({ status: fields.status, priority: fields.priority, case_type: fields.case_type, closed_on: fields.closed_on, assigned_to: fields.assigned_to, tags: fields.tags })
const Item = z.object({ id: z.string(), ok: z.boolean(), status: z.number().int().optional().describe('When refused: the status the single request would have answered'), errors: z.unknown().optional().describe('When refused: why, as the single request would have said') })
const outcome = (count: string) => z.object({ error: z.literal(false), [count]: z.number().int(), failed: z.number().int(), results: z.array(Item).describe('One verdict per case, in the order given') })

/** Bulk update and bulk delete of cases (commands/case/bulk-cases.ts): a command per case, a verdict per case. */
export function caseBulkRoutes(deps: Deps): FastifyPluginAsyncZod {
  return async (app) => {
    app.post('/api/cases/bulk/update/', { schema: { tags: TAGS, summary: 'Set the same fields on many cases, each as PATCH would (a verdict per case)', description: 'Fields: status, priority, case_type, closed_on, assigned_to, tags; any other is 400. Each case is its own command: one refused (not visible, not the caller\'s to change, closing without a date, merged) is reported in `results` and the others are still changed.', body: z.object({ ids: Ids, fields: BulkFields }), response: { 200: outcome('updated'), ...errors } } }, async (request, reply) => {
      const commands = requestCommands(deps, request, reply)
      const { done, position: _p, ...rest } = await bulkUpdateCases(deps, callerOf(request), request.body.ids, request.body.fields, commands.session)
      await commands.settle()
      return { error: false as const, updated: done, ...rest }
    })

    app.post('/api/cases/bulk/delete/', { schema: { tags: TAGS, summary: 'Delete many cases, each as DELETE would (a verdict per case)', description: 'Each case is its own command: one refused (not the caller\'s to delete, merged, missing) is reported in `results` and the others are still deleted.', body: z.object({ ids: Ids }), response: { 200: outcome('deleted'), ...errors } } }, async (request, reply) => {
      const commands = requestCommands(deps, request, reply)
      const { done, position: _p, ...rest } = await bulkDeleteCases(deps, callerOf(request), request.body.ids, commands.session)
      await commands.settle()
      return { error: false as const, deleted: done, ...rest }
    })
  }
}
