import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import t from 'tap'
import { defaultCalendarId } from '../../src/commands/business-hours/business-calendar.ts'
import { caseStreams } from '../../src/commands/case/case.ts'
import { createCaseEscalator } from '../../src/processes/case-escalator.ts'
import type { EscalateOutcome } from '../../src/processes/case-escalator.ts'
import { casesProjector } from '../../src/projections/case/cases.ts'
import { FIXED_NOW } from '../helpers/app.ts'
import { collectionClient, givenTwoOrganizations } from '../helpers/fixtures.ts'
import { multipartBody } from '../helpers/multipart.ts'
import { caseCountsEqualRows, keptCountsEqualScan } from '../helpers/case-counts.ts'
import { rebuildEqualsLive } from '../helpers/read-models.ts'
import { figureFactsEqualCases, figuresRebuildEqualsLive } from '../helpers/case-figures.ts'
import { silentLogger } from '../helpers/runner.ts'

const BASE = '/api/cases/'
const HOUR = 3_600_000
type Row = { id: string } & Record<string, unknown>

// The clock starts at 2026-11-22T09:00Z, a Sunday; the SLA tests move it.
t.test('cases: /api/cases/ as the original and its two apps use it', async (t) => {
  let now = FIXED_NOW
  const { app, database, store, projections, acme, globex, alice, bob } = await givenTwoOrganizations(t, { clock: () => now })
  const admin = acme.admin.headers
  const { inject, create, list } = collectionClient(app, BASE)
  const made = async (headers: Record<string, string>, body: object) => {
    const res = await create(headers, body)
    t.equal(res.statusCode, 200, res.body)
    return res.json().id as string
  }
  const detail = async (headers: Record<string, string>, id: string) => {
    const res = await inject('GET', `${BASE}${id}/`, headers)
    t.equal(res.statusCode, 200, res.body)
    return res.json()
  }
  const ok = async (method: 'POST' | 'PATCH' | 'PUT' | 'DELETE', url: string, headers: Record<string, string>, body?: object) => {
    const res = await inject(method, url, headers, body)
    t.ok(res.statusCode < 300, `${method} ${url}: ${res.statusCode} ${res.body}`)
    return res.body ? res.json() : null
  }
  const account = (await inject('POST', '/api/accounts/', admin, { name: 'Initech' })).json().id as string
  const theirAccount = (await inject('POST', '/api/accounts/', globex.admin.headers, { name: 'Theirs' })).json().id as string

  // What the web app's new-ticket form sends (blank fields as null), and the phone's.
  const printer = await made(alice.headers, { name: 'Printer on fire', status: 'New', priority: 'Urgent', case_type: null, description: 'Smoke', closed_on: null, account, assigned_to: [bob.profileId] })
  const login = await made(admin, { name: 'Cannot sign in', status: 'Assigned', priority: 'Normal', case_type: 'Question', assigned_to: [], tags: [], contacts: [], custom_fields: {} })
  const outage = await made(admin, { name: 'Outage', priority: 'High', case_type: 'Incident', is_problem: true })
  await made(globex.admin.headers, { name: 'Not yours' })

  t.test("a case's activity: its timeline from the feed, newest first, counted whole; 403 for a member who may not read it, 404 for another organization's", async (t) => {
    await ok('PATCH', `${BASE}${printer}/`, admin, { description: 'Smoke, then flames' })
    const first = await inject('GET', `${BASE}${printer}/activities/?limit=1`, admin)
    t.equal(first.statusCode, 200, first.body)
    t.match(first.json(), { count: 2, offset: 1, activities: [{ action: 'UPDATE', entity_id: printer }] })
    t.match((await inject('GET', `${BASE}${printer}/activities/?offset=1`, admin)).json(), { count: 2, offset: null, activities: [{ action: 'CREATE', entity_id: printer }] })
    t.equal((await inject('GET', `${BASE}${login}/activities/`, alice.headers)).statusCode, 403)
    t.equal((await inject('GET', `${BASE}${printer}/activities/`, globex.admin.headers)).statusCode, 404)
  })

  t.test('create: 400 naming the field for a blank name, another organization\'s account, a close without a date, an unknown key', async (t) => {
    t.match((await create(admin, { name: ' ' })).json(), { error: true, errors: { name: [String] } })
    t.match((await create(admin, { name: 'X', account: theirAccount })).json(), { errors: { account: [String] } })
    t.match((await create(admin, { name: 'X', status: 'Closed' })).json(), { errors: { closed_on: ['Closed date is required when closing a case'] } })
    t.equal((await create(admin, { name: 'X', nonsense: 1 })).statusCode, 400)
    t.equal((await create(admin, { name: 'X', priority: 'Medium' })).statusCode, 400, 'Medium is a task priority, not a case one')
  })

  t.test('the list: rows as the apps read them, the queue totals over the filtered set, the pickers unless slim', async (t) => {
    const page = await list(admin, '?limit=50')
    t.equal(page.cases_count, 3)
    t.same(page.cases.map((c: Row) => c.id).sort(), [printer, login, outage].sort())
    t.match(page, { open_count: 3, urgent_count: 1, awaiting_first_reply: 3, offset: null, status: [['New', 'New'], ['Assigned', 'Assigned'], ['Pending', 'Pending'], ['Closed', 'Closed'], ['Rejected', 'Rejected'], ['Duplicate', 'Duplicate']], type_of_case: [['Question', 'Question'], ['Incident', 'Incident'], ['Problem', 'Problem']] })
    const row = page.cases.find((c: Row) => c.id === printer)
    t.match(row, { name: 'Printer on fire', status: 'New', priority: 'Urgent', case_type: null, account: { id: account, name: 'Initech' }, assigned_to: [{ id: bob.profileId, user_details: { email: 'bob@acme.test' } }], created_by: { id: alice.profileId }, sla_first_response_hours: 1, sla_resolution_hours: 4, first_response_at: null, resolved_at: null, first_response_sla_deadline: '2026-11-23T10:00:00.000Z', resolution_sla_deadline: '2026-11-23T13:00:00.000Z', is_sla_first_response_breached: false, parent: null, parent_summary: null, child_count: 0, is_active: true })
    t.match(page.accounts_list, [{ id: account, name: 'Initech' }])
    const slim = await list(admin, '?slim=true&limit=1')
    t.notOk('accounts_list' in slim || 'contacts_list' in slim, 'slim leaves the pickers out')
    t.match(slim, { cases_count: 3, offset: 1, cases: [{ id: String }] }, '`offset` is where the next page starts, as the phone reads it')
    t.match(await list(admin, '?slim=true&limit=1&offset=2'), { offset: null }, 'null on the last page')
  })

  t.test('filters: status (repeatable), priority, type, account, assignee, search, ordering', async (t) => {
    const ids = async (query: string) => (await list(admin, query)).cases.map((c: Row) => c.id).sort()
    t.same(await ids('?status=Pending&status=Assigned'), [login])
    t.same(await ids('?status=New&status=Assigned'), [printer, login, outage].sort())
    t.same(await ids('?status=Nonsense'), [])
    t.same(await ids('?priority=High'), [outage])
    t.same(await ids('?case_type=Question'), [login])
    t.same(await ids(`?account=${account}`), [printer])
    t.same(await ids('?account=not-a-uuid'), [])
    t.same(await ids(`?assigned_to=${bob.profileId}`), [printer])
    t.same(await ids('?search=smoke'), [printer], 'search spans the description')
    t.same(await ids('?created_at__gte=2026-11-22T08:00:00.000Z'), [printer, login, outage].sort(), 'the phone sends instants')
    t.same(await ids('?created_at__lte=2026-11-21'), [])
    t.same((await list(admin, '?ordering=-priority')).cases.map((c: Row) => c.priority), ['Urgent', 'High', 'Normal'], 'priority by rank')
    t.equal((await list(admin, '?status=New')).open_count, 2, 'totals follow the filters')
  })

  t.test('visibility: a member reads what they created, are assigned or watch; 403 otherwise; another organization 404', async (t) => {
    t.same((await list(bob.headers)).cases.map((c: Row) => c.id), [printer], 'the assignee')
    t.same((await list(alice.headers)).cases.map((c: Row) => c.id), [printer], 'the creator')
    t.equal((await inject('GET', `${BASE}${login}/`, bob.headers)).statusCode, 403)
    t.equal((await inject('PATCH', `${BASE}${login}/`, bob.headers, { priority: 'Low' })).statusCode, 403)
    t.equal((await inject('GET', `${BASE}${printer}/`, globex.admin.headers)).statusCode, 404)
    t.equal((await inject('PATCH', `${BASE}${printer}/`, globex.admin.headers, { priority: 'Low' })).statusCode, 404)
    t.ok((await list(bob.headers)).users.every((u: { user__email: string }) => u.user__email === 'admin@acme.test'), 'a member may assign only admins, as the original offers')
  })

  t.test('detail and edits: PATCH as the web app, closing needs closed_on and resolves, reopening clears both', async (t) => {
    const shown = await detail(bob.headers, printer)
    t.match(shown, { cases_obj: { id: printer }, comments: [], internal_notes: [], attachments: [], comment_permission: true, status: Array, custom_field_definitions: [] })
    await ok('PATCH', `${BASE}${printer}/`, bob.headers, { name: 'Printer on fire', status: 'Assigned', priority: 'Urgent', case_type: 'Incident', description: 'Smoke', closed_on: null, account: theirAccount })
    t.match((await detail(admin, printer)).cases_obj, { status: 'Assigned', case_type: 'Incident', account: { id: account } }, "an update's account is ignored, as the original's")
    t.match((await inject('PATCH', `${BASE}${printer}/`, bob.headers, { status: 'Closed' })).json(), { error: true, errors: { closed_on: [String] } })
    now = new Date(FIXED_NOW.getTime() + 2 * HOUR)
    await ok('PATCH', `${BASE}${printer}/`, bob.headers, { status: 'Closed', closed_on: '2026-11-22' })
    t.match((await detail(admin, printer)).cases_obj, { status: 'Closed', closed_on: '2026-11-22', resolved_at: '2026-11-22T11:00:00.000Z', is_sla_resolution_breached: false })
    await ok('PATCH', `${BASE}${printer}/`, bob.headers, { status: 'Assigned' })
    t.match((await detail(admin, printer)).cases_obj, { status: 'Assigned', closed_on: null, resolved_at: null })
    await ok('PUT', `${BASE}${login}/`, admin, { name: 'Cannot sign in', priority: 'Low' })
    t.match((await detail(admin, login)).cases_obj, { status: 'New', priority: 'Low', case_type: null, sla_first_response_hours: 8 }, 'a PUT resets what it leaves out; the SLA targets stay those it opened with')
    now = FIXED_NOW
  })

  t.test('replies: the first public comment of a member stamps the first response; internal notes stay apart; files ride along', async (t) => {
    now = new Date(FIXED_NOW.getTime() + HOUR / 2)
    const noted = await ok('POST', `${BASE}${outage}/`, admin, { comment: 'Looking at the logs', is_internal: true })
    t.match(noted, { cases_obj: { first_response_at: null }, comments: [], internal_notes: [{ comment: 'Looking at the logs' }] })
    const replied = await ok('POST', `${BASE}${outage}/`, admin, { comment: 'We are on it', is_internal: false })
    t.match(replied, { cases_obj: { first_response_at: '2026-11-22T09:30:00.000Z' }, comments: [{ comment: 'We are on it' }], internal_notes: [{ comment: 'Looking at the logs' }] })
    now = new Date(FIXED_NOW.getTime() + HOUR)
    await ok('POST', `${BASE}${outage}/`, admin, { comment: 'Fixed' })
    t.equal((await detail(admin, outage)).cases_obj.first_response_at, '2026-11-22T09:30:00.000Z', 'only the first reply counts')
    const form = await multipartBody({ comment: 'Screenshot', is_internal: 'true', case_attachment: { name: 'shot.txt', type: 'text/plain', content: 'pixels' } })
    const upload = await app.inject({ method: 'POST', url: `${BASE}${outage}/`, headers: { ...admin, 'content-type': form.contentType }, payload: form.payload })
    t.equal(upload.statusCode, 200, upload.body)
    const { attachments, internal_notes: notes, comments } = upload.json()
    t.match(attachments, [{ file_name: 'shot.txt' }])
    t.equal(notes.length, 2, 'the form\'s is_internal text is read as a boolean')
    await ok('PATCH', `/api/cases/comment/${comments[0].id}/`, admin, { comment: 'We are on it!' })
    await ok('DELETE', `/api/cases/comment/${notes[0].id}/`, admin)
    await ok('DELETE', `/api/cases/attachment/${attachments[0].id}/`, admin)
    t.match(await detail(admin, outage), { comments: [{ comment: 'We are on it!' }, { comment: 'Fixed' }], internal_notes: [{ comment: 'Screenshot' }], attachments: [] })
    t.equal((await inject('POST', `${BASE}${outage}/`, bob.headers, { comment: 'Me too' })).statusCode, 403, 'only who may change the case replies')
    now = FIXED_NOW
  })

  t.test('the SLA clock: business hours of the calendar (09–17 UTC, Monday to Friday by default); Pending pauses; sla_breached filters at now', async (t) => {
    const at = (iso: string) => (now = new Date(iso))
    const breachedIds = async () => (await list(admin, '?sla_breached=true')).cases.map((c: Row) => c.id).sort()
    // Opened on Sunday 22 November: the clock first runs on Monday at 09:00.
    at('2026-11-23T10:30:00Z')
    t.match((await detail(admin, printer)).cases_obj, { first_response_sla_deadline: '2026-11-23T10:00:00.000Z', is_sla_first_response_breached: true, resolution_sla_deadline: '2026-11-23T13:00:00.000Z', is_sla_resolution_breached: false }, "the Urgent printer: its first business hour is gone; its resolution, started anew when it was reopened, has four")
    t.match((await detail(admin, login)).cases_obj, { first_response_sla_deadline: '2026-11-25T17:00:00.000Z', is_sla_first_response_breached: false }, 'the login, retargeted to Low before the clock ran: 24 business hours, three days')
    t.same(await breachedIds(), [printer], 'only the printer; the outage was answered')
    await ok('PATCH', `${BASE}${login}/`, admin, { status: 'Pending' })
    await ok('PATCH', `${BASE}${printer}/`, admin, { status: 'Pending' })
    at('2026-11-24T10:30:00Z')
    t.match((await detail(admin, login)).cases_obj, { sla_paused_at: '2026-11-23T10:30:00.000Z', first_response_sla_deadline: '2026-11-26T17:00:00.000Z', is_sla_first_response_breached: false }, 'paused: the deadline if it resumed now (a business day later)')
    t.same(await breachedIds(), [printer], 'a breach before the pause stays one while paused; a paused case is not judged on a deadline')
    await ok('PATCH', `${BASE}${login}/`, admin, { status: 'Assigned' })
    t.match((await detail(admin, login)).cases_obj, { sla_paused_at: null, first_response_sla_deadline: '2026-11-26T17:00:00.000Z' }, 'a day of business hours paused stays out of the count')
    at('2026-11-26T16:59:00Z')
    t.notOk((await detail(admin, login)).cases_obj.is_sla_first_response_breached, 'a minute before the deadline')
    t.same(await breachedIds(), [printer, outage].sort(), 'the outage ran out of its 24 business hours on Wednesday evening')
    at('2026-11-26T17:30:00Z')
    t.match((await detail(admin, login)).cases_obj, { is_sla_first_response_breached: true })
    t.same(await breachedIds(), [printer, login, outage].sort(), 'the filter and the badge read the same clock')
    await ok('PATCH', `${BASE}${printer}/`, admin, { status: 'Assigned' })
    t.same(await breachedIds(), [printer, login, outage].sort(), 'resumed, the printer stays breached')
    now = FIXED_NOW
  })

  t.test('the SLA clock: a deadline over a weekend and a holiday; a calendar edit changes only cases opened after it', async (t) => {
    const at = (iso: string) => (now = new Date(iso))
    // Friday 27 November, 15:00 UTC: a High case has four business hours to its first response.
    at('2026-11-27T15:00:00Z')
    const before = await made(admin, { name: 'Before the holiday', priority: 'High' })
    const holiday = await inject('POST', `/api/business-hours/calendar/${defaultCalendarId(acme.orgId)}/holidays/`, admin, { date: '2026-11-30', name: 'Company day' })
    t.equal(holiday.statusCode, 201, holiday.body)
    const after = await made(admin, { name: 'After the holiday', priority: 'High' })
    t.match((await detail(admin, before)).cases_obj, { first_response_sla_deadline: '2026-11-30T11:00:00.000Z' }, 'two hours on Friday, the weekend off: Monday 11:00, in the calendar it opened with')
    t.match((await detail(admin, after)).cases_obj, { first_response_sla_deadline: '2026-12-01T11:00:00.000Z', resolution_sla_deadline: '2026-12-03T15:00:00.000Z' }, 'the Monday holiday off too: Tuesday 11:00')
    at('2026-11-30T12:00:00Z')
    const flagged = await breachedIds()
    t.ok(flagged.includes(before) && !flagged.includes(after), 'on the holiday, the one case is breached and the other not')
    t.match((await detail(admin, after)).cases_obj, { is_sla_first_response_breached: false })
    await ok('DELETE', `${BASE}${before}/`, admin)
    await ok('DELETE', `${BASE}${after}/`, admin)
    now = FIXED_NOW
    async function breachedIds() {
      return (await list(admin, '?sla_breached=true&limit=50')).cases.map((c: Row) => c.id)
    }
  })

  t.test('escalations: the leader escalates open breached cases, at most three times, an hour apart, each level once', async (t) => {
    const deps = { db: database.db, store, clock: () => now, logger: silentLogger, intervalMs: 60_000 }
    const leader = createCaseEscalator({ ...deps, projections })
    const rival = createCaseEscalator({ ...deps, projections })
    const run = async (escalator = leader) => {
      const outcome = (await escalator.escalate()) as Extract<EscalateOutcome, { ran: true }>
      if (outcome.position) await projections.waitFor(outcome.position, 10_000)
      return outcome.escalated
    }
    t.same(await createCaseEscalator({ ...deps, projections: { isLeader: false } }).escalate(), { ran: false, reason: 'not the leader' })
    // Acme's policies: the Urgent printer's first response notifies Alice and the team (Bob, the admin); the
    // login's (Low since the PUT above) reassigns to Alice; the High outage's is off. Globex has none.
    const team = (await ok('POST', '/api/teams/', admin, { name: 'Escalations', users: [bob.profileId, acme.admin.profileId] })).id as string
    const policies = [
      await ok('POST', '/api/cases/escalation-policies/', admin, { priority: 'Urgent', first_response_action: 'notify', first_response_target_id: alice.profileId, notify_team_id: team }),
      await ok('POST', '/api/cases/escalation-policies/', admin, { priority: 'Low', first_response_action: 'reassign', first_response_target_id: alice.profileId, notify_team_id: team }),
      await ok('POST', '/api/cases/escalation-policies/', admin, { priority: 'High', first_response_action: 'reassign', first_response_target_id: bob.profileId, resolution_action: 'reassign', resolution_target_id: bob.profileId, is_active: false }),
    ]
    const breachNotices = async (headers: Record<string, string>) => (await inject('GET', '/api/notifications/', headers)).json().results.filter((n: Row) => n.verb === 'case.sla_breached').map((n: Row) => n.entity_id)
    // Thursday 26 November, 17:30 UTC: the printer, the login and the outage are breached (the test above), and Globex's unanswered case.
    now = new Date('2026-11-26T17:30:00Z')
    t.equal(await run(), 4, 'every organization\'s')
    t.equal(await run(rival), 0, 'a second process at the same instant escalates nothing again')
    t.match((await detail(admin, login)).cases_obj, { escalation_count: 1, last_escalation_fired_at: '2026-11-26T17:30:00.000Z', assigned_to: [{ id: alice.profileId }] }, 'reassigned to the target, the team not told')
    t.same((await detail(admin, login)).cases_obj.assigned_to.length, 1)
    t.same(await breachNotices(alice.headers), [printer], "the notify policy's target is told of the printer")
    t.same(await breachNotices(bob.headers), [printer], 'and each member of its team')
    t.same(await breachNotices(admin), [printer])
    t.match((await detail(admin, outage)).cases_obj, { escalation_count: 1, assigned_to: [] }, 'an inactive policy does nothing')
    const globexEscalations = (await list(globex.admin.headers, '?limit=50')).cases.map((c: Row) => c.escalation_count)
    t.same(globexEscalations, [1], 'no policy: escalated all the same, acting on nobody')
    t.same(await breachNotices(globex.admin.headers), [])
    // The outage is resolved and reopened: a new resolution clock, not breached.
    await ok('PATCH', `${BASE}${outage}/`, admin, { status: 'Closed', closed_on: '2026-11-26' })
    await ok('PATCH', `${BASE}${outage}/`, admin, { status: 'New' })
    now = new Date('2026-11-26T18:29:00Z')
    t.equal(await run(), 0, 'within the hour')
    now = new Date('2026-11-26T18:30:00Z')
    t.equal(await run(), 3, 'an hour later: the printer, the login and Globex\'s, not the outage')
    now = new Date('2026-11-26T19:30:00Z')
    t.equal(await run(), 3)
    now = new Date('2026-11-26T23:30:00Z')
    t.equal(await run(), 0, 'three is the cap')
    const levels = (await store.readStream(caseStreams.stream(login))).filter((e) => e.type === 'CaseEscalated').map((e) => (e.data as { level: number }).level)
    t.same(levels, [1, 2, 3], 'one event per level')
    t.match((await detail(admin, outage)).cases_obj, { escalation_count: 1, status: 'New' })
    t.equal((await breachNotices(alice.headers)).length, 3, 'told at each level')
    for (const policy of policies) await ok('DELETE', `/api/cases/escalation-policies/${policy.id}/`, admin)
    await ok('PATCH', `${BASE}${login}/`, admin, { assigned_to: [] })
    now = FIXED_NOW
  })

  t.test('watching: a watcher reads the case (not change it), watchers/ lists them, watching/ lists mine', async (t) => {
    const first = await inject('POST', `${BASE}${login}/watch/`, admin, {})
    t.equal(first.statusCode, 201)
    t.match(first.json(), { watching: true, subscribed_via: 'manual' })
    t.equal((await inject('POST', `${BASE}${login}/watch/`, admin, {})).statusCode, 200, 'already watching')
    t.equal((await inject('POST', `${BASE}${login}/watch/`, bob.headers, {})).statusCode, 403, 'only who may see it may watch it')
    t.match(await ok('POST', `${BASE}${printer}/watch/`, bob.headers, {}), { watching: true })
    const watchers = (await inject('GET', `${BASE}${login}/watchers/`, admin)).json()
    t.match(watchers, { count: 1, is_current_user_watching: true, watchers: [{ profile_id: acme.admin.profileId, email: 'admin@acme.test', subscribed_via: 'manual' }] })
    t.match((await inject('GET', `${BASE}watching/`, admin)).json(), { count: 1, cases: [{ id: login }] })
    t.match((await inject('GET', `${BASE}watching/?priority=Urgent`, admin)).json(), { count: 0 }, 'with the list\'s filters')
    // Alice gave the printer to Bob; as a watcher she keeps reading it once she is no longer its assignee.
    await ok('PATCH', `${BASE}${login}/`, admin, { assigned_to: [alice.profileId] })
    await ok('POST', `${BASE}${login}/watch/`, alice.headers, {})
    await ok('PATCH', `${BASE}${login}/`, admin, { assigned_to: [] })
    t.equal((await inject('GET', `${BASE}${login}/`, alice.headers)).statusCode, 200, 'the watcher reads it')
    t.equal((await inject('PATCH', `${BASE}${login}/`, alice.headers, { priority: 'High' })).statusCode, 403, 'but does not change it')
    t.ok((await list(alice.headers)).cases.some((c: Row) => c.id === login), 'and it is in her list')
    t.equal((await inject('DELETE', `${BASE}${login}/watch/`, alice.headers)).statusCode, 204)
    t.equal((await inject('GET', `${BASE}${login}/`, alice.headers)).statusCode, 403, 'unwatched, it is gone from her')
  })

  t.test('the tree: link/ under a parent, tree/ from the top, the rules refused on parent_id', async (t) => {
    const child = await made(admin, { name: 'Printer 2', parent: outage })
    t.match(await ok('POST', `${BASE}${login}/link/`, admin, { parent_id: child }), { id: login, parent: { id: child, name: 'Printer 2' } })
    const treeAnswer = await inject('GET', `${BASE}${login}/tree/`, admin)
    t.equal(treeAnswer.statusCode, 200, treeAnswer.body)
    const tree = treeAnswer.json()
    t.match(tree, { focus_id: login, root: { id: outage, is_problem: true, children: [{ id: child, children: [{ id: login, children: [] }] }] } })
    t.match((await detail(admin, child)).cases_obj, { parent: outage, parent_summary: { id: outage, name: 'Outage' }, child_count: 1 })
    t.match((await inject('POST', `${BASE}${outage}/link/`, admin, { parent_id: login })).json(), { errors: { parent_id: ['Linking would create a cycle.'] } })
    t.match((await inject('POST', `${BASE}${outage}/link/`, admin, { parent_id: outage })).json(), { errors: { parent_id: ['A case cannot be its own parent.'] } })
    t.match((await inject('POST', `${BASE}${printer}/link/`, bob.headers, { parent_id: outage })).json(), { errors: { parent_id: ['Parent case not found in this organization.'] } }, 'a case Bob may not see is no parent to him')
    const fourth = await made(admin, { name: 'Too deep' })
    t.match((await inject('POST', `${BASE}${fourth}/link/`, admin, { parent_id: login })).json(), { errors: { parent_id: ['Case tree is limited to 3 levels.'] } })
    t.match((await create(admin, { name: 'Too deep', parent: login })).json(), { errors: { parent: [String] } }, 'the body\'s parent follows the same rules')
    const closed = await ok('POST', `${BASE}${child}/close-with-children/`, admin, { cascade: true, resolution_comment: 'Fixed upstream' })
    t.match(closed, { id: child, status: 'Closed', cascaded_case_ids: [login], resolution_comment: 'Fixed upstream' })
    t.match(await detail(admin, login), { cases_obj: { status: 'Closed', closed_on: '2026-11-22' }, internal_notes: [{ comment: 'Fixed upstream' }] }, 'the child is closed and told why')
    t.match((await detail(admin, outage)).cases_obj, { status: 'New' }, 'the parent above is left alone')
    await ok('PATCH', `${BASE}${child}/`, admin, { status: 'Assigned' })
    t.match(await ok('POST', `${BASE}${outage}/close-with-children/`, admin, {}), { status: 'Closed', cascaded_case_ids: [] }, "no cascade given: the organization's setting (off) decides")
    await ok('PATCH', `${BASE}${login}/`, admin, { status: 'Assigned' })
    t.match(await ok('POST', `${BASE}${login}/link/`, admin, { parent_id: null }), { parent: null })
    t.match((await inject('POST', `${BASE}${login}/link/`, admin, { parent_id: null })).json(), { errors: { parent_id: [String] } }, 'nothing to unlink')
  })

  t.test('a task links to a case the caller may see, and shows it', async (t) => {
    const task = (await inject('POST', '/api/tasks/', admin, { title: 'Replace the toner', case: outage })).json().id as string
    t.match((await inject('GET', `/api/tasks/${task}/`, admin)).json().task_obj, { case: { id: outage, name: 'Outage' } })
    t.match((await inject('POST', '/api/tasks/', bob.headers, { title: 'Sneak', case: outage })).json(), { errors: { case: [String] } }, 'not a case Bob may not see')
    t.same((await inject('GET', `/api/tasks/?case=${outage}`, admin)).json().tasks.map((row: Row) => row.id), [task])
  })

  t.test('the board: by status or by a case pipeline\'s stages; a move sets the stage\'s status, and into Closed dates the case', async (t) => {
    const board = (await inject('GET', `${BASE}kanban/`, admin)).json()
    t.same(board.columns.map((c: Row) => c.id), ['New', 'Assigned', 'Pending', 'Closed', 'Rejected', 'Duplicate'])
    t.match(board, { mode: 'status', pipeline: null, total_cases: board.columns.reduce((n: number, c: { case_count: number }) => n + c.case_count, 0) })
    t.ok(board.columns.find((c: Row) => c.id === 'Assigned').cases.some((c: Row) => c.id === printer))
    const [pipeline] = (await inject('GET', '/api/cases/pipelines/', admin)).json().pipelines
    t.same(pipeline.stages.map((s: { name?: string; label?: string }) => s.label ?? s.name), ['New', 'In Progress', 'Resolved', 'Rejected'], 'the case seed')
    t.equal((await inject('POST', '/api/cases/pipelines/', bob.headers, { name: 'Mine' })).statusCode, 403, 'pipelines are for admins')
    const [, working, resolved] = pipeline.stages as { id: string }[]
    t.match(await ok('PATCH', `${BASE}${login}/move/`, admin, { stage_id: working!.id }), { case: { id: login, status: 'Assigned' } })
    now = new Date(FIXED_NOW.getTime() + 26 * HOUR)
    t.match(await ok('PATCH', `${BASE}${login}/move/`, admin, { stage_id: resolved!.id }), { case: { status: 'Closed', closed_on: '2026-11-23', resolved_at: '2026-11-23T11:00:00.000Z' } }, 'dated the day of the move')
    const staged = (await inject('GET', `${BASE}kanban/?pipeline_id=${pipeline.id}`, admin)).json()
    t.match(staged, { mode: 'pipeline', pipeline: { id: pipeline.id }, total_cases: 1 })
    t.same(staged.columns.find((c: Row) => c.id === resolved!.id).cases.map((c: Row) => c.id), [login])
    t.match(await ok('PATCH', `${BASE}${login}/move/`, admin, { status: 'Pending' }), { case: { status: 'Pending', closed_on: null, resolved_at: null } }, 'out of Closed clears the date')
    t.equal((await inject('PATCH', `${BASE}${login}/move/`, bob.headers, { status: 'New' })).statusCode, 403)
    t.match((await inject('PATCH', `${BASE}${login}/move/`, admin, {})).json(), { errors: { stage_id: [String] } })
    t.equal((await inject('GET', `${BASE}kanban/?pipeline_id=${randomUUID()}`, admin)).statusCode, 404)
    now = FIXED_NOW
  })

  t.test('a tag merge retags cases too', async (t) => {
    const [from, into] = [(await ok('POST', '/api/tags/', admin, { name: 'printers' })).id, (await ok('POST', '/api/tags/', admin, { name: 'hardware' })).id]
    await ok('PATCH', `${BASE}${outage}/`, admin, { tags: [from] })
    await ok('POST', `/api/tags/${from}/merge/`, admin, { into })
    t.match((await detail(admin, outage)).cases_obj.tags, [{ id: into, name: 'hardware' }])
  })

  t.test('delete: not an assignee; the creator, then it is gone; merged duplicates stay out of the list', async (t) => {
    const dup = await made(admin, { name: 'Dup', status: 'Duplicate' })
    t.notOk((await list(admin)).cases.some((c: Row) => c.id === dup), 'a duplicate is left out by default')
    t.ok((await list(admin, '?show_merged=true&limit=50')).cases.some((c: Row) => c.id === dup))
    t.equal((await inject('DELETE', `${BASE}${printer}/`, bob.headers)).statusCode, 403)
    await ok('DELETE', `${BASE}${printer}/`, alice.headers)
    t.equal((await inject('GET', `${BASE}${printer}/`, admin)).statusCode, 404)
  })

  t.test('the read model rebuilt from the log is identical; its open counts are its rows counted', async (t) => {
    await caseCountsEqualRows(t, database.db)
    const queries = ['', 'show_merged=true', 'status=New&status=Closed', 'priority=Urgent', `assigned_to=${alice.profileId}`, `assigned_to=${bob.profileId}&status=New&priority=Urgent`]
    await keptCountsEqualScan(t, list, { admin, alice: alice.headers, bob: bob.headers }, queries)
    await rebuildEqualsLive(t, { db: database.db, store }, casesProjector, { oneByOne: true })
    await figureFactsEqualCases(t, database.db)
    await figuresRebuildEqualsLive(t, { db: database.db, store })
    const statistics = await sql<{ schema: string }>`SELECT stxnamespace::regnamespace::text AS schema FROM pg_statistic_ext WHERE stxname = 'cases_org_status_priority'`.execute(database.db)
    t.same(statistics.rows, [{ schema: 'public' }], 'the joint statistics of status and priority are swapped in with the rebuilt table')
  })
})
