import { randomUUID } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import t from 'tap'
import { ROUTE_INDEX } from '../../src/http/kernel/not-built.ts'
import { buildTestApp } from '../helpers/app.ts'
import { givenOrganization } from '../helpers/identity.ts'
import { SPEC_PATH, parseRouteIndex } from '../route-index.gen.ts'

/**
 * src/http/kernel/route-index.json is the single source of truth of the route index: the app reads it to
 * stub what is not built (nothing, now), and it mirrors the spec's §4.8 table plus the §4.5 pipeline routes
 * (re-generate with `node --import tsx test/route-index.gen.ts`).
 */

type Operation = { tags?: string[]; summary?: string }
type OpenApi = { paths: Record<string, Record<string, Operation>>; tags?: { name: string }[] }

// The spec writes `{id}`, @fastify/swagger renders `:id` as `{id}`; a module may name a parameter
// differently or drop the trailing slash (the router ignores it), so pairs are matched on this key.
const keyOf = (method: string, path: string) => `${method.toUpperCase()} ${path.replace(/\{\w+\}/g, '{}').replace(/\/$/, '')}`
const indexPairs = ROUTE_INDEX.flatMap(({ path, methods }) => methods.map((method) => ({ method, path, key: keyOf(method, path) })))

t.test('the route index mirrors the spec (§4.8 and the pipeline routes of §4.5)', { skip: existsSync(SPEC_PATH) ? false : `spec not found at ${SPEC_PATH}` }, async (t) => {
  t.same(ROUTE_INDEX, parseRouteIndex(readFileSync(SPEC_PATH, 'utf8')), 'src/http/kernel/route-index.json is up to date; re-generate it with test/route-index.gen.ts')
})

t.test('every route of the index is served, documented and built', async (t) => {
  const { app, database } = await buildTestApp(t)
  const acme = await givenOrganization(app, database.db, 'Acme')
  const member = await acme.addMember('member@acme.test')

  const schema = await app.inject({ url: '/schema/' })
  t.equal(schema.statusCode, 200, '/schema/ is public')
  const document: OpenApi = schema.json()
  const operations = new Map<string, { path: string; operation: Operation }>()
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) operations.set(keyOf(method, path), { path, operation })
  }

  const missing = indexPairs.filter(({ key }) => !operations.has(key)).map(({ method, path }) => `${method} ${path}`)
  t.same(missing, [], `all ${indexPairs.length} path+method pairs of the index are in the OpenAPI document`)
  const renamed = indexPairs.filter(({ key, path }) => operations.has(key) && operations.get(key)!.path !== path)
  for (const { method, path, key } of renamed) t.comment(`index ${method} ${path} is documented as ${operations.get(key)!.path}`)

  const stubbed = indexPairs.filter(({ key }) => operations.get(key)?.operation.tags?.includes('not-built'))
  t.comment(`route index: ${ROUTE_INDEX.length} paths, ${indexPairs.length} path+method pairs; built ${indexPairs.length - stubbed.length}, stubbed ${stubbed.length}`)

  const indexKeys = new Set(indexPairs.map(({ key }) => key))
  const extra = [...operations].filter(([key]) => !indexKeys.has(key)).map(([key, { path }]) => `${key.split(' ')[0]} ${path}`)
  t.comment(`${extra.length} operations of the OpenAPI document are not in the route index${extra.length ? ':' : ''}`)
  for (const operation of extra) t.comment(`  ${operation}`)

  // The stub documents every route it serves under its tag (only the refused methods below are hidden), so the document tells whether any remains.
  t.test('no stubs remain: no operation of the document is tagged not-built', async (t) => {
    t.same(stubbed.map(({ method, path }) => `${method} ${path}`), [], 'every path+method of the index is built')
    const stubs = [...operations].filter(([, { operation }]) => operation.tags?.includes('not-built') || operation.summary === 'Not implemented yet')
    t.same(stubs.map(([key]) => key), [], 'no operation of the document, in the index or not, is a stub')
    t.notOk(document.tags?.some((tag) => tag.name === 'not-built'), 'no not-built tag')
  })

  t.test('PATCH and DELETE on /api/invoices/{id}/ answer 405 (§4.1)', async (t) => {
    const url = `/api/invoices/${randomUUID()}/`
    for (const method of ['PATCH', 'DELETE'] as const) {
      const refused = await app.inject({ method, url, headers: member.headers, payload: method === 'PATCH' ? { status: 'Paid' } : undefined })
      t.equal(refused.statusCode, 405, method)
      t.match(refused.json(), { error: true, errors: String })
      t.equal((await app.inject({ method, url })).statusCode, 401, `${method} without a credential`)
    }
    t.notOk(document.paths['/api/invoices/{id}/']?.patch ?? document.paths['/api/invoices/{id}/']?.delete, 'not documented as operations')
  })

  t.test('built routes are not shadowed', async (t) => {
    const tokens = await app.inject({ url: '/api/profile/tokens/', headers: member.headers })
    t.equal(tokens.statusCode, 200)
    const pipelines = await app.inject({ url: '/api/opportunities/pipelines/', headers: member.headers })
    t.equal(pipelines.statusCode, 200, 'a static path beside /api/opportunities/goals/ and /api/opportunities/{opportunity_id}/line-items/')
    const me = await app.inject({ url: '/api/auth/me/', headers: member.headers })
    t.equal(me.statusCode, 200)
    const magic = await app.inject({ method: 'POST', url: '/api/auth/magic-link/request/', payload: { email: 'member@acme.test' } })
    t.equal(magic.statusCode, 200, 'a public route stays public')
  })
})
