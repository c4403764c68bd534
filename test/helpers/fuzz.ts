import { Writable } from 'node:stream'
import fc from 'fast-check'
import pino from 'pino'
import type { Test } from 'tap'
import { givenTwoOrganizations } from './fixtures.ts'
import type { Headers } from './fixtures.ts'
import { describe, eventCount, fillPath, operationsOf, sampleOf, typesOf } from './route-table.ts'
import type { JsonSchema, Operation } from './route-table.ts'

/**
 * Bad input against every built route of the OpenAPI document: generated bodies (from each
 * route's JSON schema, mutated, or bodies whose encoding is broken), query strings and path ids. Never a 5xx; every 4xx in the error
 * shape `{error: true, errors}`; a rejected request appends no event. FUZZ_RUNS sets the depth
 * (runs per route; default 25) and FUZZ_SEED replays a failure.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 25)
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined

const nasty = fc.constantFrom(
  "'; DROP TABLE events; --",
  "' OR '1'='1",
  '<script>alert(1)</script>',
  '<img src=x onerror=alert(1)>',
  '../../etc/passwd',
  '\u0000',
  '\ud800',
  '🦄'.repeat(50),
  'Ω≈ç√∫˜µ≤≥÷',
  '١٢٣',
  'not-a-uuid',
  '00000000-0000-0000-0000-000000000000',
  'ffffffff-ffff-ffff-ffff-ffffffffffff',
  '2026-02-30',
  '2026-13-01',
  '99999-01-01',
  '0000-00-00',
  'NaN',
  'Infinity',
  '-1',
  '1e309',
  'true',
  'null',
  '',
  ' ',
  '%00',
  '${jndi:ldap://x}',
  '__proto__',
)
const hugeString = fc.constantFrom('x'.repeat(10_000), 'é'.repeat(100_000), '9'.repeat(400))
const numbers = fc.oneof(fc.integer(), fc.constantFrom(-1, 0, -0, 2 ** 31, 2 ** 53 + 1, -(2 ** 63), 1e308, -1e308, 0.1, 1.5, 1e-300), fc.double({ noNaN: true, noDefaultInfinity: true }))
const scalar = fc.oneof(fc.constant(null), fc.boolean(), numbers, fc.string({ maxLength: 40 }), fc.string({ unit: 'grapheme', maxLength: 20 }), nasty, hugeString, fc.uuid())
const anything = fc.oneof(scalar, fc.array(scalar, { maxLength: 5 }), fc.dictionary(fc.string({ maxLength: 10 }), scalar, { maxKeys: 4 }))

/** A value near what the schema expects (valid-looking, or its type swapped for another), or anything at all. */
function valueFor(schema: JsonSchema, name: string, ids: string[]): fc.Arbitrary<unknown> {
  const types = typesOf(schema)
  const near: fc.Arbitrary<unknown>[] = [fc.constant(sampleOf(schema, name))]
  if (schema.enum?.length) near.push(fc.constantFrom(...schema.enum), fc.constant(String(schema.enum[0]).toLowerCase()))
  if (schema.format === 'uuid') near.push(fc.constantFrom(...ids), fc.uuid())
  if (types.includes('array')) near.push(fc.array(schema.items && typesOf(schema.items).length ? fc.oneof(valueFor(schema.items, name, ids), scalar) : scalar, { maxLength: 4 }), fc.array(fc.constantFrom(...ids), { maxLength: 3 }))
  if (types.includes('object') && schema.properties) near.push(bodyFor(schema, ids))
  return fc.oneof({ weight: 2, arbitrary: fc.oneof(...near) }, { weight: 3, arbitrary: anything })
}

/** A body: the schema's properties, each present or not, each valid-looking or hostile; sometimes not an object at all. */
function bodyFor(schema: JsonSchema, ids: string[]): fc.Arbitrary<unknown> {
  const properties = schema.properties ?? {}
  const model = fc.record(Object.fromEntries(Object.entries(properties).map(([key, value]) => [key, valueFor(value, key, ids)])), { requiredKeys: [] })
  const withExtra = fc.tuple(model, fc.dictionary(fc.constantFrom('__proto__', 'constructor', 'org_id', 'id', 'created_by', 'closed_by', 'is_superuser', 'extra'), anything, { maxKeys: 2 })).map(([a, b]) => ({ ...b, ...a }))
  return fc.oneof({ weight: 6, arbitrary: model }, { weight: 2, arbitrary: withExtra }, { weight: 1, arbitrary: anything })
}

/** A request body as sent: JSON text, or raw bytes under a content type of their own. */
type Sent = { json: unknown } | { raw: string; contentType: string }

