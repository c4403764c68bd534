import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import t from 'tap'
import { goalsProjector } from '../../src/projections/goals.ts'
import { rebuildProjection } from '../../src/projections/rebuild.ts'
import { FIXED_NOW } from '../helpers/app.ts'
import { givenTwoOrganizations } from '../helpers/fixtures.ts'
import type { Headers } from '../helpers/fixtures.ts'

const GOALS = '/api/opportunities/goals/'
const Q4 = { period_start: '2026-10-01', period_end: '2026-12-31' }

t.test('/api/opportunities/goals/: progress from won deals (by stage kind), history, leaderboard, rules', async (t) => {
  let now = FIXED_NOW
  const { app, database, store, acme, globex, alice, bob } = await givenTwoOrganizations(t, { clock: () => now })
  const admin = acme.admin.headers
  const inject = (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, headers: Headers = admin, payload?: object) => app.inject({ method, url, headers, payload })
  const ok = async (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, headers: Headers, payload: object | undefined, status: number) => {
    const res = await inject(method, url, headers, payload)
    t.equal(res.statusCode, status, `${method} ${url}: ${res.body}`)
    return res.json()
  }
  const deal = async (payload: object, headers: Headers = admin) => (await ok('POST', '/api/opportunities/', headers, payload, 200)).id as string
  const patchDeal = (id: string, payload: object) => ok('PATCH', `/api/opportunities/${id}/`, admin, payload, 200)
  const move = (id: string, column_id: string) => ok('PATCH', `/api/opportunities/${id}/move/`, admin, { column_id }, 200)
  const setGoal = async (payload: object) => ok('POST', GOALS, admin, payload, 201)
  const goal = async (id: string, headers: Headers = admin) => ok('GET', `${GOALS}${id}/`, headers, undefined, 200)
  const progress = async (id: string) => {
    const { achieved_amount, progress_percent, won_deals_count } = await goal(id)
    return { achieved_amount, progress_percent, won_deals_count }
  }
  const board = async (query: string, headers: Headers = admin) =>
    (await ok('GET', `${GOALS}leaderboard/${query}`, headers, undefined, 200)).results.map((r: { profile: { name: string }; won_amount: string; won_deals_count: number; rank: number }) => [r.rank, r.profile.name, r.won_amount, r.won_deals_count])

  // The cast: the Sales team (Alice, Bob), a custom won stage with its own code.
  const sales = (await ok('POST', '/api/teams/', admin, { name: 'Sales', users: [alice.profileId, bob.profileId] }, 201)).id as string
  const pipeline = (await ok('GET', '/api/opportunities/pipelines/', admin, undefined, 200)).pipelines[0].id as string
  await ok('POST', `/api/opportunities/pipelines/${pipeline}/stages/`, admin, { label: 'Signed', kind: 'won' }, 201)

  // The scripted history of Q4 2026 (now is 2026-11-22).
  const won = (amount: string, closed_on: string, more: object = {}) => ({ stage: 'CLOSED_WON', amount, closed_on, ...more })
  await deal({ name: 'D1 won at creation', ...won('1000.10', '2026-10-05'), assigned_to: [alice.profileId] })
  const d2 = await deal({ name: 'D2 unassigned, by Alice', amount: 200 }, alice.headers)
  await patchDeal(d2, won('250.25', '2026-11-10'))
  const d3 = await deal({ name: 'D3 board move', amount: '400', assigned_to: [bob.profileId] })
  await move(d3, 'CLOSED_WON')
  const d4 = await deal({ name: 'D4 won then reopened', amount: '999', assigned_to: [alice.profileId] })
  await patchDeal(d4, won('999', '2026-11-01'))
  await move(d4, 'PROPOSAL')
  await deal({ name: 'D5 in euros', ...won('5000', '2026-11-02', { currency: 'EUR' }), assigned_to: [alice.profileId] })
  await deal({ name: 'D6 closed in September', ...won('77', '2026-09-30'), assigned_to: [alice.profileId] })
  const d7 = await deal({ name: 'D7 custom won stage', amount: '300', closed_on: '2026-12-01', assigned_to: [bob.profileId] })
  await move(d7, 'SIGNED')
  const d8 = await deal({ name: 'D8 won then deleted', ...won('50', '2026-10-10'), assigned_to: [alice.profileId] })
  t.equal((await inject('DELETE', `/api/opportunities/${d8}/`)).statusCode, 200)
  await deal({ name: 'D9 two assignees', ...won('100', '2026-10-20'), assigned_to: [alice.profileId, bob.profileId] })
  await deal({ name: 'D10 the admin', ...won('800', '2026-11-05'), assigned_to: [acme.admin.profileId] })
  await deal({ name: 'D11 lost', stage: 'CLOSED_LOST', amount: '123', closed_on: '2026-11-05', assigned_to: [alice.profileId] })
  await deal({ name: 'Globex win', ...won('10000', '2026-11-05') }, globex.admin.headers)

  const g1 = await setGoal({ name: 'Alice Q4', profile: alice.profileId, ...Q4, target_amount: 2000 })
  const g2 = await setGoal({ name: 'Sales Q4', team: sales, ...Q4, target_amount: '4100.70', currency: 'usd' })
  const g3 = await setGoal({ name: 'Alice Q4 EUR', profile: alice.profileId, ...Q4, target_amount: '5000', currency: 'EUR' })
  const g4 = await setGoal({ name: 'Alice September', profile: alice.profileId, period_start: '2026-09-01', period_end: '2026-09-30', target_amount: '100.00' })

  t.test('POST answers the goal with its progress: exact sums of won-kind deals closed in the period, in its currency', async (t) => {
    t.same(g1, {
      id: g1.id, name: 'Alice Q4', owner_type: 'profile', owner: { id: alice.profileId, name: 'alice@acme.test' }, ...Q4,
      target_amount: '2000.00', currency: 'USD', achieved_amount: '1350.35', progress_percent: '67.5', won_deals_count: 3,
    }, 'D1 (assigned), D2 (unassigned: its creator), D9 (co-assigned); not D4 (reopened), D5 (EUR), D6 (September), D8 (deleted), D11 (lost)')
    t.match(g2, { owner_type: 'team', owner: { id: sales, name: 'Sales' }, currency: 'USD', achieved_amount: '2050.35', progress_percent: '50.0', won_deals_count: 5 }, 'members\' deals, D9 once; D3 by board move, D7 in the custom won stage SIGNED')
    t.match(g3, { currency: 'EUR', achieved_amount: '5000.00', progress_percent: '100.0', won_deals_count: 1 })
    t.match(g4, { achieved_amount: '77.00', progress_percent: '77.0', won_deals_count: 1 })
  })

  t.test('progress follows later deal events: amount edits, reopening, re-winning, reassignment', async (t) => {
    await patchDeal(d2, { amount: '300.25' })
    t.same(await progress(g1.id), { achieved_amount: '1400.35', progress_percent: '70.0', won_deals_count: 3 })
    await move(d4, 'CLOSED_WON')
    t.same(await progress(g1.id), { achieved_amount: '2399.35', progress_percent: '120.0', won_deals_count: 4 }, 'won again (closed_on kept): counts, and progress may pass 100')
    await move(d4, 'NEGOTIATION')
    await patchDeal(d2, { assigned_to: [bob.profileId] })
    t.same(await progress(g1.id), { achieved_amount: '1100.10', progress_percent: '55.0', won_deals_count: 2 }, 'an assignee replaces the creator')
    t.match(await progress(g2.id), { achieved_amount: '2100.35', won_deals_count: 5 }, 'still a member\'s deal for the team')
    await patchDeal(d2, { assigned_to: [], amount: '250.25' })
    t.same(await progress(g1.id), { achieved_amount: '1350.35', progress_percent: '67.5', won_deals_count: 3 }, 'back to its creator')
  })

  t.test('a team goal counts the team\'s current members', async (t) => {
    await ok('PATCH', `/api/teams/${sales}/`, admin, { users: [alice.profileId] }, 200)
    t.match(await progress(g2.id), { achieved_amount: '1350.35', won_deals_count: 3 })
    await ok('PATCH', `/api/teams/${sales}/`, admin, { users: [alice.profileId, bob.profileId] }, 200)
    t.match(await progress(g2.id), { achieved_amount: '2050.35', won_deals_count: 5 })
  })

  t.test('GET list (members, newest period first, then name) and history (ended periods only, by the clock)', async (t) => {
    const list = await ok('GET', GOALS, alice.headers, undefined, 200)
    t.match(list, { count: 4, offset: 0, limit: 10 })
    t.same(list.results.map((g: { name: string }) => g.name), ['Alice Q4', 'Alice Q4 EUR', 'Sales Q4', 'Alice September'])
    t.same((await ok('GET', `${GOALS}?limit=2&offset=1`, bob.headers, undefined, 200)).results.map((g: { name: string }) => g.name), ['Alice Q4 EUR', 'Sales Q4'])
    const history = await ok('GET', `${GOALS}history/`, bob.headers, undefined, 200)
    t.match(history, { count: 1, results: [{ id: g4.id, achieved_amount: '77.00', progress_percent: '77.0' }] })
    now = new Date('2027-01-05T12:00:00Z')
    t.teardown(() => void (now = FIXED_NOW))
    const later = await ok('GET', `${GOALS}history/`, bob.headers, undefined, 200)
    t.same(later.results.map((g: { name: string; achieved_amount: string }) => [g.name, g.achieved_amount]), [['Alice Q4', '1350.35'], ['Alice Q4 EUR', '5000.00'], ['Sales Q4', '2050.35'], ['Alice September', '77.00']], 'latest end first, then name, with their final numbers')
    now = new Date('2026-12-31T12:00:00Z')
    t.equal((await ok('GET', `${GOALS}history/`, bob.headers, undefined, 200)).count, 1, 'the last day of a period is not ended yet')
  })

  t.test('leaderboard: profiles by won amount, ties by name; currency and period filters', async (t) => {
    t.same(await board('?period_start=2026-10-01&period_end=2026-12-31', alice.headers), [
      [1, 'alice@acme.test', '1350.35', 3],
      [2, 'admin@acme.test', '800.00', 1],
      [3, 'bob@acme.test', '800.00', 3],
    ])
    t.same(await board('?period_start=2026-10-01&period_end=2026-12-31&currency=eur'), [[1, 'alice@acme.test', '5000.00', 1]])
    t.same(await board('?period_start=2026-09-01&period_end=2026-10-05'), [[1, 'alice@acme.test', '1077.10', 2]])
    t.same(await board('?period_start=2026-12-01&period_end=2026-12-01'), [[1, 'bob@acme.test', '300.00', 1]], 'a one-day period, D7 in SIGNED')
    t.same(await board('?period_start=2025-01-01&period_end=2025-12-31'), [])
    t.match(await ok('GET', `${GOALS}leaderboard/?period_start=2026-10-01&period_end=2026-12-31`, admin, undefined, 200), { period_start: '2026-10-01', period_end: '2026-12-31', currency: 'USD' })
    t.same(await board('?period_start=2026-10-01&period_end=2026-12-31', globex.admin.headers), [[1, 'admin@globex.test', '10000.00', 1]], 'the other tenant sees only its own')
  })

  t.test('PUT replaces (admins): owner, period, target; currency back to the default when left out', async (t) => {
    const put = await ok('PUT', `${GOALS}${g3.id}/`, admin, { name: 'Bob Q4', profile: bob.profileId, ...Q4, target_amount: '1600' }, 200)
    t.match(put, { name: 'Bob Q4', owner_type: 'profile', owner: { id: bob.profileId, name: 'bob@acme.test' }, currency: 'USD', target_amount: '1600.00', achieved_amount: '800.00', progress_percent: '50.0', won_deals_count: 3 })
    const narrowed = await ok('PUT', `${GOALS}${g3.id}/`, admin, { name: 'Bob November', profile: bob.profileId, period_start: '2026-11-01', period_end: '2026-11-30', target_amount: '1600' }, 200)
    t.match(narrowed, { achieved_amount: '400.00', won_deals_count: 1 }, 'D3 only (board move today)')
    t.same(await goal(g3.id, alice.headers), narrowed, 'members read the detail')
  })

  t.test('400: invalid bodies, in the module error shape', async (t) => {
    const valid = { name: 'X', profile: alice.profileId, ...Q4, target_amount: '10' }
    const cases: [object, Record<string, unknown>][] = [
      [{ ...valid, team: sales }, { profile: ['Expected exactly one of profile or team.'], team: ['Expected exactly one of profile or team.'] }],
      [{ ...valid, profile: undefined }, { profile: ['Expected exactly one of profile or team.'], team: ['Expected exactly one of profile or team.'] }],
      [{ ...valid, period_end: '2026-09-30' }, { period_end: ['Expected a date on or after period_start.'] }],
      [{ ...valid, period_start: '2026-02-30' }, { period_start: [/YYYY-MM-DD/] }],
      [{ ...valid, target_amount: '0' }, { target_amount: ['Expected an amount above 0.'] }],
      [{ ...valid, target_amount: '-3' }, { target_amount: [/non-negative decimal/] }],
      [{ ...valid, target_amount: '1.234' }, { target_amount: [/2 after the point/] }],
      [{ ...valid, currency: 'XYZ' }, { currency: [/ISO 4217/] }],
      [{ ...valid, name: ' ' }, { name: ['This field may not be blank.'] }],
      [{ ...valid, profile: 'nope' }, { profile: ['Expected an id (uuid).'] }],
      [{ ...valid, profile: globex.admin.profileId }, { profile: [`Expected active profiles of this organization; not: ${globex.admin.profileId}`] }],
      [{ ...valid, profile: undefined, team: randomUUID() }, { team: [/Expected teams of this organization/] }],
    ]
    for (const [payload, errors] of cases) {
      const res = await inject('POST', GOALS, admin, payload)
      t.equal(res.statusCode, 400, JSON.stringify(payload))
      t.match(res.json(), { error: true, errors }, JSON.stringify(errors))
    }
    const put = await inject('PUT', `${GOALS}${g1.id}/`, admin, { ...valid, period_end: '2026-01-01' })
    t.match({ status: put.statusCode, body: put.json() }, { status: 400, body: { error: true, errors: { period_end: [/on or after/] } } })
    const board400 = await inject('GET', `${GOALS}leaderboard/?period_start=2026-10-01`)
    t.match({ status: board400.statusCode, body: board400.json() }, { status: 400, body: { error: true, errors: { period_end: [/YYYY-MM-DD|expected/i] } } })
    const reversed = await inject('GET', `${GOALS}leaderboard/?period_start=2026-10-01&period_end=2026-09-01`)
    t.match({ status: reversed.statusCode, body: reversed.json() }, { status: 400, body: { error: true, errors: { period_end: ['Expected a date on or after period_start.'] } } })
    t.equal((await ok('GET', GOALS, admin, undefined, 200)).count, 4, 'nothing was written')
  })

  t.test('403: non-admins may not write; 401 without a credential', async (t) => {
    const body = { name: 'Mine', profile: alice.profileId, ...Q4, target_amount: '10' }
    for (const [method, url] of [['POST', GOALS], ['PUT', `${GOALS}${g1.id}/`], ['DELETE', `${GOALS}${g1.id}/`]] as const) {
      const res = await inject(method, url, alice.headers, method === 'DELETE' ? undefined : body)
      t.match({ status: res.statusCode, body: res.json() }, { status: 403, body: { error: true, errors: 'Only an organization admin may do this' } }, `${method} ${url}`)
    }
    t.equal((await inject('GET', GOALS, {})).statusCode, 401)
    t.match(await goal(g1.id), { name: 'Alice Q4', target_amount: '2000.00' }, 'unchanged')
  })

  t.test('404: another organization\'s goal, a missing or malformed id; the other org lists nothing', async (t) => {
    const other = globex.admin.headers
    const body = { name: 'Taken', profile: globex.admin.profileId, ...Q4, target_amount: '10' }
    for (const [method, url] of [['GET', `${GOALS}${g1.id}/`], ['PUT', `${GOALS}${g1.id}/`], ['DELETE', `${GOALS}${g1.id}/`], ['GET', `${GOALS}${randomUUID()}/`], ['GET', `${GOALS}not-an-id/`]] as const) {
      const res = await inject(method, url, other, method === 'PUT' ? body : undefined)
      t.match({ status: res.statusCode, body: res.json() }, { status: 404, body: { error: true } }, `${method} ${url}`)
    }
    t.match(await ok('GET', GOALS, other, undefined, 200), { count: 0, results: [] })
    t.match(await ok('GET', `${GOALS}history/`, other, undefined, 200), { count: 0, results: [] })
    const own = await ok('POST', GOALS, other, body, 201)
    t.match(own, { owner: { name: 'admin@globex.test' }, achieved_amount: '10000.00', progress_percent: '100000.0' }, 'its own deals only')
    t.equal((await ok('GET', GOALS, admin, undefined, 200)).count, 4, 'and Acme does not see it')
  })

  t.test('the projection rebuilds to the same rows', async (t) => {
    const rows = async () => ({
      goals: (await sql`SELECT * FROM goals ORDER BY id`.execute(database.db)).rows,
      deals: (await sql`SELECT * FROM goal_deals ORDER BY deal_id`.execute(database.db)).rows,
    })
    const before = await rows()
    t.equal(before.deals.length, 12, "D1 to D11 and the Globex deal")
    const answers = await ok('GET', `${GOALS}?limit=100`, admin, undefined, 200)
    await rebuildProjection(database.db, store, goalsProjector)
    t.same(await rows(), before)
    t.same(await ok('GET', `${GOALS}?limit=100`, admin, undefined, 200), answers)
  })

  t.test('DELETE removes the goal for good (admins)', async (t) => {
    t.match(await ok('DELETE', `${GOALS}${g4.id}/`, admin, undefined, 200), { error: false, message: 'Goal deleted' })
    t.equal((await inject('GET', `${GOALS}${g4.id}/`)).statusCode, 404)
    t.equal((await inject('DELETE', `${GOALS}${g4.id}/`)).statusCode, 404)
    t.equal((await ok('GET', GOALS, admin, undefined, 200)).count, 3)
  })
})
