import type { FastifyInstance } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { Deps } from '../../deps.ts'
import routeIndex from './route-index.json' with { type: 'json' }
import { ErrorBody, authErrors } from './schemas/common.ts'

/**
 * The spec's route index (§4.8 plus the pipeline routes of §4.5), generated from the spec by
 * test/route-index.gen.ts. It is the one source of truth; test/http/route-index.test.ts checks it
 * against the spec and against the OpenAPI document.
 */
export type RouteIndexEntry = { path: string; methods: string[] }
export const ROUTE_INDEX: readonly RouteIndexEntry[] = routeIndex

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'

/** §4: braces in paths are uuids; a `{token}` is a secret handed to a customer, not an identifier. */
const STRING_PARAMS = new Set(['token'])
/** Routes meant for callers without an API credential (public links, portal sign-in): a stub answers them 501, not 401. */
const PUBLIC_PREFIXES = ['/api/public/', '/api/portal/login/']
/** §4.1: `/api/invoices/{id}/` has only GET and PUT; PATCH and DELETE there answer 405. */
const REFUSED: readonly RouteIndexEntry[] = [{ path: '/api/invoices/{id}/', methods: ['PATCH', 'DELETE'] }]

const TAGS = ['not-built']

/** `/api/x/{id}/` → `/api/x/:id/`. */
export const routerPath = (path: string): string => path.replace(/\{(\w+)\}/g, ':$1')

function paramsOf(path: string): z.ZodObject | undefined {
  const names = [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]!)
  if (names.length === 0) return undefined
  return z.object(Object.fromEntries(names.map((name) => [name, STRING_PARAMS.has(name) ? z.string() : z.uuid()])))
}

/**
 * Whether an earlier plugin already serves `method url`. With `ignoreTrailingSlash` the router keeps
 * routes under their path without the trailing slash, and find-my-way compares patterns regardless
 * of parameter names, so `/api/x/:id/` also matches a route declared as `/api/x/:xId`.
 */
function served(app: FastifyInstance, method: Method, url: string): boolean {
  return [url, url.replace(/\/$/, '')].some((candidate) => app.hasRoute({ method, url: candidate }))
}

/**
 * Every path and method of the spec's route index that no module serves yet answers 501 in the
 * error-flag shape, so clients and the OpenAPI document see the whole API surface. Register it
 * last: what it skips is decided from the routes registered before it.
 */
export function notBuiltRoutes(_deps: Deps): FastifyPluginAsyncZod {
  return async (app) => {
    const stub = (path: string, method: Method, status: 405 | 501, errors: string, options: { hide?: boolean; allow?: string } = {}) => {
      const url = routerPath(path)
      if (served(app, method, url)) return
      const isPublic = PUBLIC_PREFIXES.some((prefix) => path.startsWith(prefix))
      const params = paramsOf(path)
      app.route({
        method,
        url,
        config: isPublic ? { auth: 'public' } : {},
        schema: {
          tags: TAGS,
          summary: 'Not implemented yet',
          hide: options.hide,
          ...(params ? { params } : {}),
          response: { [status]: ErrorBody, ...(params ? { 404: ErrorBody } : {}), ...(isPublic ? {} : authErrors) },
        },
        handler: async (_request, reply) => {
          if (options.allow) reply.header('allow', options.allow)
          return reply.code(status).send({ error: true, errors })
        },
      })
    }

    // The module a path belongs to, as issue 7 names it: its first segments, e.g. `cases/solutions`, `tasks`.
    const moduleOf = (path: string) => path.replace(/^\/api\//, '').split('/').filter((segment) => segment && !segment.startsWith('{')).slice(0, 2).join('/')
    for (const { path, methods } of ROUTE_INDEX) {
      for (const method of methods) stub(path, method as Method, 501, `${moduleOf(path)} is not implemented yet (${method} ${path})`)
    }
    for (const { path, methods } of REFUSED) {
      const allowed = ROUTE_INDEX.find((entry) => entry.path === path)?.methods.join(', ') ?? ''
      // Hidden from the OpenAPI document: the spec lists only the allowed methods of this path.
      for (const method of methods) stub(path, method as Method, 405, `Method "${method}" not allowed. ${path} supports ${allowed}.`, { hide: true, allow: allowed })
    }
  }
}
