import { randomUUID } from 'node:crypto'
import t from 'tap'
import { businessCalendarStreams, defaultCalendarId } from '../../src/commands/business-hours/business-calendar.ts'
import { slaStatus } from '../../src/commands/business-hours/sla-clock.ts'
import { businessCalendarsProjector } from '../../src/projections/business-hours/business-calendars.ts'
import { businessCalendarVersions, currentBusinessCalendar } from '../../src/projections/business-hours/queries.ts'
import { buildTestApp } from '../helpers/app.ts'
import { givenOrganization } from '../helpers/identity.ts'
import { rebuildEqualsLive } from '../helpers/read-models.ts'

type Headers = Record<string, string>
const WEEK = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday']
/** What the web app's settings page PUTs: the fourteen flat fields ("HH:MM", null for a closed day), Sunday closed. */
const webAppWeek = (weekday: [string, string], saturday: [string | null, string | null] = [null, null]) => {
  const hours = (i: number) => (i < 5 ? weekday : i === 5 ? saturday : [null, null])
  return Object.fromEntries(WEEK.flatMap((day, i) => [[`${day}_open`, hours(i)[0]], [`${day}_close`, hours(i)[1]]]))
}

t.test('/api/business-hours/', async (t) => {
  const { app, database, store } = await buildTestApp(t)
  const db = database.db
  const acme = await givenOrganization(app, db, 'Acme')
  const globex = await givenOrganization(app, db, 'Globex')
  const alice = await acme.addMember('alice@acme.test')
  const id = defaultCalendarId(acme.orgId)
  const calendarUrl = `/api/business-hours/calendar/${id}/`
  const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, headers: Headers, payload?: object) => app.inject({ method, url, headers, ...(payload && { payload }) })
  const admin = acme.admin.headers
  const events = async () => (await store.readStream(businessCalendarStreams.stream(id))).map((e) => e.type)

  t.test('GET: the default calendar (Monday to Friday 9 to 5, UTC, version 0) for any member, written nowhere', async (t) => {
    const res = await call('GET', '/api/business-hours/calendar/', alice.headers)
    t.equal(res.statusCode, 200)
    const nine = { open: '09:00:00', close: '17:00:00' }
    t.same(res.json(), {
      id, name: 'Default', timezone: 'UTC', is_default: true,
      ...Object.fromEntries(WEEK.flatMap((day, i) => [[`${day}_open`, i < 5 ? '09:00:00' : null], [`${day}_close`, i < 5 ? '17:00:00' : null]])),
      shifts: { monday: [nine], tuesday: [nine], wednesday: [nine], thursday: [nine], friday: [nine], saturday: [], sunday: [] },
      holidays: [], version: 0,
    })
    t.same((await call('GET', calendarUrl, alice.headers)).json(), res.json(), 'the same by its id')
    t.equal((await call('GET', `/api/business-hours/calendar/${randomUUID()}/`, alice.headers)).statusCode, 404)
    t.equal((await call('GET', calendarUrl, globex.admin.headers)).statusCode, 404, "another organization's calendar reads as missing")
    t.not((await call('GET', '/api/business-hours/calendar/', globex.admin.headers)).json().id, id, 'each organization has its own')
    t.same(await events(), [], 'a read writes nothing')
  })

  t.test("writes are the admins': a member gets the original's 403 and writes nothing", async (t) => {
    const refused = { error: true, errors: 'Only admins can update business hours.' }
    t.same((await call('PUT', calendarUrl, alice.headers, { name: 'Mine' })).json(), refused)
    t.equal((await call('PUT', '/api/business-hours/calendar/', alice.headers, { name: 'Mine' })).statusCode, 403)
    t.same((await call('POST', `${calendarUrl}holidays/`, alice.headers, { date: '2026-12-25', name: 'Christmas' })).json(), refused)
    t.equal((await call('DELETE', `${calendarUrl}holidays/${randomUUID()}/`, alice.headers)).statusCode, 403)
    t.same(await events(), [])
  })

  t.test("PUT: the web app's body edits the week, zone and name; the first edit records the default as version 0", async (t) => {
    const res = await call('PUT', calendarUrl, admin, { ...webAppWeek(['08:30', '18:00'], ['10:00', '14:00']), name: 'Support', timezone: 'America/New_York' })
    t.equal(res.statusCode, 200, res.body)
    t.match(res.headers['x-event-position'], /^\d+-\d+$/)
    t.match(res.json(), { id, name: 'Support', timezone: 'America/New_York', monday_open: '08:30:00', monday_close: '18:00:00', saturday_open: '10:00:00', sunday_open: null, shifts: { saturday: [{ open: '10:00:00', close: '14:00:00' }] }, version: 1 })
    t.same(await events(), ['BusinessCalendarCreated', 'BusinessCalendarChanged'])
    t.match((await call('GET', '/api/business-hours/calendar/', alice.headers)).json(), { name: 'Support', version: 1 }, 'read at once (read-your-writes)')
    t.equal((await call('PUT', calendarUrl, admin, { ...webAppWeek(['08:30:00', '18:00:00'], ['10:00', '14:00']), name: 'Support', timezone: 'America/New_York' })).json().version, 1, 'the same again: no new version')
    t.match((await call('PUT', '/api/business-hours/calendar/', admin, { saturday_open: null, saturday_close: '' })).json(), { saturday_open: null, saturday_close: null, version: 2 }, 'the collection path edits the same calendar (the original answered 500); a blank is null')
  })

  t.test('bad input: 400 in the error shape, keyed as the original', async (t) => {
    const refused = async (body: object) => {
      const res = await call('PUT', calendarUrl, admin, body)
      t.equal(res.statusCode, 400, JSON.stringify(body))
      return res.json().errors
    }
    t.match(await refused({ timezone: 'Mars/Phobos' }), { timezone: ['Not a valid IANA timezone.'] })
    t.same(await refused({ monday_open: '17:00:00', monday_close: '09:00:00' }), { monday_close: ['Close time must be after open time.'] })
    t.same(await refused({ saturday_close: '12:00:00' }), { saturday_open: ['Open and close must be both set or both null.'] })
    t.match(await refused({ monday_open: '25:00' }), { monday_open: [String] })
    t.match(await refused({ monday_open: '09:00:30' }), { monday_open: [String] }, 'seconds: targets are measured to the minute')
    t.match(await refused({ shifts: { monday: [{ open: '08:00', close: '12:00' }, { open: '11:00', close: '17:00' }] } }), { 'shifts.monday': [String] })
    t.match(await refused({ colour: 'red' }), { colour: [String] }, 'an unknown key')
    t.match(await refused({ name: ' ' }), { name: ['This field may not be blank.'] })
    t.equal((await call('PUT', '/api/business-hours/calendar/', admin, { id: randomUUID(), is_default: false, holidays: [], name: 'Support' })).statusCode, 200, 'read-only fields sent back are ignored')
    t.equal(await call('GET', calendarUrl, admin).then((r) => r.json().version), 2, 'nothing refused was written')
  })

  t.test('split shifts: a day of several; the flat fields show its span, and sending them back keeps it', async (t) => {
    const split = [{ open: '08:00', close: '12:00' }, { open: '13:00', close: '17:00' }]
    const res = await call('PUT', calendarUrl, admin, { shifts: { monday: split } })
    t.match(res.json(), { monday_open: '08:00:00', monday_close: '17:00:00', shifts: { monday: [{ open: '08:00:00', close: '12:00:00' }, { open: '13:00:00', close: '17:00:00' }] }, version: 3 })
    const again = await call('PUT', calendarUrl, admin, { monday_open: '08:00', monday_close: '17:00' })
    t.match(again.json(), { version: 3 }, "the web app's save of what it read changes nothing")
    t.equal(again.json().shifts.monday.length, 2, 'the split shifts kept')
  })

  t.test('holidays: 201, or 200 with the one already on that date; part-day ones; removal is 204, then 404', async (t) => {
    const add = (body: object, headers = admin) => call('POST', `${calendarUrl}holidays/`, headers, body)
    const christmas = await add({ date: '2026-12-25', name: 'Christmas' })
    t.equal(christmas.statusCode, 201)
    t.match(christmas.json(), { id: String, date: '2026-12-25', name: 'Christmas', start_time: null, end_time: null })
    const again = await add({ date: '2026-12-25', name: 'Xmas' })
    t.equal(again.statusCode, 200)
    t.same(again.json(), christmas.json(), 'the existing holiday, its name kept')
    const eve = await add({ date: '2026-12-24', name: 'Christmas Eve', start_time: '12:00', end_time: '24:00' })
    t.match(eve.json(), { start_time: '12:00:00', end_time: '24:00:00' })
    t.equal((await add({ date: '2026-12-31', name: 'Half', start_time: '12:00' })).statusCode, 400)
    t.equal((await add({ date: '2026-13-01', name: 'Nope' })).statusCode, 400)
    t.same((await call('GET', calendarUrl, alice.headers)).json().holidays.map((h: { date: string }) => h.date), ['2026-12-24', '2026-12-25'], 'by date')
    const url = `${calendarUrl}holidays/${eve.json().id}/`
    t.equal((await call('DELETE', url, globex.admin.headers)).statusCode, 404, "another organization's")
    t.equal((await call('DELETE', `/api/business-hours/calendar/${defaultCalendarId(globex.orgId)}/holidays/${eve.json().id}/`, globex.admin.headers)).statusCode, 404, 'not a holiday of that calendar')
    const removed = await call('DELETE', url, admin)
    t.equal(removed.statusCode, 204)
    t.equal((await call('DELETE', url, admin)).statusCode, 404)
    t.equal((await call('POST', `/api/business-hours/calendar/${id}/holidays/`, globex.admin.headers, { date: '2026-12-26', name: 'Boxing day' })).statusCode, 404)
    t.equal((await call('PUT', calendarUrl, globex.admin.headers, { name: 'Taken' })).statusCode, 404)
    t.match((await call('GET', calendarUrl, admin)).json(), { name: 'Support', version: 6 })
  })

  t.test('versions: every edit is kept, so an SLA clock started on one keeps measuring in it', async (t) => {
    const calendars = await businessCalendarVersions(db, acme.orgId)
    const current = await currentBusinessCalendar(db, acme.orgId)
    t.equal(current.version, 6)
    t.equal(current.calendar.timeZone, 'America/New_York')
    t.same(calendars(0).week.friday, [{ open: 540, close: 1020 }], 'version 0: the default')
    t.same(calendars(6).holidays, [{ date: '2026-12-25' }])
    // Thursday 24 December, 10:00 New York, ten hours to go: version 1 (08:30–18:00, no holidays) against version 6 (Christmas off, Monday split).
    const started = (version: number) => slaStatus([{ type: 'activated', at: '2026-12-24T15:00:00Z', targetMinutes: 600, calendarVersion: version }], calendars, new Date('2026-12-24T15:00:00Z'))
    t.same(started(1).deadline, new Date('2026-12-25T15:30:00Z'), 'version 1: eight hours on Thursday, Christmas Day a working day from 08:30')
    t.same(started(6).deadline, new Date('2026-12-28T15:00:00Z'), 'version 6: Christmas Day off, the weekend closed, Monday from 08:00')
    t.same((await businessCalendarVersions(db, globex.orgId))(0).week.monday, [{ open: 540, close: 1020 }], 'a calendar never edited: the default')
  })

  t.test('rebuild equals live', async (t) => {
    const live = await rebuildEqualsLive(t, { db, store }, businessCalendarsProjector, { oneByOne: true })
    t.equal(live.business_calendar_versions!.length, 7, 'versions 0 to 6')
  })
})