/**
 * Bodies whose encoding is broken rather than their values, each sent to every write route (as the
 * property's first examples) and mixed into its runs: the parsers in front of the schema must
 * answer 400 (or 415), never 500 (issue 35: busboy throws on a multipart type without boundary).
 */
const MALFORMED_BODIES: Sent[] = [
  { contentType: 'multipart/form-data', raw: 'name=x' },
  { contentType: 'multipart/form-data; charset=utf-8', raw: '' },
  { contentType: 'multipart/form-data; boundary=', raw: '--\r\n' },
  { contentType: 'multipart/form-data; boundary=xyz', raw: '--xyz\r\nContent-Disposition: form-data; name="name"\r\n\r\nunterminated' },
  { contentType: 'multipart/form-data; boundary=xyz', raw: '--xyz\r\nno header at all\r\n\r\nx\r\n--xyz--\r\n' },
  { contentType: 'application/x-www-form-urlencoded', raw: '%%%=%zz&name=%E0%A4%A' },
  { contentType: 'application/json', raw: '{"name": ' },
  { contentType: 'application/json; charset=utf-16', raw: '{}' },
  { contentType: 'text/plain', raw: 'name=x' },
]
const sentBody = (schema: JsonSchema, ids: string[]): fc.Arbitrary<Sent> =>
  fc.oneof({ weight: 9, arbitrary: bodyFor(schema, ids).map((json): Sent => ({ json })) }, { weight: 1, arbitrary: fc.constantFrom(...MALFORMED_BODIES) })

const pathId = (ids: string[]) => fc.oneof(fc.constantFrom(...ids), fc.uuid(), nasty, fc.string({ maxLength: 30 }), fc.constant('x'.repeat(2000)))

/** The families of requests, one test file each (test/http/fuzz-*.test.ts), so the suite's runner spreads them over its jobs. */
export type FuzzFamily = 'bodies' | 'queries' | 'paths'

