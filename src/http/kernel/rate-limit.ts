import type { RateLimitPluginOptions } from '@fastify/rate-limit'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { DomainError } from '../../errors.ts'

/**
 * `@fastify/rate-limit` is registered with `global: false`: only routes with `config.rateLimit`
 * are limited. Its 429 is a DomainError, so the error handler renders it in the error-flag shape;
 * `Retry-After` is already set on the reply when it is thrown.
 */
export const rateLimitOptions: RateLimitPluginOptions = {
  global: false,
  errorResponseBuilder: (_request, context) => new DomainError(context.statusCode, `Too many requests; retry in ${context.after}`),
}

/**
 * Per client IP and the `email` of the body, so one address cannot be flooded and one client
 * cannot hammer an address, while people behind a shared IP do not lock each other out.
 * Runs before validation (the body is parsed, not yet checked), so malformed requests count too.
 */
export function perIpAndEmail(max: number) {
  return {
    max,
    timeWindow: 60_000,
    hook: 'preValidation' as const,
    keyGenerator: (request: FastifyRequest) => `${request.ip}|${emailOf(request.body)}`,
  }
}

function emailOf(body: unknown): string {
  const email = typeof body === 'object' && body !== null && 'email' in body ? body.email : undefined
  return typeof email === 'string' ? email.trim().toLowerCase() : ''
}

/**
 * Per client IP, for sign-in routes that carry no email (Google ID tokens, refresh tokens): a
 * budget twelve times the per-address one, since a shared office IP signs many people in.
 */
export function perIp(max: number) {
  return { max: max * 12, timeWindow: 60_000, hook: 'preValidation' as const, keyGenerator: (request: FastifyRequest) => request.ip }
}

/**
 * Per client IP, checked first (`onRequest`, before the body is read), for a public route that
 * writes (web lead capture): a flood from one address stops before any lookup.
 */
export function perIpFirst(max: number) {
  return { max, timeWindow: 60_000, hook: 'onRequest' as const, keyGenerator: (request: FastifyRequest) => request.ip }
}

/**
 * A second budget on a route that has one already (the plugin runs one limiter per request), keyed
 * by what the request names (an API key): a preValidation hook answering 429 with Retry-After.
 */
export function alsoLimited(app: FastifyInstance, max: number, keyOf: (request: FastifyRequest) => string) {
  const limit = app.createRateLimit({ max, timeWindow: 60_000, keyGenerator: keyOf })
  return async (request: FastifyRequest, reply: { header(name: string, value: number): unknown }) => {
    const result = await limit(request)
    if (result.isAllowed || !result.isExceeded) return
    reply.header('retry-after', result.ttlInSeconds)
    throw new DomainError(429, `Too many requests; retry in ${result.ttlInSeconds} seconds`)
  }
}
