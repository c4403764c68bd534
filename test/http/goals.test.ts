import { randomUUID } from 'node:crypto'
import t from 'tap'
import { goalsProjector } from '../../src/projections/goal/goals.ts'
import { FIXED_NOW } from '../helpers/app.ts'
import { givenTwoOrganizations } from '../helpers/fixtures.ts'
import type { Headers } from '../helpers/fixtures.ts'
import { rebuildEqualsLive } from '../helpers/read-models.ts'

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
    const { progress_value, progress_percent, status } = await goal(id)
    return { progress_value, progress_percent, status }
  }
  const board = async (query: string, headers: Headers = admin) =>
    (await ok('GET', `${GOALS}leaderboard/${query}`, headers, undefined, 200)).leaderboard.map((r: { user: { name: string }; goal_name: string; achieved: string; target: string; percent: number; rank: number }) => [r.rank, r.goal_name, r.user.name, r.achieved, r.target, r.percent])
  const names = (list: { goals: { name: string }[] }) => list.goals.map((g) => g.name)

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

  const g1 = await setGoal({ name: 'Alice Q4', goal_type: 'REVENUE', assigned_to: alice.profileId, period_type: 'QUARTERLY', ...Q4, target_value: 2000 })
  const g2 = await setGoal({ name: 'Sales Q4', goal_type: 'REVENUE', team: sales, assigned_to: null, period_type: 'QUARTERLY', ...Q4, target_value: '4100.70', currency: 'usd' })
  const g3 = await setGoal({ name: 'Alice Q4 EUR', goal_type: 'REVENUE', assigned_to: alice.profileId, period_type: 'QUARTERLY', ...Q4, target_value: '5000', currency: 'EUR' })
  const g4 = await setGoal({ name: 'Alice September', goal_type: 'REVENUE', assigned_to: alice.profileId, period_type: 'MONTHLY', period_start: '2026-09-01', period_end: '2026-09-30', target_value: '100.00' })
  const g5 = await setGoal({ name: 'Company deals Q4', goal_type: 'DEALS_CLOSED', assigned_to: '', team: '', period_type: 'QUARTERLY', ...Q4, target_value: '20' })

  t.test('POST answers the goal as the original serializes it, with progress from won-kind deals closed in the period', async (t) => {
    t.same(g1, {
      id: g1.id, name: 'Alice Q4', goal_type: 'REVENUE', target_value: '2000.00', period_type: 'QUARTERLY', ...Q4,
      assigned_to: alice.profileId,
      assigned_to_detail: { id: alice.profileId, user_details: { id: g1.assigned_to_detail.user_details.id, email: 'alice@acme.test', first_name: '', last_name: '', name: 'alice@acme.test' }, role: 'USER', is_active: true, phone: '', created_at: g1.assigned_to_detail.created_at },
      team: null, team_detail: null, is_active: true, currency: 'USD', org: acme.orgId, created_at: FIXED_NOW.toISOString(), updated_at: FIXED_NOW.toISOString(),
      progress_value: '1350.35', progress_percent: 67, status: 'on_track',
    }, 'D1 (assigned), D2 (unassigned: its creator), D9 (co-assigned); not D4 (reopened), D5 (EUR), D6 (September), D8 (deleted), D11 (lost); 67% against 57% of Q4 elapsed')
    t.match(g2, { assigned_to: null, assigned_to_detail: null, team: sales, team_detail: { id: sales, name: 'Sales' }, currency: 'USD', progress_value: '2050.35', progress_percent: 50, status: 'at_risk' }, "members' deals, D9 once; D3 by board move, D7 in the custom won stage SIGNED; 50% is at least 80% of the pace")
    t.match(g3, { currency: 'EUR', progress_value: '5000.00', progress_percent: 100, status: 'completed' })
    t.match(g4, { progress_value: '77.00', progress_percent: 77, status: 'behind' }, 'ended: the pace is 100')
    t.match(g5, { assigned_to: null, team: null, goal_type: 'DEALS_CLOSED', target_value: '20.00', progress_value: '7.00', progress_percent: 35 }, 'the whole organization: D1, D2, D3, D5 (any currency), D7, D9, D10')
  })

  t.test('progress follows later deal events: amount edits, reopening, re-winning, reassignment', async (t) => {
    await patchDeal(d2, { amount: '300.25' })
    t.same(await progress(g1.id), { progress_value: '1400.35', progress_percent: 70, status: 'on_track' })
    await move(d4, 'CLOSED_WON')
    t.same(await progress(g1.id), { progress_value: '2399.35', progress_percent: 100, status: 'completed' }, 'won again (closed_on kept): counts, and the percent stops at 100')
    t.match(await progress(g5.id), { progress_value: '8.00' })
    await move(d4, 'NEGOTIATION')
    await patchDeal(d2, { assigned_to: [bob.profileId] })
    t.same(await progress(g1.id), { progress_value: '1100.10', progress_percent: 55, status: 'at_risk' }, 'an assignee replaces the creator')
    t.match(await progress(g2.id), { progress_value: '2100.35' }, "still a member's deal for the team")
    await patchDeal(d2, { assigned_to: [], amount: '250.25' })
    t.same(await progress(g1.id), { progress_value: '1350.35', progress_percent: 67, status: 'on_track' }, 'back to its creator')
  })

  t.test("a team goal counts the team's current members", async (t) => {
    await ok('PATCH', `/api/teams/${sales}/`, admin, { users: [alice.profileId] }, 200)
    t.match(await progress(g2.id), { progress_value: '1350.35' })
    await ok('PATCH', `/api/teams/${sales}/`, admin, { users: [alice.profileId, bob.profileId] }, 200)
    t.match(await progress(g2.id), { progress_value: '2050.35' })
  })

  t.test("GET list: the original's envelope, newest first; members read their own and their teams' goals; filters; history", async (t) => {
    const list = await ok('GET', GOALS, admin, undefined, 200)
    t.match(list, { goals_count: 5, offset: null, per_page: 10 })
    t.same(names(list), ['Alice Q4', 'Alice Q4 EUR', 'Alice September', 'Company deals Q4', 'Sales Q4'], 'one clock tick: by name')
    t.same(names(await ok('GET', GOALS, alice.headers, undefined, 200)), ['Alice Q4', 'Alice Q4 EUR', 'Alice September', 'Sales Q4'], "Alice: hers and her team's")
    t.same(names(await ok('GET', GOALS, bob.headers, undefined, 200)), ['Sales Q4'], "Bob: his team's")
    t.match(await ok('GET', `${GOALS}?limit=2&offset=1`, admin, undefined, 200), { goals_count: 5, offset: 3, per_page: 2, goals: [{ name: 'Alice Q4 EUR' }, { name: 'Alice September' }] })
    t.same(names(await ok('GET', `${GOALS}?limit=1000`, admin, undefined, 200)).length, 5, 'what the web app asks')
    t.same(names(await ok('GET', `${GOALS}?current=true&period_type=QUARTERLY&search=alice`, admin, undefined, 200)), ['Alice Q4', 'Alice Q4 EUR'])
    t.same(names(await ok('GET', `${GOALS}?team=${sales}`, admin, undefined, 200)), ['Sales Q4'])
    t.same(names(await ok('GET', `${GOALS}?assigned_to=${alice.profileId}&active=true`, admin, undefined, 200)), ['Alice Q4', 'Alice Q4 EUR', 'Alice September'])
    const history = await ok('GET', `${GOALS}history/`, alice.headers, undefined, 200)
    t.match(history, { goals_count: 1, goals: [{ id: g4.id, progress_value: '77.00', progress_percent: 77 }] })
    now = new Date('2027-01-05T12:00:00Z')
    t.teardown(() => void (now = FIXED_NOW))
    const later = await ok('GET', `${GOALS}history/`, admin, undefined, 200)
    t.same(later.goals.map((g: { name: string; progress_value: string }) => [g.name, g.progress_value]), [['Alice Q4', '1350.35'], ['Alice Q4 EUR', '5000.00'], ['Company deals Q4', '7.00'], ['Sales Q4', '2050.35'], ['Alice September', '77.00']], 'latest end first, then name, with their final numbers')
    now = new Date('2026-12-31T12:00:00Z')
    t.equal((await ok('GET', `${GOALS}history/`, admin, undefined, 200)).goals_count, 1, 'the last day of a period is not ended yet')
  })

  t.test('detail: a member reads only their own and their teams\' goals (403 otherwise)', async (t) => {
    t.match(await goal(g2.id, bob.headers), { name: 'Sales Q4' })
    for (const id of [g1.id, g5.id]) {
      const res = await inject('GET', `${GOALS}${id}/`, bob.headers)
      t.match({ status: res.statusCode, body: res.json() }, { status: 403, body: { error: true, errors: 'You do not have permission.' } })
    }
  })

  t.test('leaderboard: current active goals of one period type assigned to a profile, by percent', async (t) => {
    t.same(await board('?period_type=QUARTERLY'), [
      [1, 'Alice Q4 EUR', 'alice@acme.test', '5000.00', '5000.00', 100],
      [2, 'Alice Q4', 'alice@acme.test', '1350.35', '2000.00', 67],
    ], 'not the team goal, nor the organization one')
    t.same(await board('?period_type=QUARTERLY', alice.headers), await board('?period_type=QUARTERLY'))
    t.same(await board('?period_type=QUARTERLY', bob.headers), [], 'a member sees only what they may read')
    t.same(await board(''), [], 'MONTHLY by default: September has ended')
    t.same(await board('?period_type=QUARTERLY', globex.admin.headers), [], 'the other tenant sees only its own')
    const bad = await inject('GET', `${GOALS}leaderboard/?period_type=WEEKLY`)
    t.match({ status: bad.statusCode, body: bad.json() }, { status: 400, body: { error: true, errors: { period_type: [String] } } })
  })

  t.test('PUT changes the fields given (admins), as the web form sends them', async (t) => {
    const put = await ok('PUT', `${GOALS}${g3.id}/`, admin, { name: 'Bob Q4', goal_type: 'REVENUE', target_value: '1600', period_type: 'QUARTERLY', ...Q4, assigned_to: bob.profileId, team: null, is_active: true }, 200)
    t.match(put, { name: 'Bob Q4', assigned_to: bob.profileId, assigned_to_detail: { user_details: { name: 'bob@acme.test' } }, currency: 'EUR', target_value: '1600.00', progress_value: '0.00' }, 'the currency stays when not given')
    const narrowed = await ok('PUT', `${GOALS}${g3.id}/`, admin, { name: 'Bob November', period_type: 'MONTHLY', period_start: '2026-11-01', period_end: '2026-11-30', currency: null }, 200)
    t.match(narrowed, { assigned_to: bob.profileId, currency: 'USD', progress_value: '400.00', progress_percent: 25 }, 'D3 only (board move today); null currency: the default')
    t.same(await board(''), [[1, 'Bob November', 'bob@acme.test', '400.00', '1600.00', 25]], 'now on the MONTHLY board')
    t.match(await ok('PUT', `${GOALS}${g3.id}/`, admin, { is_active: false }, 200), { is_active: false, name: 'Bob November' })
    t.same(await board(''), [], 'inactive goals leave the board')
    t.match(await ok('PUT', `${GOALS}${g3.id}/`, admin, { team: sales }, 200), { assigned_to: null, team: sales }, 'a team alone re-targets the goal')
    t.match(await ok('PUT', `${GOALS}${g3.id}/`, admin, { assigned_to: null, team: null, goal_type: 'DEALS_CLOSED', target_value: 4 }, 200), { assigned_to: null, team: null, progress_value: '4.00', progress_percent: 100, status: 'completed' }, 'the whole organization: D2, D3, D5, D10')
  })

  t.test('400: invalid bodies, in the module error shape', async (t) => {
    const valid = { name: 'X', goal_type: 'REVENUE', period_type: 'CUSTOM', assigned_to: alice.profileId, ...Q4, target_value: '10' }
    const cases: [object, Record<string, unknown>][] = [
      [{ ...valid, team: sales }, { assigned_to: ['Expected at most one of assigned_to and team.'], team: ['Expected at most one of assigned_to and team.'] }],
      [{ ...valid, period_end: '2026-09-30' }, { period_end: ['Period end must be after period start.'] }],
      [{ ...valid, period_end: Q4.period_start }, { period_end: ['Period end must be after period start.'] }],
      [{ ...valid, period_start: '2026-02-30' }, { period_start: [/YYYY-MM-DD/] }],
      [{ ...valid, target_value: '0' }, { target_value: ['Target value must be greater than 0.'] }],
      [{ ...valid, target_value: '-3' }, { target_value: [/non-negative decimal/] }],
      [{ ...valid, target_value: '1.234' }, { target_value: [/2 after the point/] }],
      [{ ...valid, target_value: undefined }, { target_value: ['This field is required.'] }],
      [{ ...valid, goal_type: 'PROFIT' }, { goal_type: [String] }],
      [{ ...valid, period_type: 'WEEKLY' }, { period_type: [String] }],
      [{ ...valid, currency: 'XYZ' }, { currency: [/ISO 4217/] }],
      [{ ...valid, name: ' ' }, { name: ['This field may not be blank.'] }],
      [{ ...valid, assigned_to: 'nope' }, { assigned_to: ['Expected an id (uuid).'] }],
      [{ ...valid, assigned_to: globex.admin.profileId }, { assigned_to: [`Expected active profiles of this organization; not: ${globex.admin.profileId}`] }],
      [{ ...valid, assigned_to: undefined, team: randomUUID() }, { team: [/Expected teams of this organization/] }],
    ]
    for (const [payload, errors] of cases) {
      const res = await inject('POST', GOALS, admin, payload)
      t.equal(res.statusCode, 400, JSON.stringify(payload))
      t.match(res.json(), { error: true, errors }, JSON.stringify(errors))
    }
    const put = await inject('PUT', `${GOALS}${g1.id}/`, admin, { period_end: '2026-01-01' })
    t.match({ status: put.statusCode, body: put.json() }, { status: 400, body: { error: true, errors: { period_end: [/after period start/] } } })
    t.equal((await ok('GET', GOALS, admin, undefined, 200)).goals_count, 5, 'nothing was written')
  })

  t.test('deprecated aliases: profile and target_amount', async (t) => {
    const aliased = await setGoal({ name: 'Aliased', profile: alice.profileId, ...Q4, target_amount: '10' })
    t.match(aliased, { assigned_to: alice.profileId, target_value: '10.00', goal_type: 'REVENUE', period_type: 'CUSTOM' }, 'goal_type and period_type default')
    await ok('DELETE', `${GOALS}${aliased.id}/`, admin, undefined, 200)
  })

  t.test('403: non-admins may not write; 401 without a credential', async (t) => {
    const body = { name: 'Mine', assigned_to: alice.profileId, ...Q4, target_value: '10' }
    for (const [method, url] of [['POST', GOALS], ['PUT', `${GOALS}${g1.id}/`], ['DELETE', `${GOALS}${g1.id}/`]] as const) {
      const res = await inject(method, url, alice.headers, method === 'DELETE' ? undefined : body)
      t.match({ status: res.statusCode, body: res.json() }, { status: 403, body: { error: true, errors: 'Only an organization admin may do this' } }, `${method} ${url}`)
    }
    t.equal((await inject('GET', GOALS, {})).statusCode, 401)
    t.match(await goal(g1.id), { name: 'Alice Q4', target_value: '2000.00' }, 'unchanged')
  })

  t.test("404: another organization's goal, a missing or malformed id; the other org lists nothing", async (t) => {
    const other = globex.admin.headers
    const body = { name: 'Taken', assigned_to: globex.admin.profileId, ...Q4, target_value: '10' }
    for (const [method, url] of [['GET', `${GOALS}${g1.id}/`], ['PUT', `${GOALS}${g1.id}/`], ['DELETE', `${GOALS}${g1.id}/`], ['GET', `${GOALS}${randomUUID()}/`], ['GET', `${GOALS}not-an-id/`]] as const) {
      const res = await inject(method, url, other, method === 'PUT' ? body : undefined)
      t.match({ status: res.statusCode, body: res.json() }, { status: 404, body: { error: true } }, `${method} ${url}`)
    }
    t.match(await ok('GET', GOALS, other, undefined, 200), { goals_count: 0, goals: [] })
    t.match(await ok('GET', `${GOALS}history/`, other, undefined, 200), { goals_count: 0, goals: [] })
    const own = await ok('POST', GOALS, other, body, 201)
    t.match(own, { assigned_to_detail: { user_details: { name: 'admin@globex.test' } }, progress_value: '10000.00', progress_percent: 100 }, 'its own deals only')
    t.equal((await ok('GET', GOALS, admin, undefined, 200)).goals_count, 5, 'and Acme does not see it')
  })

  t.test('the projection rebuilds to the same rows', async (t) => {
    const live = await rebuildEqualsLive(t, { db: database.db, store }, goalsProjector, { answers: () => ok('GET', `${GOALS}?limit=100`, admin, undefined, 200) })
    t.equal(live.goal_deals!.length, 12, 'D1 to D11 and the Globex deal')
  })

  t.test('DELETE removes the goal for good (admins)', async (t) => {
    t.match(await ok('DELETE', `${GOALS}${g4.id}/`, admin, undefined, 200), { error: false, message: 'Goal Deleted Successfully' })
    t.equal((await inject('GET', `${GOALS}${g4.id}/`)).statusCode, 404)
    t.equal((await inject('DELETE', `${GOALS}${g4.id}/`)).statusCode, 404)
    t.equal((await ok('GET', GOALS, admin, undefined, 200)).goals_count, 4)
  })
})
