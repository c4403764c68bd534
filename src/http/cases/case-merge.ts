import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { mergeCase, unmergeCase } from '../../commands/case/merge-case.ts'
import { visibleCase } from '../../commands/case/write-case.ts'
import type { Caller } from '../../commands/caller.ts'
import type { Deps } from '../../deps.ts'
import { ForbiddenError, orNotFound } from '../../errors.ts'
import { caseOf } from '../../projections/case/queries.ts'
import { mergeOf, survivingCase } from '../../projections/case/merges.ts'
import { viewerOf } from '../kernel/auth.ts'
import { callerOf, requestCommands } from '../kernel/commands.ts'
import { ErrorBody, IdParams, authErrors } from '../kernel/schemas/common.ts'
import { Case, casesOf } from './case-views.ts'

const TAGS = ['cases']
const errors = { 400: ErrorBody, ...authErrors, 404: ErrorBody } as const

/** Where the web app sends a reader of a ticket (the original's case_link). */
const ticketLink = (id: string) => `/tickets/${id}`

export const MergedRedirect = z.object({
  redirect_to: z.uuid().describe('The case it now lives in: the survivor of its merge, following merges of merges'),
  merged_into: z.uuid().describe('The case it was merged into'),
  source_case_id: z.uuid(),
  source_case_name: z.string(),
})

/**
 * GET of a merged duplicate (unless show_merged=true): where it went, for whoever may read it or
 * the case it now lives in (its watchers moved there). Undefined when the case is not merged.
 */
export async function mergedRedirect(db: Deps['db'], caller: Caller, id: string): Promise<z.infer<typeof MergedRedirect> | undefined> {
  const merge = await mergeOf(db, caller.orgId, id)
  if (!merge) return undefined
  const survivor = (await survivingCase(db, caller.orgId, id)) ?? merge.into_id
  const source = await visibleCase(db, caller, id).catch(async (error: unknown) => {
    if (!(error instanceof ForbiddenError)) throw error
    await visibleCase(db, caller, survivor)
    return orNotFound(caseOf(db, caller.orgId, id))
  })
  return { redirect_to: survivor, merged_into: merge.into_id, source_case_id: id, source_case_name: source.name }
}

/**
 * Merging a duplicate ticket into another and undoing it (the original's merge_views.py and
 * unmerge_views.py; commands/case/merge.ts has the rules). Admin, or the creator of both.
 */
export function caseMergeRoutes(deps: Deps): FastifyPluginAsyncZod {
  const { db, clock } = deps
  const caseBody = async (viewer: ReturnType<typeof viewerOf>, id: string) => (await casesOf(deps, viewer, [await orNotFound(caseOf(db, viewer.orgId, id))], clock()))[0]!

  return async (app) => {
    app.post('/api/cases/:id/merge/:into_id/', { schema: { tags: TAGS, summary: 'Merge a duplicate case into another (admin, or the creator of both)', description: "Every comment, attachment and watcher of the duplicate moves to the other, and its id (and those merged into it before) reaches the other from now on; it becomes Duplicate, closed today, read-only until unmerged. 400: into itself, already merged elsewhere, or into a case that is merged itself; 404: either case not a live case of the caller's organization. Merging again into the same case answers already_merged.", params: IdParams.extend({ into_id: z.uuid() }), response: { 200: z.object({ error: z.literal(false), message: z.string(), already_merged: z.boolean().optional(), target_case: Case, source_case_id: z.uuid(), redirected_url: z.string() }), ...errors } } }, async (request, reply) => {
      const { id, into_id } = request.params
      const commands = requestCommands(deps, request, reply)
      const { merged } = await mergeCase(deps, callerOf(request), id, into_id, commands.session)
      await commands.settle()
      const target_case = await caseBody(viewerOf(request), into_id)
      return { error: false as const, message: merged ? 'Tickets merged' : 'Tickets already merged.', ...(!merged && { already_merged: true }), target_case, source_case_id: id, redirected_url: ticketLink(into_id) }
    })

    app.post('/api/cases/:id/unmerge/', { schema: { tags: TAGS, summary: 'Undo the merge of a duplicate case (admin, or the creator of both)', description: 'Both cases get back exactly what the merge moved (with the edits made since), and the duplicate its status and closing date from before. 400 when it is not merged, or when the case it was merged into has since been merged itself (unmerge that first).', params: IdParams, response: { 200: z.object({ error: z.literal(false), message: z.string(), source_case: Case, unmerged_from: z.uuid() }), ...errors } } }, async (request, reply) => {
      const commands = requestCommands(deps, request, reply)
      const { from } = await unmergeCase(deps, callerOf(request), request.params.id, commands.session)
      await commands.settle()
      return { error: false as const, message: 'Tickets unmerged', source_case: await caseBody(viewerOf(request), request.params.id), unmerged_from: from }
    })
  }
}
