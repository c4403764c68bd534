import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import t from 'tap'
import { z } from 'zod'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import { ConflictError, ForbiddenError, ProjectionLagError, ValidationError } from '../../src/errors.ts'
import { START } from '../../src/eventstore/event-store.ts'
import { counterProjector } from '../helpers/counter-projector.ts'
import { buildTestApp } from '../helpers/app.ts'
import { givenOrganization } from '../helpers/identity.ts'

t.test('GET /healthz and /readyz', async (t) => {
  const { app } = await buildTestApp(t, { projectors: [counterProjector()] })
  const live = await app.inject({ url: '/healthz' })
  t.equal(live.statusCode, 200)
  t.same(live.json(), { status: 'ok' })
  let ready = await app.inject({ url: '/readyz' })
  for (let i = 0; i < 50 && ready.statusCode !== 200; i++) {
    await new Promise((r) => setTimeout(r, 50))
    ready = await app.inject({ url: '/readyz' })
  }
  t.equal(ready.statusCode, 200)
  t.match(ready.json(), { status: 'ready', checks: [{ name: 'database', ok: true }, { name: 'event-visibility', ok: true }, { name: 'projection:counter', ok: true }] })
})

t.test('GET /readyz reports a transaction that holds events hidden beyond the bound', async (t) => {
  const { app, database, store } = await buildTestApp(t, { env: { READY_MAX_LAG_MS: '100' } })
  const blocker = new pg.Client({ connectionString: database.url, application_name: 'long-report' })
  await blocker.connect()
  t.teardown(() => blocker.end())
  await blocker.query('BEGIN')
  await blocker.query('SELECT pg_current_xact_id()')
  await store.appendToStream('s', [{ type: 'E', data: {} }])
  await new Promise((r) => setTimeout(r, 200))
  const res = await app.inject({ url: '/readyz' })
  t.equal(res.statusCode, 503)
  t.match(res.json().checks, [{ name: 'database', ok: true }, { name: 'event-visibility', ok: false, detail: /1 committed events hidden/ }])
  await blocker.query('ROLLBACK')
  // The horizon is cluster-wide: a test file running beside this one may hold it for a moment too.
  let status = 0
  for (let deadline = Date.now() + 15_000; status !== 200 && Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) status = (await app.inject({ url: '/readyz' })).statusCode
  t.equal(status, 200, 'ready again once the transaction ends')
})

t.test('OpenAPI document, Swagger UI and ReDoc', async (t) => {
  const { app } = await buildTestApp(t)
  const schema = await app.inject({ url: '/schema/' })
  t.equal(schema.statusCode, 200)
  t.match(schema.json(), { openapi: /^3\./, info: { title: String }, paths: { '/healthz': { get: Object }, '/readyz': { get: Object } } })
  const ui = await app.inject({ url: '/swagger-ui/' })
  t.equal(ui.statusCode, 200)
  t.match(ui.headers['content-type'], /text\/html/)
  const redoc = await app.inject({ url: '/api/schema/redoc/' })
  t.equal(redoc.statusCode, 200)
  t.match(redoc.body, /<redoc spec-url="\/schema\/\?format=json">/)
})

t.test('request ids', async (t) => {
  const { app } = await buildTestApp(t)
  const given = await app.inject({ url: '/healthz', headers: { 'x-request-id': 'trace-42' } })
  t.equal(given.headers['x-request-id'], 'trace-42', 'a safe caller id is kept')
  const generated = await app.inject({ url: '/healthz', headers: { 'x-request-id': 'bad id with spaces <script>' } })
  t.match(generated.headers['x-request-id'], /^[0-9a-f-]{36}$/, 'an unsafe one is replaced by a uuid')
})

t.test('errors are rendered in the spec error-flag shape', async (t) => {
  const { app } = await buildTestApp(t, {
    extend: (app) => {
      const typed = app.withTypeProvider<ZodTypeProvider>()
      typed.post('/api/test/things/', { config: { auth: 'public' }, schema: { body: z.object({ name: z.string().min(1), amount: z.number().nonnegative().optional() }) } }, async (req) => ({ error: false, name: req.body.name }))
      typed.get('/api/test/things/:id/', { config: { auth: 'public' }, schema: { params: z.object({ id: z.uuid() }) } }, async (req) => ({ id: req.params.id }))
      app.get('/api/test/forbidden/', { config: { auth: 'public' } }, async () => {
        throw new ForbiddenError()
      })
      app.get('/api/test/invalid/', { config: { auth: 'public' } }, async () => {
        throw new ValidationError({ closed_on: ['Required when the stage is won or lost'] })
      })
      app.get('/api/test/conflict/', { config: { auth: 'public' } }, async () => {
        throw new ConflictError('Changed meanwhile')
      })
      app.get('/api/test/lagging/', { config: { auth: 'public' } }, async () => {
        throw new ProjectionLagError(START, 5)
      })
      app.get('/api/test/bug/', { config: { auth: 'public' } }, async () => {
        throw new TypeError('secret internals at /srv/app.ts:12')
      })
    },
  })
  const invalid = await app.inject({ method: 'POST', url: '/api/test/things/', payload: { amount: -1 } })
  t.equal(invalid.statusCode, 400)
  t.match(invalid.json(), { error: true, errors: { name: [String], amount: [String] } })
  const badJson = await app.inject({ method: 'POST', url: '/api/test/things/', headers: { 'content-type': 'application/json' }, payload: '{"name":' })
  t.equal(badJson.statusCode, 400)
  t.match(badJson.json(), { error: true, errors: String })
  const tooBig = await app.inject({ method: 'POST', url: '/api/test/things/', payload: { name: 'x'.repeat(2 * 1024 * 1024) } })
  t.equal(tooBig.statusCode, 413)
  t.match(tooBig.json(), { error: true })
  t.equal((await app.inject({ url: '/api/test/things/not-a-uuid/' })).statusCode, 404, 'a malformed path id is a 404, like a missing record')
  t.same((await app.inject({ url: `/api/test/things/${randomUUID()}` })).statusCode, 200, 'the trailing slash is optional')
  t.same((await app.inject({ url: '/api/test/forbidden/' })).json(), { error: true, errors: 'You do not have permission to perform this action' })
  t.equal((await app.inject({ url: '/api/test/forbidden/' })).statusCode, 403)
  t.same((await app.inject({ url: '/api/test/invalid/' })).json(), { error: true, errors: { closed_on: ['Required when the stage is won or lost'] } })
  t.equal((await app.inject({ url: '/api/test/conflict/' })).statusCode, 409)
  const lagging = await app.inject({ url: '/api/test/lagging/' })
  t.equal(lagging.statusCode, 503)
  t.equal(lagging.headers['retry-after'], '1')
  const bug = await app.inject({ url: '/api/test/bug/' })
  t.equal(bug.statusCode, 500)
  t.same(bug.json(), { error: true, errors: 'Internal server error' }, 'no internals leak')
  const missing = await app.inject({ url: '/api/nothing-here/' })
  t.equal(missing.statusCode, 404)
  t.same(missing.json(), { error: true, errors: 'No route for GET /api/nothing-here/' })
})

t.test('a read made before the read models exist waits for them instead of failing', async (t) => {
  const { app, database, projections } = await buildTestApp(t, { startProjections: false })
  const acme = await givenOrganization(app, database.db, 'Acme')
  const early = app.inject({ url: '/api/tags/', headers: acme.admin.headers })
  await sleep(100)
  projections.start()
  const res = await early
  t.equal(res.statusCode, 200, res.body)
  t.match(res.json(), { count: 0, results: [] })
})
