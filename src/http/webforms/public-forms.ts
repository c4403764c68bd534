import type { FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { readModelsAt } from '../../commands/command-session.ts'
import { submitWebForm } from '../../commands/webform/submit-webform.ts'
import type { Deps } from '../../deps.ts'
import { NotFoundError, ValidationError } from '../../errors.ts'
import { publishedWebForm } from '../../projections/webform/webforms.ts'
import type { WebFormRow } from '../../projections/webform/webforms.ts'
import { alsoLimited } from '../kernel/rate-limit.ts'
import { ErrorBody } from '../kernel/schemas/common.ts'
import { embedPage, embedPagePolicy, embedScript } from './embed.ts'

const TAGS = ['webforms']
const FormParams = z.object({ org_id: z.uuid(), form_id: z.uuid() })
const notFound = { 404: ErrorBody }
const text = (type: string, description: string) => ({ description, content: { [type]: { schema: z.string() } } })

const SubmitBody = z
  .record(z.string(), z.unknown())
  .describe(
    "The answers by field key (what an HTML form posts, urlencoded or JSON; keys the form does not have are ignored), `consent` (`on` or true: required when the form shows a consent box), `idempotency_key` (or the Idempotency-Key header; a repeat with the same key is the same submission), `page_url` (the page the form was on; the query string is dropped). `website_url` is the honeypot: people never see it, and a post that fills it creates nothing.",
  )
const Submitted = z.object({ error: z.literal(false), message: z.string().describe("The form's success message"), submission_id: z.uuid() })

/** The page a post came from, as an origin and path only: a query string may carry someone's data. */
function pageOf(value: unknown): string | null {
  if (typeof value !== 'string' || value.length > 2000) return null
  try {
    const url = new URL(value)
    return url.protocol === 'http:' || url.protocol === 'https:' ? `${url.origin}${url.pathname}` : null
  } catch {
    return null
  }
}

/** The body's `idempotency_key`, else the Idempotency-Key header; none is a new submission each time. */
function idempotencyKeyOf(field: unknown, header: unknown): string | undefined {
  const key = field ?? header
  if (key === undefined || key === '') return undefined
  if (typeof key !== 'string' || key.length > 200) throw new ValidationError({ idempotency_key: ['Expected a string of at most 200 characters.'] })
  return key
}

/**
 * A browser's Origin, unless it is this service's own embed page (whose framing its policy limits
 * to the allowed sites instead). `null` (a sandboxed frame, a file) stays: it is no allowed site.
 */
function foreignOrigin(request: FastifyRequest): string | null {
  const origin = request.headers.origin
  if (typeof origin !== 'string') return null
  try {
    return new URL(origin).host === request.host ? null : origin
  } catch {
    return origin
  }
}

/**
 * The public side of web forms (docs/web-forms.md): no credential; the organization is the one in
 * the path, and the form must be that organization's and published, or the answer is 404 (an
 * unpublished, deleted or other organization's form looks exactly like a missing one). Submissions
 * are limited per client IP and form, then per form. Answers are personal data: nothing here logs them.
 */
export function publicFormRoutes(deps: Deps): FastifyPluginAsyncZod {
  const max = deps.config.authRateLimitMax
  const served = async (params: z.infer<typeof FormParams>): Promise<WebFormRow> => {
    const form = await publishedWebForm(deps.db, params.org_id, params.form_id)
    if (!form) throw new NotFoundError('Web form not found')
    return form
  }
  return async (app) => {
    const perForm = alsoLimited(app, max * 60, (request) => `webform|${(request.params as { form_id?: string }).form_id}`)

    app.get(
      '/api/public/forms/:org_id/:form_id/embed.js',
      { config: { auth: 'public' }, schema: { tags: TAGS, summary: 'The script that draws a published web form where a page includes it (no sign-in)', description: 'Include it with `<script src="…/embed.js"></script>` where the form should appear (or in an element with id `crm-webform-<form id>`). Loadable from any site.', security: [], params: FormParams, response: { 200: text('application/javascript', 'The script'), ...notFound } } },
      async (request, reply) => {
        const form = await served(request.params)
        return reply.type('application/javascript; charset=utf-8').header('cross-origin-resource-policy', 'cross-origin').header('cache-control', 'public, max-age=60').send(embedScript(form))
      },
    )

    app.get(
      '/api/public/forms/:org_id/:form_id/embed/',
      { config: { auth: 'public' }, schema: { tags: TAGS, summary: 'A page holding only a published web form, for an iframe (no sign-in)', description: 'Framed only by the form\'s allowed origins (any site when it lists none).', security: [], params: FormParams, response: { 200: text('text/html', 'The page'), ...notFound } } },
      async (request, reply) => {
        const form = await served(request.params)
        reply.removeHeader('x-frame-options')
        return reply.type('text/html; charset=utf-8').header('content-security-policy', embedPagePolicy(form)).header('cache-control', 'public, max-age=60').send(embedPage(form))
      },
    )

    app.post(
      '/api/public/forms/:org_id/:form_id/submit/',
      {
        config: { auth: 'public', rateLimit: { max: max * 2, timeWindow: 60_000, hook: 'onRequest' as const, keyGenerator: (request: FastifyRequest) => `${request.ip}|${(request.params as { form_id?: string }).form_id}` } },
        // Any page's script may read every answer (errors and 429s included): they carry nothing but the form's own messages, and the allowed origins are enforced by refusing (403), not by hiding the answer.
        onRequest: async (_request, reply) => {
          reply.header('access-control-allow-origin', '*')
        },
        preValidation: [perForm],
        schema: {
          tags: TAGS,
          summary: 'Submit a published web form: a lead is created (no sign-in)',
          description: `Spam is handled in order: the honeypot (filled: answered like a success, recorded as quarantined, no lead), then AUTH_RATE_LIMIT_MAX × 2 posts a minute per client IP and form and × 60 per form (429 with Retry-After). A browser's Origin must be one of the form's allowed origins when it lists any (403). Bad answers are 400 naming each field key. A lead that already has the email gets the submission (no second lead, and the same answer). Answers are never logged.`,
          security: [],
          params: FormParams,
          body: SubmitBody,
          response: { 200: Submitted, 400: ErrorBody, 403: ErrorBody, ...notFound, 429: ErrorBody },
        },
      },
      async (request) => {
        const origin = foreignOrigin(request)
        const { submissionId, form, position } = await submitWebForm(deps, {
          orgId: request.params.org_id,
          formId: request.params.form_id,
          body: request.body,
          idempotencyKey: idempotencyKeyOf(request.body.idempotency_key, request.headers['idempotency-key']),
          sourcePage: pageOf(request.body.page_url) ?? pageOf(request.headers.referer),
          origin,
          requestId: request.id,
        })
        // Waited for, so the organization's next read shows it, but not reported: a log position tells a stranger how busy the whole service is.
        await readModelsAt(deps, position)
        return { error: false as const, message: form.success_message, submission_id: submissionId }
      },
    )
  }
}
