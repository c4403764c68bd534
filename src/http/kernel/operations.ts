import type { RouteOptions } from 'fastify'
import { actionOf, resourceOf } from '../../identity/scopes.ts'

/** What every credential scheme of the document admits (components.securitySchemes in openapi.ts). */
export const API_SECURITY: Record<string, string[]>[] = [{ bearer: [] }, { token: [] }]

const ACTIONS: Record<string, string> = { POST: 'create', PUT: 'update', PATCH: 'partial_update', DELETE: 'destroy' }
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options']
const isParam = (segment: string) => segment.startsWith(':') || segment.startsWith('{')
const paramsOf = (path: string) => path.split('/').filter(isParam).map((s) => s.replace(/^[:{]|}$/g, ''))

/**
 * A readable operationId, named as the original service's document (drf-spectacular) named its
 * operations: the path's words joined by `_`, then the action (`list` or `retrieve` for GET as the
 * path ends in a collection or an id, `create`, `update`, `partial_update`, `destroy`):
 * `GET /api/leads/` is `leads_list`, `PATCH /api/opportunities/{id}/move/` is
 * `opportunities_move_partial_update`.
 */
export function operationIdOf(method: string, path: string, options: { namingParams?: boolean } = {}): string {
  const segments = path.split('/').filter((s) => s !== '' && s !== 'api')
  const words = segments.filter((s) => options.namingParams || !isParam(s)).map((s) => s.replace(/^[:{]|}$/g, '').replace(/[^A-Za-z0-9]+/g, '_'))
  const action = method === 'GET' ? (isParam(segments.at(-1) ?? '') ? 'retrieve' : 'list') : (ACTIONS[method] ?? method.toLowerCase())
  return [...words, action].join('_')
}

/** The customer portal's own credential (docs/portal.md): its routes take it and no other. */
export const PORTAL_SECURITY: Record<string, string[]>[] = [{ portal: [] }]

/** `security: []` on what needs no credential: routes marked public or optional, and everything outside /api/; the portal's scheme on portal routes. */
export function routeSecurity(route: Pick<RouteOptions, 'config'>, url: string): { security?: Record<string, string[]>[] } {
  const auth = (route.config as { auth?: string } | undefined)?.auth
  if (auth === 'portal') return { security: PORTAL_SECURITY }
  const isPublic = !url.startsWith('/api/') || auth === 'public' || auth === 'optional'
  return isPublic ? { security: [] } : {}
}

type Operation = { operationId?: string; security?: Record<string, unknown>[]; 'x-scopes'?: string[] }

/**
 * Names every operation of the document and gives the credentialed ones the personal access token
 * scope they need (`x-scopes`, see identity/scopes.ts). Where operations would share a name
 * (`POST /api/leads/` and `POST /api/leads/{id}/`), the one with the fewest path parameters keeps
 * it and the others name their parameters where they stand (`leads_id_create`), so an id stays put
 * when a route is added beside it. test/http/openapi-operations.test.ts checks they are unique.
 */
export function withOperationIds<D>(document: D): D {
  const paths = (document as { paths?: Record<string, Record<string, Operation>> }).paths ?? {}
  const operations = Object.entries(paths).flatMap(([path, item]) => Object.keys(item).filter((method) => METHODS.includes(method)).map((method) => ({ path, method, item })))
  const base = (o: { method: string; path: string }) => operationIdOf(o.method.toUpperCase(), o.path)
  const fewest = new Map<string, number[]>()
  for (const o of operations) fewest.set(base(o), [...(fewest.get(base(o)) ?? []), paramsOf(o.path).length])
  for (const o of operations) {
    const counts = fewest.get(base(o))!
    const least = Math.min(...counts)
    const keepsBase = paramsOf(o.path).length === least && counts.filter((n) => n === least).length === 1
    // PUT and PATCH of one route share their operation object: each method gets its own copy.
    const op = { ...o.item[o.method] }
    op.operationId ??= keepsBase ? base(o) : operationIdOf(o.method.toUpperCase(), o.path, { namingParams: true })
    const resource = resourceOf(o.path)
    // Public operations need no scope, and portal ones take no staff token at all.
    const staff = !(Array.isArray(op.security) && (op.security.length === 0 || op.security.some((scheme) => 'portal' in scheme)))
    if (staff && resource) op['x-scopes'] = [`${resource}:${actionOf(o.method.toUpperCase())}`]
    o.item[o.method] = op
  }
  return document
}
