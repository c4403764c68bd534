import t from 'tap'
import { slaStatus } from '../../src/commands/business-hours/sla-clock.ts'
import { defaultCalendarId } from '../../src/commands/business-hours/business-calendar.ts'
import { caseStreams } from '../../src/commands/case/case.ts'
import { csatToken } from '../../src/commands/case/csat.ts'
import { evolveSlaClocks, isSlaEvent, noSlaClocks } from '../../src/commands/case/sla.ts'
import type { CaseSlaEvent } from '../../src/commands/case/sla.ts'
import { loadConfig } from '../../src/config.ts'
import { logTransport } from '../../src/identity/mail.ts'
import { createCsatSender } from '../../src/processes/csat-sender.ts'
import type { SendOutcome } from '../../src/processes/csat-sender.ts'
import { businessCalendarVersions } from '../../src/projections/business-hours/queries.ts'
import { caseCsatProjector } from '../../src/projections/case/csat.ts'
import { caseSlaFiguresProjector } from '../../src/projections/case/sla-figures.ts'
import { FIXED_NOW } from '../helpers/app.ts'
import { givenTwoOrganizations, succeeding } from '../helpers/fixtures.ts'
import { rebuildEqualsLive } from '../helpers/read-models.ts'
import { figuresRebuildEqualsLive } from '../helpers/case-figures.ts'
import { silentLogger } from '../helpers/runner.ts'
import { READ_MODEL_ERASED } from '../../src/privacy/seal.ts'

const HOUR = 3_600_000
const env = { JWT_SECRET: 'analytics-test-secret-of-at-least-32-characters' }
const percentile = (values: number[], p: number): number | null => {
  if (!values.length) return null
  const sorted = [...values].sort((a, b) => a - b)
  const rank = (p / 100) * (sorted.length - 1)
  const [lo, hi] = [Math.floor(rank), Math.ceil(rank)]
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (rank - lo)
}
const mean = (values: number[]) => (values.length ? values.reduce((a, b) => a + b, 0) / values.length : null)

