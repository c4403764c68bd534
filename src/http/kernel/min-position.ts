import type { FastifyInstance, FastifyRequest } from 'fastify'
import { maxPosition, parsePosition } from '../../eventstore/event-store.ts'
import type { Position } from '../../eventstore/event-store.ts'
import { ValidationError } from '../../errors.ts'
import type { Deps } from '../../deps.ts'
import { readModelsAt } from '../../commands/command-session.ts'

export const MIN_POSITION_HEADER = 'x-min-position'
const FIELD = 'min_position'

const lastOf = (value: unknown): unknown => (Array.isArray(value) ? value.at(-1) : value)

/** The position a read asks for, from `?min_position=` and/or `X-Min-Position` (the later of the two); undefined when neither is given. */
export function minPositionOf(request: FastifyRequest): Position | undefined {
  const given = [lastOf((request.query as Record<string, unknown> | undefined)?.[FIELD]), lastOf(request.headers[MIN_POSITION_HEADER])]
  let wanted: Position | undefined
  for (const text of given) {
    if (text === undefined || text === '') continue
    const position = typeof text === 'string' ? parsePosition(text) : undefined
    if (!position) throw new ValidationError({ [FIELD]: ['Expected a position such as 1234-5 (the X-Event-Position of a write)'] })
    wanted = wanted ? maxPosition(wanted, position) : position
  }
  return wanted
}

/**
 * Read-your-writes across processes: a GET under /api/ that names a position (the X-Event-Position
 * a write answered, possibly on another instance) waits until the read models have applied it, up
 * to READ_YOUR_WRITES_TIMEOUT_MS, then answers 503 (ProjectionLagError). Requests without one are
 * untouched. Added on the root instance after authentication, so only callers with a credential wait.
 *
 * With a read replica (DATABASE_READ_URL), the rest of such a GET (the wait included) runs against
 * the replica: `done` is called inside `serve`, and Fastify runs the later hooks and the handler
 * from that call, so they inherit its async context. (An async hook would not: Fastify goes on from
 * the promise it returns, in its own context.)
 */
export function registerMinPosition(app: FastifyInstance, deps: Pick<Deps, 'projections' | 'config' | 'readReplica'>): void {
  app.addHook('onRequest', (request, _reply, done) => {
    if (request.method !== 'GET' || !request.routeOptions.url?.startsWith('/api/')) return done()
    const wait = async () => {
      try {
        await readModelsAt(deps, minPositionOf(request) ?? null)
      } catch (error) {
        return done(error as Error)
      }
      done()
    }
    if (deps.readReplica) deps.readReplica.serve(wait)
    else void wait()
  })
}
