import { randomBytes } from 'node:crypto'
import { sql } from 'kysely'
import t from 'tap'
import { loadConfig } from '../../src/config.ts'
import { createDb, createPool } from '../../src/db/database.ts'
import { buildApp } from '../../src/http/app.ts'
import { cachedLookups } from '../../src/lookups/lookups.ts'
import { FIXED_NOW } from '../helpers/app.ts'
import { onTeardown } from '../helpers/cleanup.ts'
import { givenTwoOrganizations } from '../helpers/fixtures.ts'
import type { Headers } from '../helpers/fixtures.ts'
import { silentLogger } from '../helpers/runner.ts'

/**
 * Issue 20: memberships, organizations and custom field definitions are cached per process. A
 * change must be seen by the very next request in the process that made it, within a short bound
 * in every other process, and never through a cache whose invalidations may have been missed.
 */
const DEALS = '/api/opportunities/'
/**
 * Another process sees a change within NOTIFY's delivery: milliseconds; this leaves room for a
 * loaded machine (the suite runs several files at a time) and stays well under LOOKUP_MAX_AGE_MS
 * (5 s), so a missed invalidation that only the cache's age would end still fails.
 */
const OTHER_PROCESS_BOUND_MS = 2_000

t.test('cached lookups', async (t) => {
  const secret = randomBytes(32).toString('base64url')
  const { app, database, store, projections, acme, alice, bob } = await givenTwoOrganizations(t, { cachedLookups: true, env: { JWT_SECRET: secret } })
  const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, headers: Headers, payload?: object, on = app) => on.inject({ method, url, headers, payload })
  const status = async (...args: Parameters<typeof call>) => (await call(...args)).statusCode

  /** Polls until `request` answers `expected`; resolves the time it took (ms), or fails after 5 s. */
  const until = async (expected: number, request: () => Promise<number>) => {
    const started = performance.now()
    let last = await request()
    while (last !== expected && performance.now() - started < 5_000) {
      await new Promise((resolve) => setImmediate(resolve))
      last = await request()
    }
    t.equal(last, expected)
    return performance.now() - started
  }

  t.test('a demoted member is refused admin work on their very next request', async (t) => {
    const carol = await acme.addMember('carol@acme.test', 'ADMIN')
    t.equal(await status('GET', '/api/custom-fields/', carol.headers), 200, 'cached as an admin')
    t.equal(await status('PUT', `/api/user/${carol.profileId}/`, acme.admin.headers, { role: 'USER' }), 200)
    t.equal(await status('POST', '/api/custom-fields/', carol.headers, { target_model: 'Opportunity', key: 'sneaky', label: 'Sneaky', field_type: 'text' }), 403)
  })

  t.test('a deactivated member is refused on their very next request, and let in again once reactivated', async (t) => {
    t.equal(await status('GET', DEALS, bob.headers), 200, 'cached as active')
    t.equal(await status('DELETE', `/api/user/${bob.profileId}/`, acme.admin.headers), 200)
    t.equal(await status('GET', DEALS, bob.headers), 401)
    t.equal(await status('POST', `/api/user/${bob.userId}/status/`, acme.admin.headers, { status: 'Active' }), 200)
    t.equal(await status('GET', DEALS, bob.headers), 200)
  })

  t.test('a custom field defined is used by the very next deal create', async (t) => {
    t.equal(await status('POST', DEALS, alice.headers, { name: 'Before the field' }), 200, 'definitions cached: none')
    t.equal(await status('POST', '/api/custom-fields/', acme.admin.headers, { target_model: 'Opportunity', key: 'tier', label: 'Tier', field_type: 'dropdown', options: [{ value: 'gold', label: 'Gold' }], is_required: true }), 201)
    const missing = await call('POST', DEALS, alice.headers, { name: 'Without a tier' })
    t.match({ status: missing.statusCode, body: missing.json() }, { status: 400, body: { errors: { custom_fields: { tier: [String] } } } }, 'the new required field is enforced')
    const created = await call('POST', DEALS, alice.headers, { name: 'Gold deal', cf_tier: 'gold' })
    t.equal(created.statusCode, 200, created.body)
    const detail = (await call('GET', `${DEALS}${created.json().id}/`, alice.headers)).json()
    t.same(detail.opportunity_obj.custom_fields, { tier: 'gold' })
    t.same(detail.custom_field_definitions.map((d: { key: string }) => d.key), ['tier'])
    const id = detail.custom_field_definitions[0].id as string
    t.equal(await status('DELETE', `/api/custom-fields/${id}/`, acme.admin.headers), 200, 'deactivated')
    t.equal(await status('POST', DEALS, alice.headers, { name: 'No tier needed now' }), 200, 'no longer required on the next create')
  })

  t.test('another process sees changes within a short bound: its own writes and any SQL writer (triggers)', async (t) => {
    // A second app with its own pool and its own LISTEN connection, as a second server process has.
    const pool = createPool(database.url, 4)
    const db = createDb(pool)
    const lookups = cachedLookups({ db, pool })
    const { config } = loadConfig({ NODE_ENV: 'test', DATABASE_URL: database.url, JWT_SECRET: secret })
    const other = await buildApp({ config, db, lookups, store, projections, logger: silentLogger, clock: () => FIXED_NOW })
    onTeardown(t, async () => {
      await other.close()
      await lookups.close()
      await db.destroy()
    })
    await other.ready()
    const dave = await acme.addMember('dave@acme.test')
    t.equal(await status('GET', DEALS, dave.headers, undefined, other), 200, 'cached as active over there')
    // The first 401 an app answers on a route is checked against the OpenAPI document, which a
    // test app may first have to generate (~0.6 s, seconds on a loaded machine): answered here, so
    // the bound below times the notice, not that. This was the "missed notice" of the last sessions.
    t.equal(await status('GET', DEALS, { authorization: 'Bearer not-a-token' }, undefined, other), 401)
    t.equal(await status('DELETE', `/api/user/${dave.profileId}/`, acme.admin.headers), 200, 'deactivated here')
    t.ok((await until(401, () => status('GET', DEALS, dave.headers, undefined, other))) < OTHER_PROCESS_BOUND_MS, 'refused over there within the bound')

    t.equal(await status('GET', DEALS, alice.headers, undefined, other), 200)
    t.equal(await status('GET', DEALS, alice.headers), 200)
    await database.db.updateTable('organizations').set({ is_active: false }).where('id', '=', acme.orgId).execute()
    const elsewhere = until(401, () => status('GET', DEALS, alice.headers, undefined, other))
    const here = until(401, () => status('GET', DEALS, alice.headers))
    t.ok((await elsewhere) < OTHER_PROCESS_BOUND_MS, 'an organization deactivated by SQL is refused over there within the bound')
    t.ok((await here) < OTHER_PROCESS_BOUND_MS, 'and here')
    await database.db.updateTable('organizations').set({ is_active: true }).where('id', '=', acme.orgId).execute()
    await until(200, () => status('GET', DEALS, alice.headers))
  })

  t.test('while the LISTEN connection is down nothing is served from the cache', async (t) => {
    t.equal(await status('GET', DEALS, alice.headers), 200, 'cached as active')
    await sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ${database.name} AND application_name = 'crm-deals-listener'`.execute(database.db)
    // Written while nobody listens for it: the trigger's NOTIFY reaches no one.
    await sql`ALTER TABLE profiles DISABLE TRIGGER profiles_lookups_changed`.execute(database.db)
    await database.db.updateTable('profiles').set({ is_active: false }).where('id', '=', alice.profileId).execute()
    await sql`ALTER TABLE profiles ENABLE TRIGGER profiles_lookups_changed`.execute(database.db)
    // Without the bypass the stale entry would answer 200 until the reconnect (1 s) or its maximum age (5 s).
    t.ok((await until(401, () => status('GET', DEALS, alice.headers))) < 500, 'refused as soon as the drop is noticed')
  })
})
