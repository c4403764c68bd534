import type { IncomingMessage, ServerResponse } from 'node:http'
import fastifyCors from '@fastify/cors'
import type { FastifyInstance } from 'fastify'
import helmet from 'helmet'

/**
 * The API answers JSON, so the default policy allows nothing but this origin's own scripts and
 * styles (enough for Swagger UI, served from /swagger-ui/). `upgrade-insecure-requests` is left out:
 * TLS ends at the proxy, and a plain-HTTP development server must keep loading its own assets.
 */
const API_CSP = {
  useDefaults: true,
  directives: { 'upgrade-insecure-requests': null, 'frame-ancestors': ["'none'"] },
}

/** ReDoc loads its bundle from its CDN, runs a blob: worker and injects styles: only its page gets this policy. */
export const REDOC_CSP = [
  "default-src 'self'",
  "script-src 'self' https://cdn.redoc.ly",
  "worker-src 'self' blob:",
  "style-src 'self' 'unsafe-inline' https:",
  "font-src 'self' https: data:",
  "img-src 'self' data: https:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "frame-ancestors 'none'",
].join('; ')

const REDOC_ROUTE = '/api/schema/redoc/'

/** Headers a browser client of another origin may read: revisions for If-Match, request ids, back-off hints. */
const EXPOSED_HEADERS = ['ETag', 'X-Request-Id', 'Retry-After', 'Content-Disposition']

/**
 * Security headers (helmet) on every answer, and CORS for the configured origins only: with no
 * `CORS_ORIGINS` no CORS header is ever sent, so browsers keep other origins out. Credentials
 * travel in the Authorization or Token header, never cookies, so `credentials` stays off.
 */
export async function registerSecurity(app: FastifyInstance, options: { corsOrigins: readonly string[] }): Promise<void> {
  const headers = securityHeaders()
  app.addHook('onRequest', (_request, reply, done) => {
    reply.headers(headers)
    done()
  })
  app.addHook('onSend', async (request, reply) => {
    if (request.routeOptions.url === REDOC_ROUTE || request.routeOptions.url === REDOC_ROUTE.replace(/\/$/, '')) reply.header('content-security-policy', REDOC_CSP)
  })
  if (options.corsOrigins.length === 0) return
  await app.register(fastifyCors, {
    origin: [...options.corsOrigins],
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    exposedHeaders: EXPOSED_HEADERS,
    credentials: false,
    maxAge: 600,
  })
}

/**
 * Helmet's headers for API_CSP, worked out once: they are the same for every answer, and
 * @fastify/helmet built helmet's middleware (CSP parsing included) again on every request, 3 % of
 * the server's CPU under deal creates. Helmet only sets (and removes) headers on the response.
 */
function securityHeaders(): Record<string, string> {
  const headers: Record<string, string> = {}
  const response = {
    setHeader: (name: string, value: string) => (headers[name.toLowerCase()] = value),
    removeHeader: (name: string) => delete headers[name.toLowerCase()],
  }
  helmet({ contentSecurityPolicy: API_CSP })({} as IncomingMessage, response as unknown as ServerResponse, (error?: unknown) => {
    if (error) throw error
  })
  return headers
}
