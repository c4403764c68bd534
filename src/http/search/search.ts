import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { Deps } from '../../deps.ts'
import { viewerOfIdentity } from '../../visibility/policy.ts'
import type { SearchKindSpec } from '../../projections/search/search-documents.ts'
import { MIN_QUERY, searchRecords } from '../../projections/search/queries.ts'
import { identityOf } from '../kernel/auth.ts'
import { ErrorBody, authErrors } from '../kernel/schemas/common.ts'

const TAGS = ['search']
/** The original answers 6 of each kind: the palette shows a handful per group. */
const PER_KIND = 6

const SearchQuery = z.object({
  q: z.string().max(200).optional().describe(`The words to look for; shorter than ${MIN_QUERY} characters (trimmed) finds nothing`),
  limit: z.coerce.number().int().min(1).max(20).default(PER_KIND).describe('Hits per kind of record'),
})
const hitOf = (kinds: readonly SearchKindSpec[]) => z.object({
  type: z.enum(kinds.map((spec) => spec.kind) as [string, ...string[]]).describe('The kind of record; the web app opens /leads/{id}, /pipeline/{id} (deal), /accounts/{id}, /contacts/{id} or /solutions/{id}, and shows no task hits (its palette knows no tasks)'),
  id: z.uuid(),
  title: z.string().describe("The record's name (a lead: its title, else its person's name, else its email)"),
  subtitle: z.string().describe("A lead's company or email, a deal's account or stage, an account's email or industry, a contact's organization or email, a solution's status, a task's status and due date; may be empty"),
})
const answerOf = (kinds: readonly SearchKindSpec[]) => z.object({ query: z.string().describe('The query as searched (trimmed)'), results: z.array(hitOf(kinds)).describe('Best first; at most `limit` of each kind') })

/** GET /api/search/: the ⌘K palette's one call (issue 19), over the kinds the manifests declare (modules/search.ts). */
export function searchRoutes(deps: Deps, kinds: readonly SearchKindSpec[]): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/api/search/',
      {
        schema: {
          tags: TAGS,
          summary: 'Search leads, deals, accounts, contacts, solutions and tasks of the organization at once',
          description:
            "Matches a record whose name starts with the query, whose words (names, emails, companies, descriptions) start with the query's words, or (pg_trgm) whose name contains the query or nearly matches it. Each kind shows only what the caller may open from its list: a non-admin sees the leads, deals and tasks they created or are assigned to; accounts, contacts and solutions are organization-wide. Cases are not searched (not built yet).",
          querystring: SearchQuery,
          response: { 200: answerOf(kinds), 400: ErrorBody, ...authErrors },
        },
      },
      async (request) => {
        const identity = identityOf(request)
        const query = (request.query.q ?? '').trim()
        if (query.length < MIN_QUERY) return { query, results: [] }
        const hits = await searchRecords(deps.db, kinds, viewerOfIdentity(identity), query, request.query.limit)
        return { query, results: hits.map(({ type, id, title, subtitle }) => ({ type, id, title, subtitle })) }
      },
    )
  }
}
