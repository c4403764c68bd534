/**
 * Unknown body fields (issue 22 point 5, issue 17 point 6): refused with 400 naming each one and
 * logged, and nothing is written; bodies that document taking any key (deals and leads: `cf_<key>`,
 * output-only fields sent back) keep taking them.
 */
import { Writable } from 'node:stream'
import pino from 'pino'
import t from 'tap'
import { CUSTOM_FIELD_ENTRIES, knownKeysOf } from '../../src/http/kernel/unknown-fields.ts'
import { z } from 'zod'
import { buildTestApp } from '../helpers/app.ts'
import { givenOrganization } from '../helpers/identity.ts'

t.test('knownKeysOf sees through the wrappers route schemas use', async (t) => {
  const base = z.object({ a: z.string(), b: z.number().optional() })
  const candidates = ['a', 'b', 'c', 'd', 'cf_tier', 'zzz']
  /** The candidate keys the schema knows. */
  const known = (schema: z.ZodType) => candidates.filter(knownKeysOf(schema)!)
  t.same(known(base), ['a', 'b'])
  t.same(known(base.refine(() => true)), ['a', 'b'], 'refined')
  t.same(known(base.transform((v) => v)), ['a', 'b'], 'transformed (a pipe)')
  t.same(known(base.optional()), ['a', 'b'], 'optional')
  t.same(known(z.union([base, z.object({ c: z.string() })])), ['a', 'b', 'c'], 'a union knows what any option knows')
  t.same(known(base.extend({ d: z.string() })), ['a', 'b', 'd'], 'extended')
  t.equal(knownKeysOf(base.catchall(z.unknown())), undefined, 'a catchall takes any key')
  t.equal(knownKeysOf(base.loose()), undefined, 'so does a loose object')
  t.same(known(base.strict()), ['a', 'b'], 'a strict object knows its own')
  t.equal(knownKeysOf(z.record(z.string(), z.string())), undefined, 'a record takes any key')
  t.same(known(base.catchall(CUSTOM_FIELD_ENTRIES)), ['a', 'b', 'cf_tier'], 'a custom field catchall knows its own and cf_<key>')
  t.same(known(base.catchall(CUSTOM_FIELD_ENTRIES).partial().describe('a PATCH')), ['a', 'b', 'cf_tier'], 'also made partial and described')
})

t.test('a body key the route does not know', async (t) => {
  const lines: string[] = []
  const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) })
  const { app, database } = await buildTestApp(t, { logger: pino({ level: 'warn' }, sink) })
  const acme = await givenOrganization(app, database.db, 'Acme')
  const headers = acme.admin.headers

  const refused = await app.inject({ method: 'POST', url: '/api/teams/', headers, payload: { name: 'Sales', users: [], descripton: 'typo', colour: 'red' } })
  t.equal(refused.statusCode, 400)
  t.same(refused.json(), { error: true, errors: { descripton: ['Unknown field: this route does not store it (check its spelling against the API document)'], colour: ['Unknown field: this route does not store it (check its spelling against the API document)'] } })
  t.same((await app.inject({ url: '/api/teams/', headers })).json().teams ?? [], [], 'nothing was written')
  t.match(lines.join(''), /"fields":\["descripton","colour"\].*unknown body fields refused/, 'logged with the fields (never their values)')
  t.notMatch(lines.join(''), /typo/, 'values stay out of the log')

  const both = await app.inject({ method: 'POST', url: '/api/teams/', headers, payload: { extra: 1 } })
  t.equal(both.statusCode, 400)
  t.ok(both.json().errors.extra && both.json().errors.name, 'named beside the other problems of the body')

  t.equal((await app.inject({ method: 'POST', url: '/api/teams/', headers, payload: { name: 'Sales', users: [] } })).statusCode, 201, 'the same body without it is taken')
  t.equal((await app.inject({ url: '/api/teams/?utm_source=mail', headers })).statusCode, 200, 'query strings keep their leniency')

  const deal = await app.inject({ method: 'POST', url: '/api/opportunities/', headers, payload: { name: 'Renewal', id: 'sent-back', created_at: 'sent-back' } })
  t.equal(deal.statusCode, 200, 'a deal body takes output-only fields sent back, as documented (§4.1: create answers 200)')
})
