import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { portalViewer } from '../../commands/portal/portal-cases.ts'
import type { Deps } from '../../deps.ts'
import { NotFoundError } from '../../errors.ts'
import { listSolutions, solutionOf, suggestSolutions } from '../../projections/solution/solutions.ts'
import { mayAccess } from '../../visibility/policy.ts'
import { IdParams, PageQuery, pageOf } from '../kernel/schemas/common.ts'
import { signedIn } from './portal-caller.ts'
import { PortalArticle, articleView, portalErrors } from './schemas.ts'

const TAGS = ['portal']
const config = { auth: 'portal' as const }
const SUGGESTIONS = 5

/** The knowledge base as customers read it: the published solutions (the visibility policy's `published` rule for a contact), never drafts. */
export function portalArticleRoutes(deps: Deps): FastifyPluginAsyncZod {
  const { db } = deps
  return async (app) => {
    app.get('/api/portal/articles/', {
      config,
      schema: { tags: TAGS, summary: 'Published knowledge-base articles, most recently changed first', querystring: PageQuery.extend({ search: z.string().max(200).optional().describe('Words in the title or text') }), response: { 200: pageOf(PortalArticle), ...portalErrors } },
    }, async (request) => {
      const { caller } = await signedIn(deps, request)
      const { limit, offset, search } = request.query
      const { count, rows } = await listSolutions(db, caller.orgId, { limit, offset, search, seer: portalViewer(caller) })
      return { count, offset, limit, results: rows.map(articleView) }
    })

    app.get('/api/portal/articles/suggest/', {
      config,
      schema: {
        tags: TAGS,
        summary: 'Published articles that may answer a question, best first (before opening a case)',
        description: `Up to ${SUGGESTIONS} articles holding every word of \`q\` (as word prefixes), ranked by how well they match, the title weighing more. Empty for a \`q\` with no word of two letters or more.`,
        querystring: z.object({ q: z.string().max(200).default('') }),
        response: { 200: z.object({ results: z.array(PortalArticle.extend({ score: z.number() })) }), ...portalErrors },
      },
    }, async (request) => {
      const { caller } = await signedIn(deps, request)
      const rows = await suggestSolutions(db, caller.orgId, portalViewer(caller), request.query.q, SUGGESTIONS)
      return { results: rows.map((row) => ({ ...articleView(row), score: row.score })) }
    })

    app.get('/api/portal/articles/:id/', {
      config,
      schema: { tags: TAGS, summary: 'One published knowledge-base article', params: IdParams, response: { 200: PortalArticle, ...portalErrors } },
    }, async (request) => {
      const { caller } = await signedIn(deps, request)
      const row = await solutionOf(db, caller.orgId, request.params.id)
      if (!row || !mayAccess('Solution', { createdBy: row.created_by, assignedTo: [], isPublished: row.is_published }, portalViewer(caller))) throw new NotFoundError('Article not found')
      return articleView(row)
    })
  }
}
