import { randomUUID } from 'node:crypto'
import type { FastifyInstance, RawRequestDefaultExpression } from 'fastify'

export const REQUEST_ID_HEADER = 'x-request-id'
const SAFE_ID = /^[\w.:-]{1,128}$/

/** Reuses a caller's (or proxy's) request id when it is a safe token, so logs correlate across hops. */
export function requestIdFrom(req: RawRequestDefaultExpression): string {
  const given = req.headers[REQUEST_ID_HEADER]
  return typeof given === 'string' && SAFE_ID.test(given) ? given : randomUUID()
}

export function echoRequestId(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    reply.header(REQUEST_ID_HEADER, request.id)
  })
}
