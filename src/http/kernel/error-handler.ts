import type { FastifyError, FastifyInstance, FastifySchemaValidationError } from 'fastify'
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod'
import { DomainError, ProjectionLagError, errorsByField } from '../../errors.ts'
import { UNKNOWN_FIELD } from './unknown-fields.ts'
import { databaseUnavailable } from '../../db/database-unavailable.ts'

/** Field name (dotted for nested fields) to messages; problems with the whole body go under `non_field_errors`. */
export function fieldErrors(issues: readonly FastifySchemaValidationError[]): Record<string, string[]> {
  return errorsByField(issues.map((issue) => [issue.instancePath.split('/').filter(Boolean).join('.'), issue.message ?? 'Invalid value']))
}

/** PostgreSQL refusing text it cannot store (a NUL character): the client's input, so a 400. */
const UNSTORABLE_TEXT = new Set(['22021', '22P05'])

/**
 * One place renders every failure in the spec's error-flag shape `{"error": true, "errors": ...}`.
 * Path parameters that fail validation (a malformed id) are answered 404, like a missing record;
 * unexpected errors are logged with the request id and answered 500 without internals.
 */
export function registerErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (hasZodFastifySchemaValidationErrors(error)) {
      if (error.validationContext === 'params') return reply.code(404).send({ error: true, errors: 'Not found' })
      const unknown = error.validation.filter((issue) => issue.message === UNKNOWN_FIELD).map((issue) => issue.instancePath.slice(1))
      // Logged: a client sending fields we do not store is worth knowing about (a typo, or a field the original had).
      if (unknown.length > 0) request.log.warn({ fields: unknown, route: request.routeOptions.url }, 'unknown body fields refused')
      return reply.code(400).send({ error: true, errors: fieldErrors(error.validation) })
    }
    if (error instanceof DomainError) return reply.code(error.statusCode).send({ error: true, errors: error.errors })
    if (UNSTORABLE_TEXT.has((error as { code?: string }).code ?? '')) return reply.code(400).send({ error: true, errors: 'Text may not contain NUL (\\u0000) characters' })
    if (error instanceof ProjectionLagError) {
      request.log.warn({ err: error }, 'read models lagging behind a write')
      return reply.code(503).header('retry-after', '1').send({ error: true, errors: 'The change was saved but is not yet visible; retry shortly' })
    }
    // The database is down or restarting: the request may succeed in a moment, so 503 with Retry-After.
    if (databaseUnavailable(error)) {
      request.log.warn({ err: error }, 'database unavailable')
      return reply.code(503).header('retry-after', '1').send({ error: true, errors: 'The service is temporarily unavailable; retry shortly' })
    }
    const status = error.statusCode ?? 500
    if (status >= 400 && status < 500) return reply.code(status).send({ error: true, errors: error.message })
    request.log.error({ err: error }, 'request failed')
    return reply.code(500).send({ error: true, errors: 'Internal server error' })
  })

  app.setNotFoundHandler((request, reply) => reply.code(404).send({ error: true, errors: `No route for ${request.method} ${request.url.split('?')[0]}` }))
}
