import t from 'tap'
import { operationIdOf } from '../../src/http/kernel/operations.ts'
import { buildTestApp } from '../helpers/app.ts'

type Operation = { operationId?: string; security?: unknown[]; 'x-scopes'?: string[]; tags?: string[] }
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options']

/**
 * Issue 18: what generated clients need from /schema/: every operation named by a stable, unique,
 * readable operationId; the credential schemes applied at the root and lifted (`security: []`)
 * exactly where no credential is needed; the PAT scope each operation needs; servers and a licence.
 */
t.test('GET /schema/: operation ids, security and scopes', async (t) => {
  const { app } = await buildTestApp(t)
  const doc = (await app.inject({ url: '/schema/' })).json() as { servers?: unknown[]; security?: unknown[]; info: { license?: { name: string } }; paths: Record<string, Record<string, Operation>> }
  const operations = Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item).filter(([method]) => METHODS.includes(method)).map(([method, op]) => ({ path, method: method.toUpperCase(), op })))
  t.ok(operations.length > 300, `${operations.length} operations`)

  t.test('every operation has an operationId, unique and readable', async (t) => {
    const ids = operations.map(({ op }) => op.operationId)
    t.same(operations.filter(({ op }) => !op.operationId).map(({ method, path }) => `${method} ${path}`), [], 'none missing')
    t.same(ids.filter((id, i) => ids.indexOf(id) !== i), [], 'no id twice')
    t.same(ids.filter((id) => !/^[a-z][a-z0-9_]*$/.test(id ?? '')), [], 'snake_case words')
    const named = (method: string, path: string) => operations.find((o) => o.method === method && o.path === path)?.op.operationId
    t.equal(named('GET', '/api/leads/'), 'leads_list')
    t.equal(named('GET', '/api/leads/{id}/'), 'leads_retrieve')
    t.equal(named('POST', '/api/opportunities/'), 'opportunities_create')
    t.equal(named('PATCH', '/api/opportunities/{id}/move/'), 'opportunities_move_partial_update')
    t.equal(named('DELETE', '/api/tags/{id}/'), 'tags_destroy')
    t.equal(named('POST', '/api/leads/{id}/'), 'leads_id_create', 'the one of two that has more parameters names them')
    t.equal(named('PATCH', '/api/org/{id}/'), 'org_partial_update', 'PUT and PATCH of one route named apart')
  })

  t.test('credentials: required at the root, lifted only where none is needed', async (t) => {
    t.same(doc.security, [{ bearer: [] }, { token: [] }])
    const lifted = operations.filter(({ op }) => Array.isArray(op.security) && op.security.length === 0).map(({ method, path }) => `${method} ${path}`)
    t.ok(lifted.includes('POST /api/leads/create-from-site/'), 'the web capture (its own key in the body)')
    t.ok(lifted.includes('POST /api/auth/magic-link/request/'), 'asking for a sign-in link')
    const refused = await Promise.all(lifted.filter((op) => op.startsWith('GET /api/')).map(async (op) => ({ op, status: (await app.inject({ url: op.slice(4).replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000') })).statusCode })))
    t.same(refused.filter((r) => r.status === 401), [], 'a GET documented as public never answers 401 without a credential')
    const guarded = operations.filter(({ path, op }) => path.startsWith('/api/') && op.security === undefined).slice(0, 20)
    for (const { method, path } of guarded.filter((o) => o.method === 'GET')) {
      const status = (await app.inject({ url: path.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000') })).statusCode
      t.equal(status, 401, `${method} ${path} documented as needing a credential answers 401 without one`)
    }
  })

  t.test("the customer portal's operations take its token only, and no staff scope", async (t) => {
    const portal = operations.filter(({ path }) => path.startsWith('/api/portal/') && !path.startsWith('/api/portal/login/'))
    t.equal(portal.length, 7)
    t.same(portal.filter(({ op }) => JSON.stringify(op.security) !== JSON.stringify([{ portal: [] }]) || op['x-scopes']).map(({ method, path }) => `${method} ${path}`), [])
  })

  t.test('each operation that takes a token names the scope it needs', async (t) => {
    const byPath = (method: string, path: string) => operations.find((o) => o.method === method && o.path === path)?.op['x-scopes']
    t.same(byPath('GET', '/api/opportunities/'), ['opportunities:read'])
    t.same(byPath('PATCH', '/api/leads/{id}/'), ['leads:write'])
    t.same(operations.filter(({ path, op }) => path.startsWith('/api/') && op.security === undefined && !op['x-scopes']).map(({ method, path }) => `${method} ${path}`), [], 'no credentialed /api/ operation without its scope')
  })

  t.test('servers and a licence', async (t) => {
    t.ok(doc.servers?.length, 'servers')
    t.ok(doc.info.license?.name, 'info.license')
  })
})

t.test('operationIdOf, drf-spectacular style', async (t) => {
  t.equal(operationIdOf('GET', '/api/opportunities/kanban/'), 'opportunities_kanban_list')
  t.equal(operationIdOf('PUT', '/api/custom-fields/:id/'), 'custom_fields_update')
  t.equal(operationIdOf('GET', '/api/opportunities/{id}/history/'), 'opportunities_history_list')
})
