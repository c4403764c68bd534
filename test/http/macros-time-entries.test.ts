import t from 'tap'
import { macrosProjector } from '../../src/projections/macro/macros.ts'
import { timeEntriesProjector } from '../../src/projections/time-entry/time-entries.ts'
import { createTimerAutoStop } from '../../src/processes/timer-auto-stop.ts'
import { FIXED_NOW, buildTestApp } from '../helpers/app.ts'
import { givenOrganization } from '../helpers/identity.ts'
import { jsonClient } from '../helpers/fixtures.ts'
import { rebuildEqualsLive } from '../helpers/read-models.ts'
import { silentLogger } from '../helpers/runner.ts'

type Headers = Record<string, string>
type Json = Record<string, any>

t.test('/api/macros/ and time tracking (issue 32)', async (t) => {
  let now = FIXED_NOW
  const { app, database, store, projections } = await buildTestApp(t, { clock: () => now })
  const acme = await givenOrganization(app, database.db, 'Acme')
  const globex = await givenOrganization(app, database.db, 'Globex')
  const alice = await acme.addMember('alice@acme.test')
  const bob = await acme.addMember('bob@acme.test')
  const admin = acme.admin.headers
  const { call, ok } = jsonClient(app, admin)
  const account = (await ok('POST', '/api/accounts/', admin, { name: 'Initech' })).id
  const contact = (await ok('POST', '/api/contacts/', admin, { first_name: 'Peter', last_name: 'Gibbons', email: 'peter@initech.test', account })).id
  const printer = (await ok('POST', '/api/cases/', admin, { name: 'Printer on fire', account, contacts: [contact], assigned_to: [alice.profileId] })).id
  const fax = (await ok('POST', '/api/cases/', admin, { name: 'Fax jammed', assigned_to: [alice.profileId] })).id
  const hidden = (await ok('POST', '/api/cases/', admin, { name: 'Board only' })).id
  const globexCase = (await ok('POST', '/api/cases/', globex.admin.headers, { name: 'Globex case' })).id

  t.test('macros: scopes, owners and who sees what', async (t) => {
    const shared = await ok('POST', '/api/macros/', admin, { title: 'Thanks', body: 'Hi %customer_name% (%customer_email%), re %case_subject% [%case_id%] from %agent_name% <%agent_email%> at %org_name%. %priority% %priority%' })
    t.match(shared, { scope: 'org', owner: null, owner_name: null, is_active: true, usage_count: 0, unknown_placeholders: ['%priority%'] })
    t.equal((await call('POST', '/api/macros/', alice.headers, { title: 'Mine?', body: 'x', scope: 'org' })).statusCode, 403, 'a member may not make an org macro')
    now = new Date(FIXED_NOW.getTime() + 60_000) // edited later: first in the list
    const mine = await ok('POST', '/api/macros/', alice.headers, { title: 'Sign-off', body: 'Cheers, %agent_name%', scope: 'personal' })
    t.match(mine, { scope: 'personal', owner: alice.profileId, owner_name: 'alice@acme.test', unknown_placeholders: [] })
    t.equal((await call('POST', '/api/macros/', admin, { title: '', body: 'x' })).statusCode, 400)
    t.equal((await call('POST', '/api/macros/', admin, { title: 'x', body: 'x', scope: 'team' })).statusCode, 400)

    for (const [who, headers] of [['bob', bob.headers], ['the admin', admin]] as const) {
      t.equal((await call('GET', `/api/macros/${mine.id}/`, headers)).statusCode, 404, `${who} does not see Alice's personal macro`)
      t.equal((await call('PATCH', `/api/macros/${mine.id}/`, headers, { title: 'Taken' })).statusCode, 404, `${who} may not edit it: a 404, not a 403`)
      t.equal((await call('DELETE', `/api/macros/${mine.id}/`, headers)).statusCode, 404)
      t.equal((await call('POST', `/api/macros/${mine.id}/render/`, headers, { case_id: printer })).statusCode, 404)
    }
    t.equal((await call('PATCH', `/api/macros/${shared.id}/`, alice.headers, { title: 'Mine now' })).statusCode, 403, 'a member sees an org macro but may not edit it')
    t.equal((await call('PATCH', `/api/macros/${mine.id}/`, alice.headers, { scope: 'org' })).statusCode, 403, 'nor share their own')
    t.equal((await call('GET', `/api/macros/${shared.id}/`, globex.admin.headers)).statusCode, 404)

    const list = await ok('GET', '/api/macros/', alice.headers)
    t.same(list.results.map((m: Json) => m.title), ['Sign-off', 'Thanks'], 'the org macros and her own, last edited first')
    t.same(list.totals, { count: 2, org: 1, personal: 1, inactive: 0, with_unknown_placeholders: 1 })
    t.equal(list.placeholders.length, 7)
    t.same((await ok('GET', '/api/macros/', bob.headers)).results.map((m: Json) => m.title), ['Thanks'])
    t.same((await ok('GET', '/api/macros/?search=CHEERS', alice.headers)).results.map((m: Json) => m.title), ['Sign-off'], 'search reads the body too')

    const put = await call('PUT', `/api/macros/${shared.id}/`, admin, { title: 'Thank you' })
    t.equal(put.statusCode, 400, 'PUT needs the title and the body')
    t.match(await ok('PATCH', `/api/macros/${mine.id}/`, alice.headers, { title: 'Sign off' }), { title: 'Sign off', owner: alice.profileId })
  })

  t.test('render: the case filled in, unknown tokens kept and reported, a use counted', async (t) => {
    const [shared] = (await ok('GET', '/api/macros/?search=Thanks')).results
    const rendered = await ok('POST', `/api/macros/${shared.id}/render/`, alice.headers, { case_id: printer })
    t.same(rendered, {
      rendered_body: `Hi Peter Gibbons (peter@initech.test), re Printer on fire [${printer}] from alice <alice@acme.test> at Acme. %priority% %priority%`,
      unknown_placeholders: ['%priority%'],
    })
    t.match((await ok('POST', `/api/macros/${shared.id}/render/`, alice.headers, { case_id: fax })).rendered_body, /^Hi {2}\(\), re Fax jammed/, 'a case without a contact fills its placeholders with nothing')
    t.equal((await ok('GET', `/api/macros/${shared.id}/`)).usage_count, 2)
    t.equal((await call('POST', `/api/macros/${shared.id}/render/`, alice.headers, { case_id: hidden })).statusCode, 400, 'a case she may not see is no case')
    t.equal((await call('POST', `/api/macros/${shared.id}/render/`, admin, { case_id: globexCase })).statusCode, 400, "another organization's case is no case")
    t.equal((await call('POST', `/api/macros/${shared.id}/render/`, admin, {})).statusCode, 400)
    t.equal((await ok('GET', `/api/macros/${shared.id}/`)).usage_count, 2, 'a refused render counts nothing')

    t.equal((await call('DELETE', `/api/macros/${shared.id}/`, alice.headers)).statusCode, 403)
    t.equal((await call('DELETE', `/api/macros/${shared.id}/`)).statusCode, 204)
    t.match(await ok('GET', `/api/macros/${shared.id}/`), { is_active: false }, 'an org macro is turned off, not removed')
    t.equal((await call('POST', `/api/macros/${shared.id}/render/`, admin, { case_id: printer })).statusCode, 400, 'an inactive macro is not applied')
    t.same((await ok('GET', '/api/macros/?active=false')).results.map((m: Json) => m.id), [shared.id])
    t.match(await ok('PATCH', `/api/macros/${shared.id}/`, admin, { is_active: true }), { is_active: true }, 'and turned back on')
    const [mine] = (await ok('GET', '/api/macros/?search=Cheers', alice.headers)).results
    t.equal((await call('DELETE', `/api/macros/${mine.id}/`, alice.headers)).statusCode, 204)
    t.equal((await call('GET', `/api/macros/${mine.id}/`, alice.headers)).statusCode, 404, 'a personal macro is deleted')
  })

  t.test('timers: one running per agent, whole minutes, stop once', async (t) => {
    now = FIXED_NOW
    const timer = await ok('POST', `/api/cases/${printer}/time-entries/start/`, alice.headers, { billable: true, description: 'On site' })
    t.match(timer, { case: printer, profile: { id: alice.profileId, user_details: { email: 'alice@acme.test' } }, started_at: FIXED_NOW.toISOString(), ended_at: null, duration_minutes: 0, is_running: true, billable: true, currency: 'USD', invoice: null, billed: false })
    const second = await call('POST', `/api/cases/${fax}/time-entries/start/`, alice.headers, {})
    t.equal(second.statusCode, 409)
    t.match(second.json().errors, { detail: 'You already have a running timer.', running_entry_id: timer.id, running_case_id: printer })
    t.equal((await call('POST', `/api/cases/${fax}/time-entries/start/`, bob.headers)).statusCode, 404, 'a case Bob may not see')
    t.equal((await call('POST', `/api/cases/${globexCase}/time-entries/start/`, admin)).statusCode, 404)
    t.equal((await call('POST', `/api/time-entries/${timer.id}/stop/`, bob.headers)).statusCode, 404, "another member's entry reads as missing")

    now = new Date(FIXED_NOW.getTime() + 90.5 * 60_000)
    const sheet = await ok('GET', '/api/time-entries/timesheet/', alice.headers)
    t.match(sheet, { start: '2026-11-16', end: '2026-11-22', running_count: 1, total_minutes: 90, billable_minutes: 90, profile: { id: alice.profileId } }, 'this week, Monday to Sunday; the running timer counted live')
    t.match(sheet.days[6].entries[0], { id: timer.id, is_running: true, live_duration_minutes: 90, case: { id: printer, name: 'Printer on fire' } })
    const stopped = await ok('POST', `/api/time-entries/${timer.id}/stop/`, alice.headers)
    t.match(stopped, { ended_at: now.toISOString(), duration_minutes: 90, is_running: false })
    t.equal((await call('POST', `/api/time-entries/${timer.id}/stop/`, alice.headers)).statusCode, 400, 'stopped already')
    const next = await ok('POST', `/api/cases/${fax}/time-entries/start/`, alice.headers)
    t.match(next, { description: '', billable: false })
    now = new Date(now.getTime() + 10 * 60_000)
    t.match(await ok('PUT', `/api/time-entries/${next.id}/`, admin, { ended_at: now.toISOString() }), { duration_minutes: 10, is_running: false }, 'an admin ends her timer by its end')
    const racing = await Promise.all([0, 1].map(() => call('POST', `/api/cases/${fax}/time-entries/start/`, alice.headers, {})))
    t.same(racing.map((res) => res.statusCode).sort(), [201, 409], 'two starts at once: one timer')
    await ok('POST', `/api/time-entries/${racing.find((res) => res.statusCode === 201)!.json().id}/stop/`, alice.headers)
  })

  t.test('entries by hand, edits, lists, the summary and unbilled time', async (t) => {
    const body = { started_at: '2026-11-20T09:00:00Z', ended_at: '2026-11-20T09:45:30Z', description: 'Diagnosis', billable: true, hourly_rate: '80.50' }
    t.equal((await call('POST', `/api/cases/${printer}/time-entries/`, bob.headers, body)).statusCode, 404)
    t.equal((await call('POST', `/api/cases/${printer}/time-entries/`, alice.headers, { ...body, description: ' ' })).statusCode, 400)
    t.match((await call('POST', `/api/cases/${printer}/time-entries/`, alice.headers, { ...body, ended_at: '2026-11-20T08:00:00Z' })).json(), { errors: { ended_at: [/on or after/] } })
    t.equal((await call('POST', `/api/cases/${printer}/time-entries/`, alice.headers, { ...body, hourly_rate: '-1' })).statusCode, 400)
    const entry = await ok('POST', `/api/cases/${printer}/time-entries/`, alice.headers, body)
    t.match(entry, { duration_minutes: 45, hourly_rate: '80.50', description: 'Diagnosis', is_running: false })
    const adminEntry = await ok('POST', `/api/cases/${printer}/time-entries/`, admin, { ...body, started_at: '2026-11-19T09:00:00Z', billable: false })
    t.equal(adminEntry.duration_minutes, 1485)

    t.same((await ok('GET', `/api/cases/${printer}/time-entries/`, alice.headers)).map((e: Json) => e.id).length, 2, 'Alice sees her own entries')
    t.equal((await ok('GET', `/api/cases/${printer}/time-entries/`)).length, 3, 'the admin everyone\'s')
    t.equal((await call('GET', `/api/cases/${printer}/time-entries/`, bob.headers)).statusCode, 404)
    t.same(await ok('GET', `/api/cases/${printer}/time-summary/`, alice.headers), {
      total_minutes: 90 + 45 + 1485,
      billable_minutes: 135,
      last_entry_at: FIXED_NOW.toISOString(),
      by_profile: [{ profile_id: acme.admin.profileId, name: acme.admin.email, minutes: 1485 }, { profile_id: alice.profileId, name: 'alice@acme.test', minutes: 135 }],
    })

    t.equal((await call('PUT', `/api/time-entries/${entry.id}/`, bob.headers, { description: 'Mine' })).statusCode, 404)
    t.equal((await call('PUT', `/api/time-entries/${entry.id}/`, alice.headers, { description: '' })).statusCode, 400)
    t.match(await ok('PUT', `/api/time-entries/${entry.id}/`, alice.headers, { started_at: '2026-11-20T09:15:00Z', billable: true }), { duration_minutes: 30, description: 'Diagnosis' })

    const unbilled = (headers: Headers, query = '') => ok('GET', `/api/time-entries/unbilled/${query}`, headers).then((rows) => rows.map((e: Json) => e.id).sort())
    const aliceBillable = (await ok('GET', `/api/cases/${printer}/time-entries/`, alice.headers)).filter((e: Json) => e.billable).map((e: Json) => e.id).sort()
    t.same(await unbilled(alice.headers), aliceBillable, 'billable, finished and not billed')
    t.same(await unbilled(admin, `?account=${account}`), aliceBillable, "an account's cases")
    t.same(await unbilled(admin, '?account=not-an-id'), [], 'a malformed account matches nothing')
    t.same(await unbilled(bob.headers), [])

    t.equal((await call('GET', `/api/time-entries/timesheet/?profile=${alice.profileId}`, bob.headers)).statusCode, 403, "only an admin reads another's timesheet")
    const week = await ok('GET', `/api/time-entries/timesheet/?profile=${alice.profileId}&start=2026-11-20&end=2026-11-22`)
    t.same(week.days.map((d: Json) => [d.date, d.total_minutes]), [['2026-11-20', 30], ['2026-11-21', 0], ['2026-11-22', 100]])
    t.equal((await call('GET', '/api/time-entries/timesheet/?start=2026-11-22&end=2026-11-20')).statusCode, 400)
    t.equal((await call('GET', '/api/time-entries/timesheet/?start=2026-02-30&end=2026-03-01')).statusCode, 400)

    t.equal((await call('DELETE', `/api/time-entries/${entry.id}/`, bob.headers)).statusCode, 404)
    t.equal((await call('DELETE', `/api/time-entries/${entry.id}/`, alice.headers)).statusCode, 204)
    t.equal((await call('PUT', `/api/time-entries/${entry.id}/`, alice.headers, { description: 'x' })).statusCode, 404)
  })

  t.test('the time report and its CSV', async (t) => {
    const week = 'start=2026-11-16&end=2026-11-22'
    t.match(await ok('GET', `/api/time-entries/report/?${week}`), {
      entries_count: 4,
      total_minutes: 1485 + 90 + 10,
      billable_minutes: 90,
      by_profile: [{ profile_id: acme.admin.profileId, minutes: 1485, billable_minutes: 0 }, { profile_id: alice.profileId, name: 'alice@acme.test', minutes: 100, billable_minutes: 90 }],
      by_case: [{ case_id: printer, name: 'Printer on fire', minutes: 1575 }, { case_id: fax, minutes: 10 }],
    })
    t.match(await ok('GET', `/api/time-entries/report/?${week}`, alice.headers), { entries_count: 3, total_minutes: 100 }, "a member's report is their own time")
    t.equal((await ok('GET', `/api/time-entries/report/?${week}&case=${fax}`)).total_minutes, 10)
    t.equal((await ok('GET', `/api/time-entries/report/?${week}&account=${account}`)).total_minutes, 1575)
    t.equal((await ok('GET', `/api/time-entries/report/?${week}&billable=true`)).total_minutes, 90)
    t.equal((await ok('GET', `/api/time-entries/report/?${week}&profile=nobody`)).entries_count, 0, 'a malformed id matches nothing')
    const csv = await call('GET', `/api/time-entries/report/export/?${week}`)
    t.equal(csv.statusCode, 200)
    t.match(csv.headers['content-type'], /^text\/csv/)
    const lines = csv.body.trim().split('\r\n')
    t.equal(lines[0], 'date,case_id,case,profile_id,agent,started_at,ended_at,minutes,billable,hourly_rate,currency,description')
    t.equal(lines.length, 5)
    t.match(lines[1], new RegExp(`^2026-11-19,${printer},Printer on fire,${acme.admin.profileId},`))
  })

  t.test('a timer forgotten for 12 hours is stopped by the service, once', async (t) => {
    const timer = await ok('POST', `/api/cases/${printer}/time-entries/start/`, admin)
    const stopper = createTimerAutoStop({ db: database.db, store, clock: () => now, projections, logger: silentLogger, intervalMs: 60_000 })
    now = new Date(now.getTime() + 11 * 3_600_000)
    t.match(await stopper.stopStale(), { ran: true, stopped: 0 }, 'not before 12 hours')
    now = new Date(now.getTime() + 3_600_000 + 30_000)
    const run = await stopper.stopStale()
    t.match(run, { ran: true, stopped: 1 })
    if (run.ran && run.position) await projections.waitFor(run.position, 10_000)
    const entry = (await ok('GET', `/api/cases/${printer}/time-entries/`)).find((e: Json) => e.id === timer.id)
    t.match(entry, { auto_stopped: true, is_running: false, duration_minutes: 720, ended_at: now.toISOString() })
    t.match(await stopper.stopStale(), { ran: true, stopped: 0 }, 'a second run stops nothing')
  })

  t.test('rebuilt from the log, the read models equal the live ones', async (t) => {
    await rebuildEqualsLive(t, { db: database.db, store }, [macrosProjector, timeEntriesProjector], { oneByOne: true })
  })
})