// The default calendar: 09–17 UTC, Monday to Friday. The clock starts on Sunday 22 November 2026 and moves through the week.
t.test('cases analytics: every figure equals a recomputation from the log through the one SLA clock', async (t) => {
  let now = FIXED_NOW
  const at = (iso: string) => (now = new Date(iso))
  const { app, database, store, projections, acme, globex, alice, bob } = await givenTwoOrganizations(t, { clock: () => now, env })
  const admin = acme.admin.headers
  const ok = succeeding(t, app)
  const get = async (url: string, headers: Record<string, string> = admin) => {
    const res = await app.inject({ method: 'GET', url, headers })
    t.equal(res.statusCode, 200, res.statusCode === 200 ? url : `${url}: ${res.body}`)
    return res.json()
  }
  const contact = (await ok('POST', '/api/contacts/', admin, { first_name: 'Carol', email: 'carol@customer.test' })).id as string
  const open = async (body: object) => (await ok('POST', '/api/cases/', admin, body)).id as string

  // Monday 09:00: three cases. A is answered in an hour and resolved on Wednesday; B waits on the customer from Monday 11:00 to Wednesday 10:00, then turns Urgent; C is answered on Wednesday.
  at('2026-11-23T09:00:00Z')
  const A = await open({ name: 'A', priority: 'High', assigned_to: [bob.profileId], contacts: [contact] })
  const B = await open({ name: 'B', priority: 'Normal', assigned_to: [alice.profileId] })
  const C = await open({ name: 'C', priority: 'Urgent', case_type: 'Incident' })
  at('2026-11-23T10:00:00Z')
  await ok('POST', `/api/cases/${A}/`, admin, { comment: 'On it', is_internal: false })
  at('2026-11-23T11:00:00Z')
  await ok('PATCH', `/api/cases/${B}/`, admin, { status: 'Pending' })
  // A calendar edit: Tuesday becomes a holiday, for SLA instances started from now on only.
  const holiday = await app.inject({ method: 'POST', url: `/api/business-hours/calendar/${defaultCalendarId(acme.orgId)}/holidays/`, headers: admin, payload: { date: '2026-11-24', name: 'Company day' } })
  t.equal(holiday.statusCode, 201, holiday.body)
  at('2026-11-24T12:00:00Z')
  const D = await open({ name: 'D', priority: 'High', assigned_to: [bob.profileId, alice.profileId] })
  at('2026-11-25T10:00:00Z')
  await ok('PATCH', `/api/cases/${B}/`, admin, { status: 'Assigned' })
  await ok('POST', `/api/cases/${C}/`, admin, { comment: 'Sorry for the wait', is_internal: false })
  at('2026-11-25T10:30:00Z')
  await ok('PATCH', `/api/cases/${B}/`, admin, { priority: 'Urgent' })
  at('2026-11-25T15:00:00Z')
  await ok('PATCH', `/api/cases/${A}/`, admin, { status: 'Closed', closed_on: '2026-11-25' })

  t.test('CSAT: the leader mails one survey per closed case half an hour after closing; the link records one answer, changeable for a day', async (t) => {
    const mail = logTransport(silentLogger)
    const { config } = loadConfig({ NODE_ENV: 'test', DATABASE_URL: database.url, ...env })
    const options = { db: database.db, store, config, clock: () => now, mail, logger: silentLogger, intervalMs: 60_000 }
    const send = async (sender = createCsatSender({ ...options, projections })) => {
      const outcome = (await sender.send()) as Extract<SendOutcome, { ran: true }>
      if (outcome.position) await projections.waitFor(outcome.position, 10_000)
      return outcome.sent
    }
    t.same(await createCsatSender({ ...options, projections: { isLeader: false } }).send(), { ran: false, reason: 'not the leader' })
    t.same(await createCsatSender({ ...options, mail: null, projections }).send(), { ran: false, reason: 'no mail transport' })
    at('2026-11-25T15:29:00Z')
    t.equal(await send(), 0, 'not within half an hour of closing')
    at('2026-11-25T15:31:00Z')
    t.equal(await send(), 1, 'A, the one closed case with a contact')
    t.equal(await send(), 0, 'a second run sends nothing again')
    t.equal(mail.outbox.length, 1)
    t.equal(mail.outbox[0]!.to, 'carol@customer.test')
    const token = /\/csat\/([^\s/]+)/.exec(mail.outbox[0]!.text)![1]!
    const link = `/api/public/csat/${token}/`
    t.match(await get(link, {}), { case_subject: 'A', case_closed_on: '2026-11-25', org_name: 'Acme', agent_name: 'bob@acme.test', rating: null, comment: '', responded_at: null, edit_window_closes_at: null })
    t.equal((await app.inject({ method: 'GET', url: `/api/public/csat/${token.slice(0, -2)}xx/` })).statusCode, 400, 'a forged token')
    t.equal((await app.inject({ method: 'POST', url: link, payload: { rating: 6 } })).statusCode, 400, 'ratings are 1 to 5')
    at('2026-11-26T12:00:00Z')
    t.same((await app.inject({ method: 'POST', url: link, payload: { rating: 4, comment: 'Quick and kind' } })).json(), { rating: 4, comment: 'Quick and kind', responded_at: '2026-11-26T12:00:00.000Z' })
    t.same(await get('/api/cases/csat/aggregate/'), { average: 4, count: 1, distribution: { 1: 0, 2: 0, 3: 0, 4: 1, 5: 0 } })
    t.same(await get('/api/cases/csat/aggregate/', globex.admin.headers), { average: null, count: 0, distribution: { 1: 0, 2: 0, 3: 0, 4: 0, 5: 0 } }, "another organization's")
  })

  t.test('the figures at Thursday 12:00, against slaStatus folded over each case\'s events from the log', async (t) => {
    at('2026-11-26T12:00:00Z')
    const calendarOf = await businessCalendarVersions(database.db, acme.orgId)
    const ids = { A, B, C, D }
    const recomputed = await Promise.all(Object.entries(ids).map(async ([name, id]) => {
      const events = await store.readStream(caseStreams.stream(id))
      const clocks = events.filter(isSlaEvent).reduce((c, e) => evolveSlaClocks(c, e as unknown as CaseSlaEvent), noSlaClocks())
      const [frt, res] = [slaStatus(clocks.first_response, calendarOf, now), slaStatus(clocks.resolution, calendarOf, now)]
      const shown = (await get(`/api/cases/${id}/`)).cases_obj
      // The badge shows a breach while the instance is open; the analytics count a late answer too.
      t.equal(frt.state !== 'fulfilled' && frt.breachedAt !== null, shown.is_sla_first_response_breached, `${name}: the case's own badge and the recomputation agree`)
      t.equal(res.state !== 'fulfilled' && res.breachedAt !== null, shown.is_sla_resolution_breached, `${name}: its resolution badge too`)
      return { name, id, frt, res, priority: shown.priority as string, assigned: (shown.assigned_to as { id: string }[]).map((p) => p.id) }
    }))
    const frtHours = recomputed.filter((r) => r.frt.state === 'fulfilled').map((r) => r.frt.usedMs / HOUR)
    const frtBreached = recomputed.filter((r) => r.frt.breachedAt !== null)
    t.same(frtHours.sort(), [1, 17], 'business hours to first response: A one hour, C Monday, Tuesday and an hour (wall clock: 49 hours)')
    t.same(frtBreached.map((r) => r.name), ['B', 'C', 'D'], 'B past its Urgent target once retargeted (time used stays used), C late, D past the deadline the holiday moved to Wednesday 13:00')

    const frt = await get('/api/cases/analytics/frt/')
    t.match(frt, { median_hours: percentile(frtHours, 50), p90_hours: percentile(frtHours, 90), count: 2, breach_count: 3 })
    t.same([...frt.breach_case_ids].sort(), frtBreached.map((r) => r.id).sort())
    t.match(frt.series.find((s: { bucket: string }) => s.bucket === '2026-11-23'), { median: 9, count: 2 })

    const resolved = recomputed.filter((r) => r.res.state === 'fulfilled')
    t.match(await get('/api/cases/analytics/mttr/'), { mean_hours: 22, median_hours: 22, count: 1, by_priority: { High: { count: 1, mean_hours: 22 } }, case_ids: resolved.map((r) => r.id) }, 'A: 22 business hours, its calendar without the holiday it opened before (wall clock: 54)')
    const resBreached = recomputed.filter((r) => r.res.breachedAt !== null)
    t.match(await get('/api/cases/analytics/sla/'), { total: 4, frt_breach_count: frtBreached.length, resolution_breach_count: resBreached.length, frt_breach_rate: frtBreached.length / 4, resolution_breach_rate: resBreached.length / 4 })

    const agents = (await get('/api/cases/analytics/agents/')).results as { profile_id: string; handled: number; avg_frt_hours: number | null; breach_rate: number; csat_avg: number | null }[]
    for (const profile of [bob.profileId, alice.profileId]) {
      const theirs = recomputed.filter((r) => r.assigned.includes(profile))
      const breaches = theirs.filter((r) => r.frt.breachedAt !== null).length + theirs.filter((r) => r.res.breachedAt !== null).length
      t.match(agents.find((a) => a.profile_id === profile), { handled: theirs.length, avg_frt_hours: mean(theirs.filter((r) => r.frt.state === 'fulfilled').map((r) => r.frt.usedMs / HOUR)), breach_rate: breaches / (2 * theirs.length) })
    }
    t.equal(agents.find((a) => a.profile_id === bob.profileId)!.csat_avg, 4, "bob's case was rated 4")

    const backlog = (await get('/api/cases/analytics/backlog/')).series as { date: string; open_count: number; urgent_count: number }[]
    t.equal(backlog.length, 31, 'the last 30 days and today')
    // Urgent by the cases' priority now, as the original's (B turned Urgent on Wednesday).
    t.same(backlog.filter((d) => d.date >= '2026-11-22'), [
      { date: '2026-11-22', open_count: 0, urgent_count: 0 },
      { date: '2026-11-23', open_count: 3, urgent_count: 2 },
      { date: '2026-11-24', open_count: 4, urgent_count: 2 },
      { date: '2026-11-25', open_count: 3, urgent_count: 2 },
      { date: '2026-11-26', open_count: 3, urgent_count: 2 },
    ])

    const service = await get('/api/cases/analytics/service/?days=7')
    t.match(service.totals, { opened: 4, closed: 1, open_now: 3, median_resolution_hours: 22, window_days: 7, business_hours_applied: true, calendar_name: 'Default' })
    t.equal(service.volume.length, 7)
    for (const row of service.first_response) {
      const ofPriority = recomputed.filter((r) => r.priority === row.priority)
      t.match(row, { met: ofPriority.filter((r) => r.frt.state === 'fulfilled' && r.frt.breachedAt === null).length, missed: ofPriority.filter((r) => r.frt.breachedAt !== null).length }, row.priority)
    }
    t.same(service.by_type, [{ case_type: 'Uncategorized', count: 3 }, { case_type: 'Incident', count: 1 }])
    t.match(service.by_agent.at(-1), { id: null, name: 'Unassigned', open: 1, breached: 1, median_first_response_minutes: 17 * 60 })
    // Open from the counts the cases read model keeps, the week's closings from the figures' resolution index.
    for (const profile of [bob.profileId, alice.profileId]) {
      const theirs = recomputed.filter((r) => r.assigned.includes(profile))
      const row = { open: theirs.filter((r) => r.res.state !== 'fulfilled').length, closed_this_week: theirs.filter((r) => r.res.state === 'fulfilled').length, breached: theirs.filter((r) => r.frt.breachedAt !== null).length }
      t.match(service.by_agent.find((a: { id: string }) => a.id === profile), row, `the overview's row of ${profile === bob.profileId ? 'bob' : 'alice'}`)
    }
  })

  t.test('drilldown and export name the same cases; filters, the window and refusals', async (t) => {
    const drill = await get('/api/cases/analytics/drilldown/?metric=sla&bucket=frt_breach')
    t.equal(drill.count, 3)
    t.same(drill.results.map((c: { name: string }) => c.name).sort(), ['B', 'C', 'D'])
    t.equal((await get('/api/cases/analytics/drilldown/?metric=backlog&bucket=2026-11-24')).count, 4)
    t.equal((await get(`/api/cases/analytics/drilldown/?metric=agents&bucket=${bob.profileId}`)).count, 2)
    const csv = await app.inject({ method: 'GET', url: '/api/cases/analytics/export/?metric=mttr', headers: admin })
    t.equal(csv.statusCode, 200)
    t.match(csv.headers['content-type'], /text\/csv/)
    t.same(csv.body.trim().split('\r\n').map((line) => line.split(',')[1]), ['Name', 'A'])
    t.equal((await get('/api/cases/analytics/sla/?priority=High')).total, 2)
    t.equal((await get(`/api/cases/analytics/sla/?agent=${alice.profileId}`)).total, 2)
    t.equal((await get('/api/cases/analytics/sla/?from=2026-11-24&to=2026-11-24')).total, 1, 'a day of the organization, whole')
    t.equal((await get('/api/cases/analytics/sla/', alice.headers)).total, 2, 'a member: their own cases')
    for (const [url, field] of [['frt/?from=banana', 'from'], ['sla/?to=2026-02-30', 'to'], ['sla/?from=2026-13-01', 'from'], ['sla/?agent=nope', 'agent'], ['drilldown/?metric=nope', 'metric'], ['drilldown/?metric=backlog', 'bucket'], ['drilldown/?metric=backlog&bucket=2026-02-30', 'bucket'], ['export/?metric=frt&fmt=xlsx', 'fmt'], ['service/?days=banana', 'days']] as const) {
      const res = await app.inject({ method: 'GET', url: `/api/cases/analytics/${url}`, headers: admin })
      t.equal(res.statusCode, 400, url)
      t.match(res.json(), { error: true }, url)
      t.ok(res.body.includes(field), `${url} names ${field}`)
    }
    t.equal((await app.inject({ method: 'GET', url: '/api/cases/analytics/service/', headers: alice.headers })).statusCode, 403, 'the overview is for admins')
  })

  t.test('the survey link: locked a day after the first answer, gone once expired', async (t) => {
    const survey = await database.db.selectFrom('case_csat').selectAll().executeTakeFirstOrThrow()
    const token = csatToken(env.JWT_SECRET, survey.case_id)
    at('2026-11-27T12:00:00Z')
    t.equal((await app.inject({ method: 'POST', url: `/api/public/csat/${token}/`, payload: { rating: 5 } })).statusCode, 409)
    at('2026-12-26T09:00:00Z')
    t.equal((await app.inject({ method: 'GET', url: `/api/public/csat/${token}/` })).statusCode, 410)
  })

  t.test("the survey's comment is the contact's: sealed in the log, erased with them", async (t) => {
    t.notMatch(JSON.stringify((await database.db.selectFrom('events').select('data').execute()).map((row) => row.data)), /Quick and kind/, 'the log holds it sealed')
    const erased = await app.inject({ method: 'POST', url: '/api/privacy/erasures/', headers: admin, payload: { kind: 'contact', id: contact } })
    t.equal(erased.statusCode, 201, erased.body)
    t.ok(erased.json().copies.some((c: { copy: string }) => c.copy === 'read model case_csat'), 'the surveys read model erases it')
    t.match(await database.db.selectFrom('case_csat').select(['rating', 'comment']).executeTakeFirstOrThrow(), { rating: 4, comment: READ_MODEL_ERASED }, 'the rating stays, the comment is gone')
  })

  t.test('the read models rebuilt from the log are identical', async (t) => {
    await database.db.transaction().execute((trx) => caseSlaFiguresProjector.applyBatch!(trx, []))
    t.pass('an empty page (the runner saving an idle checkpoint) applies nothing and fails nothing')
    await figuresRebuildEqualsLive(t, { db: database.db, store })
    await rebuildEqualsLive(t, { db: database.db, store }, caseCsatProjector, { oneByOne: true })
  })
})
