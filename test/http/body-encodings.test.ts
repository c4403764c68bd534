import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { buildTestApp } from '../helpers/app.ts'
import { givenOrganization } from '../helpers/identity.ts'
import type { Member } from '../helpers/identity.ts'
import { multipartBody } from '../helpers/multipart.ts'

/**
 * §4.1: every write route takes JSON, urlencoded and multipart bodies with the same validation.
 * Each encoding writes in an organization of its own (same admin, same member), so the same body
 * can be sent three times; answers are compared with ids and times replaced by placeholders.
 */

type Value = string | number | boolean | string[]
type Fields = Record<string, Value>
const ENCODINGS = ['json', 'urlencoded', 'multipart'] as const
type Encoding = (typeof ENCODINGS)[number]

/** As a browser form sends it: every value as text, a list as the key repeated (an empty list as a blank). */
const asText = (fields: Fields): Record<string, string | string[]> =>
  Object.fromEntries(Object.entries(fields).map(([key, value]) => [key, Array.isArray(value) ? (value.length ? value : '') : String(value)]))

async function encode(encoding: Encoding, fields: Fields): Promise<{ payload: string | Buffer; contentType: string }> {
  if (encoding === 'json') return { payload: JSON.stringify(fields), contentType: 'application/json' }
  if (encoding === 'multipart') return multipartBody(asText(fields))
  const form = new URLSearchParams()
  for (const [key, value] of Object.entries(asText(fields))) for (const item of [value].flat()) form.append(key, item)
  return { payload: form.toString(), contentType: 'application/x-www-form-urlencoded' }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/

/** Known ids by their role (`<admin>`, `<tag>`...), other ids as `<id>`, times as `<time>`. */
function normalized(value: unknown, names: Map<string, string>): unknown {
  if (typeof value === 'string') return UUID.test(value) ? (names.get(value.toLowerCase()) ?? '<id>') : TIME.test(value) ? '<time>' : value
  if (Array.isArray(value)) return value.map((item) => normalized(item, names))
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, normalized(item, names)]))
  return value
}

type Context = { admin: Member; bob: Member; tag: string; pipeline: string; names: Map<string, string> }

/** One organization per encoding, with the same members, a tag, a pipeline and a custom field for leads. */
async function givenContext(app: FastifyInstance, org: Awaited<ReturnType<typeof givenOrganization>>): Promise<Context> {
  const admin = org.admin
  const bob = await org.addMember('bob@encodings.test')
  const post = async (url: string, payload: object) => {
    const res = await app.inject({ method: 'POST', url, headers: admin.headers, payload })
    if (res.statusCode >= 300) throw new Error(`${url}: ${res.statusCode} ${res.body}`)
    return res.json()
  }
  const tag = (await post('/api/tags/', { name: 'VIP' })).id
  const pipeline = (await post('/api/opportunities/pipelines/', { name: 'Enterprise' })).id
  await post('/api/custom-fields/', { module: 'leads', key: 'vip', label: 'VIP', type: 'boolean' })
  const names = new Map([
    [org.orgId, '<org>'],
    [admin.profileId, '<admin>'],
    [bob.profileId, '<bob>'],
    [tag, '<tag>'],
    [pipeline, '<pipeline>'],
  ])
  return { admin, bob, tag, pipeline, names }
}

type Case = {
  name: string
  method?: 'POST' | 'PUT' | 'PATCH'
  url: (c: Context) => string
  valid: (c: Context) => Fields
  invalid: (c: Context) => Fields
  /** The answer to compare; by default the write's own answer. */
  read?: (app: FastifyInstance, c: Context, written: { statusCode: number; json(): any }) => Promise<unknown>
}

const detail = (path: string) => async (app: FastifyInstance, c: Context, written: { json(): any }) => {
  const res = await app.inject({ url: `${path}${written.json().id}/`, headers: c.admin.headers })
  return { written: written.json(), detail: res.json() }
}

