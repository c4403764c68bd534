import type { RateLimitPluginOptions } from '@fastify/rate-limit'
import type { FastifyRequest } from 'fastify'
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
