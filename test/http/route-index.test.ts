import { randomUUID } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import t from 'tap'
import { ROUTE_INDEX } from '../../src/http/kernel/not-built.ts'
import { buildTestApp } from '../helpers/app.ts'
import { givenOrganization } from '../helpers/identity.ts'
import { SPEC_PATH, parseRouteIndex } from '../route-index.gen.ts'

/**
 * src/http/kernel/route-index.json is the single source of truth of the route index: the app reads it to
 * stub what is not built, and it mirrors the spec's §4.8 table plus the §4.5 pipeline routes
 * (re-generate with `node --import tsx test/route-index.gen.ts`).
 */

type Operation = { tags?: string[]; summary?: string }
type OpenApi = { paths: Record<string, Record<string, Operation>> }

// The spec writes `{id}`, @fastify/swagger renders `:id` as `{id}`; a module may name a parameter
// differently or drop the trailing slash (the router ignores it), so pairs are matched on this key.
const keyOf = (method: string, path: string) => `${method.toUpperCase()} ${path.replace(/\{\w+\}/g, '{}').replace(/\/$/, '')}`
const indexPairs = ROUTE_INDEX.flatMap(({ path, methods }) => methods.map((method) => ({ method, path, key: keyOf(method, path) })))
const fill = (path: string, id = randomUUID()) => path.replace(/\{token\}/g, 'some-token').replace(/\{\w+\}/g, id)

t.test('the route index mirrors the spec (§4.8 and the pipeline routes of §4.5)', { skip: existsSync(SPEC_PATH) ? false : `spec not found at ${SPEC_PATH}` }, async (t) => {
  t.same(ROUTE_INDEX, parseRouteIndex(readFileSync(SPEC_PATH, 'utf8')), 'src/http/kernel/route-index.json is up to date; re-generate it with test/route-index.gen.ts')
})

t.test('every route of the index is served and documented; the ones not built answer 501', async (t) => {
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
  for (const { key } of stubbed) t.equal(operations.get(key)!.operation.summary, 'Not implemented yet')
  for (const { method, path } of stubbed) t.comment(`  not built: ${method} ${path}`)

  const indexKeys = new Set(indexPairs.map(({ key }) => key))
  const extra = [...operations].filter(([key]) => !indexKeys.has(key)).map(([key, { path }]) => `${key.split(' ')[0]} ${path}`)
  t.comment(`${extra.length} operations of the OpenAPI document are not in the route index${extra.length ? ':' : ''}`)
  for (const operation of extra) t.comment(`  ${operation}`)

  t.test('a few stubs: 501 with a credential, 401 without, 404 for a malformed id', async (t) => {
    const isPublic = (path: string) => path.startsWith('/api/public/') || path.startsWith('/api/portal/login/')
    const guarded = stubbed.filter(({ path }) => !isPublic(path))
    const samples = [
      guarded.find(({ method, path }) => method === 'GET' && !path.includes('{')),
      guarded.find(({ method, path }) => method === 'POST' && path.includes('{id}')),
      guarded.find(({ method, path }) => method === 'DELETE' && path.includes('{id}')),
      guarded.find(({ method }) => method === 'PATCH' || method === 'PUT'),
    ].filter((sample) => sample !== undefined)
    t.ok(samples.length > 0, 'some routes are still stubs')
    for (const { method, path } of samples) {
      const url = fill(path)
      const answered = await app.inject({ method: method as 'GET', url, headers: member.headers })
      t.equal(answered.statusCode, 501, `${method} ${url}`)
      t.match(answered.json(), { error: true, errors: new RegExp(`^[a-z/-]+ is not implemented yet \\(${method} ${path.replace(/[{}]/g, '\\$&')}\\)$`) })
      const anonymous = await app.inject({ method: method as 'GET', url })
      t.equal(anonymous.statusCode, 401, `${method} ${url} without a credential`)
      t.match(anonymous.json(), { error: true, errors: String })
      if (path.includes('{id}')) {
        const malformed = await app.inject({ method: method as 'GET', url: path.replace(/\{\w+\}/g, 'not-a-uuid'), headers: member.headers })
        t.equal(malformed.statusCode, 404, `${method} with a malformed id`)
        t.match(malformed.json(), { error: true })
      }
    }
    const open = stubbed.find(({ path }) => isPublic(path))
    if (open) t.equal((await app.inject({ method: open.method as 'GET', url: fill(open.path) })).statusCode, 501, `public ${open.method} ${open.path} needs no credential`)
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
    t.equal(pipelines.statusCode, 200, 'a static path beside the stubbed /api/opportunities/goals/ and /api/opportunities/{opportunity_id}/line-items/')
    const me = await app.inject({ url: '/api/auth/me/', headers: member.headers })
    t.equal(me.statusCode, 200)
    const magic = await app.inject({ method: 'POST', url: '/api/auth/magic-link/request/', payload: { email: 'member@acme.test' } })
    t.equal(magic.statusCode, 200, 'a public route stays public')
  })
})