/** Bad input of one family on every route of the schema it applies to: never a 5xx, always the error shape, no change when rejected. */
export async function fuzzRoutes(t: Test, family: FuzzFamily): Promise<void> {
  const errors: string[] = []
  const sink = new Writable({ write: (chunk, _enc, done) => (errors.push(String(chunk)), done()) })
  const { app, database, acme, alice } = await givenTwoOrganizations(t, { logger: pino({ level: 'error' }, sink) })
  const A = acme.admin.headers
  const post = async (url: string, payload: object) => (await app.inject({ method: 'POST', url, headers: A, payload })).json()
  const tag = (await post('/api/tags/', { name: 'fuzz' })).id as string
  const account = (await post('/api/accounts/', { name: 'Fuzz account' })).id as string
  const contact = (await post('/api/contacts/', { first_name: 'Fuzz', account })).id as string
  const team = (await post('/api/teams/', { name: 'Fuzzers', users: [alice.profileId] })).id as string
  const pipeline = await post('/api/opportunities/pipelines/', { name: 'Fuzz pipeline' })
  const deal = (await post('/api/opportunities/', { name: 'Fuzz deal', amount: '10.00', account })).id as string
  const comment = (await post(`/api/opportunities/${deal}/`, { comment: 'fuzz' })).comments[0].id as string
  const ids = [tag, account, contact, team, pipeline.id, pipeline.stages[0].id, deal, comment, alice.profileId, alice.userId, acme.orgId]

  const operations = (await operationsOf(app)).filter((op) => !op.streaming && op.path !== '/api/auth/logout/')
  const failures: string[] = []
  const failed = new Set<string>()
  const fail = (op: Operation, kind: string, message: string) => {
    if (failed.has(`${describe(op)} ${kind}`)) return
    failed.add(`${describe(op)} ${kind}`)
    failures.push(message)
  }
  let cases = 0
  // The log's length before the next probe, kept from the last rejection's count (requests run one
  // at a time): most probes are rejected, so this spares a count of the log per probe.
  let known: number | undefined

  /** One request; a 5xx or a 4xx out of shape is recorded with the request and the logged stack. */
  const probe = async (op: Operation, url: string, headers: Headers, body?: Sent) => {
    cases++
    const before = known ?? (await eventCount(database.db))
    known = undefined
    errors.length = 0
    let res
    try {
      res = await app.inject({ method: op.method, url, headers, ...(body && { payload: 'raw' in body ? body.raw : JSON.stringify(body.json), headers: { ...headers, 'content-type': 'raw' in body ? body.contentType : 'application/json' } }) })
    } catch (error) {
      // A generated id no client could put in a URL (a lone surrogate): the test's injector refuses it, the server never sees it.
      if (error instanceof URIError) return true
      throw error
    }
    const request = `${op.method} ${url.slice(0, 200)} ${body === undefined ? '' : 'raw' in body ? `(${body.contentType}) ${body.raw}` : JSON.stringify(body.json).slice(0, 300)}`
    // 501: documented for features switched off by configuration (Google sign-in without GOOGLE_CLIENT_ID).
    if (res.statusCode >= 500 && !(res.statusCode === 501 && op.responses.includes('501'))) {
      fail(op, String(res.statusCode), `${res.statusCode} on ${request}\n${res.body.slice(0, 200)}\n${errors.join('').slice(0, 3000)}`)
      return false
    }
    if (res.statusCode >= 400) {
      let body: { error?: unknown; errors?: unknown } | undefined
      try {
        body = res.json()
      } catch {
        body = undefined
      }
      // One finding for the router's own 414 (an over-long path id), whichever route it hits.
      const kind = res.body.includes('FST_ERR_MAX_PARAM_LENGTH') ? 'router 414' : 'shape'
      if (body?.error !== true || body.errors === undefined) fail(kind === 'shape' ? op : { method: 'GET', path: '(any route)' } as Operation, kind, `${res.statusCode} not in the error shape on ${request}: ${res.body.slice(0, 200)}`)
      const after = await eventCount(database.db)
      if (after !== before) fail(op, 'events', `${res.statusCode} on ${request} appended ${after - before} events`)
      known = after
    }
    return true
  }
  const check = async (label: string, property: fc.IAsyncProperty<[unknown]> | fc.IAsyncProperty<[string]> | fc.IAsyncProperty<[Sent]>, examples: [unknown][] = []) => {
    const result = await fc.check(property as fc.IAsyncProperty<[unknown]>, { numRuns: RUNS + examples.length, seed: SEED, endOnFailure: true, examples })
    // A property that threw (not one of the findings recorded above) must fail the test too.
    if (result.failed && !failures.length) failures.push(`${label}: ${String(result.errorInstance ?? 'failed')} (seed ${result.seed}, counterexample ${JSON.stringify(result.counterexample)?.slice(0, 300)})`)
    if (result.failed) t.comment(`${label}: failed with seed ${result.seed} (replay with FUZZ_SEED)`)
  }

  const writes = family === 'bodies' ? operations.filter((op) => ['POST', 'PUT', 'PATCH'].includes(op.method) && op.body) : []
  for (const op of writes) {
    const url = fillPath(op.path, Object.fromEntries(op.pathParams.map((name) => [name, op.path.includes('/pipelines/') ? pipeline.id : op.path.includes('/stages/') ? pipeline.stages[1].id : op.path.includes('/comment/') ? comment : op.path.includes('/user/') ? alice.profileId : op.path.includes('/org/') ? acme.orgId : op.path.includes('/tags/') ? tag : op.path.includes('/teams/') ? team : op.path.includes('/contacts/') ? contact : op.path.includes('/accounts/') ? account : deal])))
    await check(`body ${describe(op)}`, fc.asyncProperty(sentBody(op.body!, ids), (body) => probe(op, url, A, body)), MALFORMED_BODIES.map((body) => [body]))
  }

  const lists = family === 'queries' ? operations.filter((op) => op.method === 'GET' && op.pathParams.length === 0 && op.path.startsWith('/api/')) : []
  for (const op of lists) {
    const names = [...Object.keys(op.query), 'limit', 'offset', 'order', 'search', 'x']
    const query = fc.array(fc.tuple(fc.constantFrom(...names), fc.oneof(scalar.map(String), fc.constantFrom(...ids))), { maxLength: 5 }).map((pairs) => new URLSearchParams(pairs).toString())
    await check(`query ${describe(op)}`, fc.asyncProperty(query, (q) => probe(op, `${op.path}?${q}`, A)))
  }

  const urlSafe = (id: string) => {
    try {
      return encodeURIComponent(id).length >= 0
    } catch {
      return false
    }
  }
  const withIds = family === 'paths' ? operations.filter((op) => op.pathParams.length) : []
  for (const op of withIds) {
    const idArb = pathId(ids)
    await check(
      `path ${describe(op)}`,
      // An id with a lone surrogate cannot be written in a URL at all (encodeURIComponent refuses it): no client can send it.
      fc.asyncProperty(idArb.filter(urlSafe), (id) => probe(op, fillPath(op.path, Object.fromEntries(op.pathParams.map((name) => [name, id]))), alice.headers, op.body ? { json: sampleOf(op.body) } : undefined)),
    )
  }

  t.comment(`${cases} fuzz cases (${family}) over ${writes.length + lists.length + withIds.length} routes (${RUNS} runs each)`)
  t.same(failures, [], `no 5xx, no 4xx out of shape, no change on rejection (first failure of each route and kind)`)
}