const CASES: Case[] = [
  {
    name: 'tags',
    url: () => '/api/tags/',
    valid: () => ({ name: 'Partner', color: '#1f77b4' }),
    invalid: () => ({ name: ' ', color: 'red' }),
  },
  {
    name: 'accounts: a boolean and relation lists',
    url: () => '/api/accounts/',
    valid: (c) => ({ name: 'Initech', city: 'Austin', is_active: false, tags: [c.tag], assigned_to: [c.admin.profileId, c.bob.profileId] }),
    invalid: () => ({ name: 'Initrode', is_active: 'maybe', tags: ['not-an-id'] }),
    read: detail('/api/accounts/'),
  },
  {
    name: 'teams: a users list',
    url: () => '/api/teams/',
    valid: (c) => ({ name: 'Sales', description: 'Closers', users: [c.admin.profileId, c.bob.profileId] }),
    invalid: () => ({ name: '', users: ['nobody'] }),
  },
  {
    name: 'teams: a one-member list',
    url: () => '/api/teams/',
    valid: (c) => ({ name: 'Solo', users: [c.bob.profileId] }),
    invalid: () => ({ name: 'Solo 2', users: [] as string[], description: 'x'.repeat(2001) }),
  },
  {
    name: 'custom fields: options and booleans',
    url: () => '/api/custom-fields/',
    valid: () => ({ module: 'opportunities', key: 'tier', label: 'Tier', type: 'select', options: ['Gold', 'Silver'], required: true, is_active: false }),
    invalid: () => ({ module: 'opportunities', key: 'Bad Key!', label: 'Tier', type: 'select', options: ['Gold', ' '], required: 'perhaps' }),
  },
  {
    name: 'pipelines: stage thresholds',
    url: (c) => `/api/opportunities/pipelines/${c.pipeline}/stages/`,
    valid: () => ({ label: 'Demo', kind: 'open', expected_days: 14, warning_days: 7 }),
    invalid: () => ({ label: 'Trial', kind: 'open', expected_days: 'soon', warning_days: 2.5 }),
  },
  {
    name: 'leads: numbers, lists and a boolean custom field',
    url: () => '/api/leads/',
    valid: (c) => ({ first_name: 'Ada', last_name: 'Lovelace', email: 'ada@engines.test', probability: 40, opportunity_amount: 1200.5, tags: [c.tag], assigned_to: [c.bob.profileId], cf_vip: true }),
    invalid: () => ({ first_name: 'Grace', email: 'not-an-email', probability: 140, cf_vip: 'perhaps' }),
    read: detail('/api/leads/'),
  },
  {
    name: 'goals: an amount and dates',
    url: () => '/api/opportunities/goals/',
    valid: (c) => ({ name: 'Q1', profile: c.bob.profileId, period_start: '2026-01-01', period_end: '2026-03-31', target_amount: 5000, currency: 'EUR' }),
    invalid: () => ({ name: 'Q2', period_start: '2026-06-30', period_end: '2026-04-01', target_amount: 0 }),
  },
]

t.test('the same body as JSON, urlencoded and multipart: the same answer and the same 400', async (t) => {
  const { app, database } = await buildTestApp(t)
  const contexts = new Map<Encoding, Context>()
  for (const encoding of ENCODINGS) contexts.set(encoding, await givenContext(app, await givenOrganization(app, database.db, `Org ${encoding}`, 'admin@encodings.test')))

  t.test('a multipart type without a boundary is 400 in the error shape, not a 500 (issue 35; every route: fuzz-bodies.test.ts)', async (t) => {
    const { admin } = contexts.get('multipart')!
    for (const contentType of ['multipart/form-data', 'multipart/form-data; charset=utf-8', 'multipart/form-data; boundary=']) {
      const res = await app.inject({ method: 'POST', url: '/api/tags/', headers: { ...admin.headers, 'content-type': contentType }, payload: 'name=x' })
      t.equal(res.statusCode, 400, contentType)
      t.same(res.json(), { error: true, errors: 'Malformed multipart/form-data body: the Content-Type header names no boundary' })
    }
  })

  for (const c of CASES) {
    t.test(c.name, async (t) => {
      const answers: unknown[] = []
      const refusals: unknown[] = []
      for (const encoding of ENCODINGS) {
        const context = contexts.get(encoding)!
        const send = async (fields: Fields) => {
          const { payload, contentType } = await encode(encoding, fields)
          return app.inject({ method: c.method ?? 'POST', url: c.url(context), headers: { ...context.admin.headers, 'content-type': contentType }, payload })
        }
        const written = await send(c.valid(context))
        t.ok(written.statusCode < 300, `${encoding}: ${written.statusCode} ${written.body}`)
        const answer = c.read ? await c.read(app, context, written) : written.json()
        answers.push({ status: written.statusCode, answer: normalized(answer, context.names) })
        const refused = await send(c.invalid(context))
        t.equal(refused.statusCode, 400, `${encoding} invalid: ${refused.body}`)
        refusals.push(normalized(refused.json(), context.names))
      }
      t.same(answers[1], answers[0], 'urlencoded answers as JSON does')
      t.same(answers[2], answers[0], 'multipart answers as JSON does')
      t.same(refusals[1], refusals[0], 'urlencoded is refused with the same errors')
      t.same(refusals[2], refusals[0], 'multipart is refused with the same errors')
      t.match(refusals[0], { error: true, errors: Object }, 'field errors')
    })
  }
})
