import type { FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { ForbiddenError, UnauthorizedError } from '../../errors.ts'
import { createAuthenticator } from '../../identity/authenticate.ts'
import type { Identity } from '../../identity/identity.ts'
import { API_KEY_PREFIX, hashSecret } from '../../identity/secrets.ts'
import type { Deps } from '../../deps.ts'
import { callerOf, settle } from '../kernel/commands.ts'
import { createLead } from '../../commands/lead/create-lead.ts'
import { alsoLimited, perIpFirst } from '../kernel/rate-limit.ts'
import { ErrorBody } from '../kernel/schemas/common.ts'
import { CaptureBody } from './capture-schemas.ts'
import { Created } from '../kernel/schemas/records.ts'

/** The API key a form sends: the `apikey` field, else the `Token` header (§5). Read before validation, for the per-key budget. */
function keyOf(request: FastifyRequest): string | undefined {
  const body = request.body
  const field = typeof body === 'object' && body !== null && 'apikey' in body && typeof body.apikey === 'string' ? body.apikey : undefined
  const header = typeof request.headers.token === 'string' ? request.headers.token : undefined
  return (field ?? header)?.trim() || undefined
}

const WRONG_KEY = "Expected the organization's API key, in the apikey field or the Token header"

const description = [
  'Public web capture: no sign-in; the organization is the one whose API key (§5) the request carries, in the `apikey` field or the `Token` header. A missing key is 401; a wrong, rotated or non-API key, or an inactive organization, is 403.',
  'The lead is created like POST /api/leads/ (same field rules, email unique per organization) with no creator and no assignee, status `assigned` (the module default), source `other` unless given: admins see it and assign it.',
  'Rate limits: AUTH_RATE_LIMIT_MAX × 2 requests a minute per client IP, and AUTH_RATE_LIMIT_MAX × 60 per key; beyond, 429 with Retry-After.',
  'The key also reads the whole organization (it is read-only elsewhere): put it in a server-side form handler, not in a public page.',
].join(' ')

/** POST /api/leads/create-from-site/ (§4.8; issue 7): a website's contact form becomes a lead. */
export function leadCaptureRoutes(deps: Deps): FastifyPluginAsyncZod {
  // The auth plugin's own API-key lookup; JWTs are never accepted here.
  const authenticate = createAuthenticator({ ...deps, verifyJwt: () => undefined })

  /** The organization the key belongs to, as the auth plugin would identify it; checked before the body, so a keyless request is 401 whatever it sends. */
  async function siteIdentity(request: FastifyRequest): Promise<Identity> {
    const key = keyOf(request)
    if (!key) throw new UnauthorizedError(WRONG_KEY)
    if (!key.startsWith(API_KEY_PREFIX)) throw new ForbiddenError(WRONG_KEY)
    const identity = await authenticate({ token: key }).catch((error: unknown) => {
      throw error instanceof UnauthorizedError ? new ForbiddenError(WRONG_KEY) : error
    })
    request.identity = identity
    return identity
  }

  return async (app) => {
    const max = deps.config.authRateLimitMax
    const perKey = alsoLimited(app, max * 60, (request) => hashSecret(keyOf(request) ?? '').toString('hex'))
    app.post(
      '/api/leads/create-from-site/',
      {
        config: { auth: 'public', rateLimit: perIpFirst(max * 2) },
        preValidation: [perKey, siteIdentity],
        schema: { tags: ['leads'], summary: "Create a lead from a website's form (no sign-in: the organization's API key)", description, security: [], body: CaptureBody, response: { 200: Created, 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 429: ErrorBody } },
      },
      async (request, reply) => {
        const { id, position } = await createLead(deps, callerOf(request), request.body.input)
        await settle(deps, reply, position)
        return { error: false as const, message: 'Lead created', id }
      },
    )
  }
}
