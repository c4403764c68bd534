import type { FastifyReply, FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { linkCaseSolution } from '../../commands/case/link-solution.ts'
import { SOLUTION_STATUSES } from '../../commands/solution/solution.ts'
import { visibleCase } from '../../commands/case/write-case.ts'
import type { Deps } from '../../deps.ts'
import { ValidationError } from '../../errors.ts'
import type { CaseRecord } from '../../projections/case/queries.ts'
import { linkedSolutions } from '../../projections/case/solution-links.ts'
import { publishedSolutionsMatching } from '../../projections/solution/solutions.ts'
import type { SolutionRow } from '../../projections/solution/solutions.ts'
import { callerOf, requestCommands } from '../kernel/commands.ts'
import { ErrorBody, IdParams, authErrors } from '../kernel/schemas/common.ts'
import { Solution, solutionBodies } from '../solutions/views.ts'

const TAGS = ['cases']
const errors = { 400: ErrorBody, ...authErrors, 404: ErrorBody } as const
const REQUIRED = 'solution_id required'
const SolutionId = z.string({ error: REQUIRED }).trim().min(1, REQUIRED).describe('A solution of the organization (a malformed or unknown id answers 404)')
const ItemParams = IdParams.extend({ solution_pk: z.uuid() })
const Linked = z.object({ error: z.literal(false), solution: Solution })
const NoContent = z.null().describe('No content')

/** The original's suggester: 5 by default, 1 to 20; a limit that is no integer is the default. */
const SUGGESTIONS = { default: 5, max: 20 }
const limitOf = (given: string | undefined): number => (given !== undefined && /^\s*[+-]?\d+\s*$/.test(given) ? Math.max(1, Math.min(SUGGESTIONS.max, Number(given))) : SUGGESTIONS.default)
const SuggestionsQuery = z.object({
  q: z.string().optional().describe('Case-insensitive contains on the title or the description; blank: words of the case itself'),
  limit: z.string().optional().transform(limitOf).describe('Default 5, at most 20 (fewer than 1 is 1; not an integer: the default)'),
})
const Suggestion = z.object({
  id: z.uuid(),
  title: z.string(),
  snippet: z.string().describe('The description, trimmed, cut to 200 characters (…)'),
  body: z.string().describe('The whole description, to paste without a second request'),
  updated_at: z.string(),
  // The phone app reads a suggestion as a solution (its Solution.fromJson): these make it one.
  description: z.string().describe('The whole description, as in the solution'),
  status: z.enum(SOLUTION_STATUSES),
  is_published: z.literal(true),
})
const Suggestions = z.object({
  results: z.array(Suggestion).describe('As the original and the web app name them'),
  suggestions: z.array(Suggestion).describe('The same list, under the key the phone app reads'),
  count: z.number().int(),
  q: z.string().describe('The query as used (trimmed)'),
})

const SNIPPET_MAX = 200
/** Counted in characters (code points), as the original's. */
const snippetOf = (text: string | null): string => {
  const chars = [...(text ?? '').trim()]
  return chars.length <= SNIPPET_MAX ? chars.join('') : `${chars.slice(0, SNIPPET_MAX - 1).join('').trimEnd()}…`
}

/** Words of the case's name, then its description, that say something (4 letters or digits at least, `-` and `_` kept), lowercased: at most 6. */
function seedTerms(kase: Pick<CaseRecord, 'name' | 'description'>): string[] {
  const words = [kase.name, kase.description ?? ''].flatMap((text) => text.split(/\s+/))
  return words.map((word) => word.replace(/[^\p{L}\p{N}_-]/gu, '').toLowerCase()).filter((word) => [...word].length >= 4).slice(0, 6)
}

/**
 * The published solutions that may answer a case: those matching `q`, or else matching any of the
 * case's own words, or else (nothing to match, or nothing matched) the most recently changed, so the
 * agent's panel is never empty on first focus.
 */
async function suggestionsFor(db: Deps['db'], kase: CaseRecord, q: string, limit: number): Promise<SolutionRow[]> {
  if (q) return publishedSolutionsMatching(db, kase.org_id, [q], limit)
  const terms = seedTerms(kase)
  const seeded = terms.length ? await publishedSolutionsMatching(db, kase.org_id, terms, limit) : []
  return seeded.length ? seeded : publishedSolutionsMatching(db, kase.org_id, [], limit)
}

/**
 * Knowledge-base solutions on a case (the original's CaseSolutionLinkView and SolutionSuggestionsView):
 * linking and unlinking take the case's write access (admin, creator, assignee); the case detail
 * lists what is linked (cases.ts). The original answered 405 to POST on the item path and DELETE on
 * the collection path; here each does what its other path does.
 */
export function caseSolutionRoutes(deps: Deps): FastifyPluginAsyncZod {
  const { db } = deps
  const link = async (request: FastifyRequest, reply: FastifyReply, caseId: string, solutionId: string) => {
    const caller = callerOf(request)
    const commands = requestCommands(deps, request, reply)
    const { solution: row, changed } = await linkCaseSolution(deps, caller, caseId, solutionId, true, commands.session)
    await commands.settle()
    // After the settle: its case_count counts this case.
    const [solution] = await solutionBodies(db, caller.orgId, [row])
    return reply.code(changed ? 201 : 200).send({ error: false as const, solution: solution! })
  }
  const unlink = async (request: FastifyRequest, reply: FastifyReply, caseId: string, solutionId: string) => {
    const commands = requestCommands(deps, request, reply)
    await linkCaseSolution(deps, callerOf(request), caseId, solutionId, false, commands.session)
    await commands.settle()
    return reply.code(204).send(null)
  }

  return async (app) => {
    const linkSummary = 'Link a solution to a case (admin, creator or assignee); answers it, 201 when newly linked, 200 when already'
    app.post('/api/cases/:id/solutions/', { schema: { tags: TAGS, summary: linkSummary, params: IdParams, body: z.object({ solution_id: SolutionId }), response: { 200: Linked, 201: Linked, ...errors } } }, (request, reply) =>
      link(request, reply, request.params.id, request.body.solution_id),
    )
    app.post('/api/cases/:id/solutions/:solution_pk/', { schema: { tags: TAGS, summary: `${linkSummary}. The original answered 405 here; this links the solution of the path`, params: ItemParams, response: { 200: Linked, 201: Linked, ...errors } } }, (request, reply) =>
      link(request, reply, request.params.id, request.params.solution_pk),
    )

    const unlinkSummary = 'Unlink a solution from a case (admin, creator or assignee); answers 204, also when it was not linked'
    app.delete('/api/cases/:id/solutions/:solution_pk/', { schema: { tags: TAGS, summary: unlinkSummary, params: ItemParams, response: { 204: NoContent, ...errors } } }, (request, reply) =>
      unlink(request, reply, request.params.id, request.params.solution_pk),
    )
    app.delete(
      '/api/cases/:id/solutions/',
      { schema: { tags: TAGS, summary: `${unlinkSummary}. The original answered 405 here; this unlinks the solution_id of the body or the query`, params: IdParams, querystring: z.object({ solution_id: z.string().optional() }), body: z.object({ solution_id: z.string().optional() }).nullish(), response: { 204: NoContent, ...errors } } },
      async (request, reply) => {
        const solutionId = (request.body?.solution_id ?? request.query.solution_id)?.trim()
        if (solutionId) return unlink(request, reply, request.params.id, solutionId)
        // Another organization's case, or one the caller may not see, answers as such before the missing id.
        await visibleCase(db, callerOf(request), request.params.id)
        throw new ValidationError({ solution_id: [REQUIRED] })
      },
    )

    app.get('/api/cases/:id/solution-suggestions/', { schema: { tags: TAGS, summary: 'Published solutions that may answer a case (whoever may read it), most recently changed first', description: 'With q: those whose title or description contains it. Without: those containing any of the first six words (4 characters or more) of the case\'s name and description; when none does, the most recently changed.', params: IdParams, querystring: SuggestionsQuery, response: { 200: Suggestions, ...errors } } }, async (request) => {
      // The original only checked that the case is its organization's: anyone could read suggestions seeded by a case they may not open. Here, its read access.
      const kase = await visibleCase(db, callerOf(request), request.params.id)
      const q = (request.query.q ?? '').trim()
      const rows = await suggestionsFor(db, kase, q, request.query.limit)
      const results = rows.map((row) => ({ id: row.id, title: row.title, snippet: snippetOf(row.description), body: row.description ?? '', updated_at: row.updated_at.toISOString(), description: row.description ?? '', status: row.status, is_published: true as const }))
      return { results, suggestions: results, count: results.length, q }
    })
  }
}

/** The live solutions a case links, as the solutions' routes answer them (the case detail's `solutions`). */
export async function caseSolutionsView(db: Deps['db'], orgId: string, caseId: string) {
  return solutionBodies(db, orgId, await linkedSolutions(db, orgId, caseId))
}
