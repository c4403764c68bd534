import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { answerSurvey, openSurvey } from '../../commands/case/csat-surveys.ts'
import type { Deps } from '../../deps.ts'
import { csatAggregate } from '../../projections/case/csat.ts'
import { identityOf } from '../kernel/auth.ts'
import { settle } from '../kernel/commands.ts'
import { perIpFirst } from '../kernel/rate-limit.ts'
import { ErrorBody, authErrors } from '../kernel/schemas/common.ts'

const Answer = { rating: z.number().int().nullable(), comment: z.string(), responded_at: z.string().nullable().describe('When it was first answered') }
const Survey = z.object({
  case_subject: z.string(),
  case_closed_on: z.string().nullable(),
  org_name: z.string(),
  agent_name: z.string().describe("The case's first assignee's email, or 'your support team'"),
  ...Answer,
  edit_window_closes_at: z.string().nullable().describe('Until when the answer may be changed (a day after the first answer)'),
})
const TokenParams = z.object({ token: z.string().max(200) })
const Rating = z.union([z.number(), z.string().trim().regex(/^\d+$/, 'rating must be an integer 1-5').transform(Number)]).describe('1 (poor) to 5 (great)')
const AnswerBody = z.object({ rating: Rating, comment: z.string().max(5000).nullable().optional() })
const publicErrors = { 400: ErrorBody, 404: ErrorBody, 409: ErrorBody, 410: ErrorBody, 429: ErrorBody } as const

/**
 * Satisfaction surveys (the original's csat_views.py): the organization's aggregate, and the public
 * survey page's link (no sign-in: the signed token is the credential, commands/case/csat.ts; 400
 * for a malformed or forged one, 410 once the survey is gone or expired), rate-limited per client IP
 * as the other public routes.
 */
export function caseCsatRoutes(deps: Deps): FastifyPluginAsyncZod {
  const config = { auth: 'public' as const, rateLimit: perIpFirst(deps.config.authRateLimitMax * 6) }
  return async (app) => {
    app.get('/api/cases/csat/aggregate/', { schema: { tags: ['cases'], summary: "The organization's answered surveys: mean rating, how many, and how many of each rating 1–5", response: { 200: z.object({ average: z.number().nullable(), count: z.number().int(), distribution: z.record(z.string(), z.number().int()) }), ...authErrors } } }, async (request) =>
      csatAggregate(deps.db, identityOf(request).orgId),
    )

    app.get('/api/public/csat/:token/', { config, schema: { tags: ['public'], summary: "A closed case's satisfaction survey through its link (no sign-in)", security: [], params: TokenParams, response: { 200: Survey, ...publicErrors } } }, async (request) => openSurvey(deps, request.params.token))

    app.post('/api/public/csat/:token/', { config, schema: { tags: ['public'], summary: 'Answer a satisfaction survey through its link (no sign-in): a rating of 1 to 5 and a comment', description: 'The answer may be changed for a day after the first one (409 after).', security: [], params: TokenParams, body: AnswerBody, response: { 200: z.object(Answer), ...publicErrors } } }, async (request, reply) => {
      const { answer, position } = await answerSurvey(deps, request.params.token, { rating: request.body.rating, comment: request.body.comment ?? '' })
      await settle(deps, reply, position)
      return { rating: answer.rating, comment: answer.comment, responded_at: answer.responded_at }
    })
  }
}
