import t from 'tap'
import { caseStream } from '../../src/commands/case/case.ts'
import { logTransport } from '../../src/identity/mail.ts'
import { FIXED_NOW, buildTestApp } from '../helpers/app.ts'
import { givenOrganization } from '../helpers/identity.ts'
import type { Headers } from '../helpers/fixtures.ts'
import { portalSignIn, requestPortalMail } from '../helpers/portal.ts'
import { silentLogger } from '../helpers/runner.ts'

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE'
const SENT = { error: false, message: 'If this address belongs to a contact of the organization, a sign-in link and code have been sent to it' }
const RATE_LIMIT = 10

t.test('/api/portal/', async (t) => {
  const mail = logTransport(silentLogger)
  const clock = { now: FIXED_NOW }
  const { app, store, database } = await buildTestApp(t, { mail, clock: () => clock.now, env: { AUTH_RATE_LIMIT_MAX: String(RATE_LIMIT) } })
  const acme = await givenOrganization(app, database.db, 'Acme')
  const globex = await givenOrganization(app, database.db, 'Globex')
  const A = acme.admin.headers
  const call = (method: Method, url: string, headers: Headers = {}, payload?: object) => app.inject({ method, url, headers, payload })
  const ok = async (method: Method, url: string, headers: Headers, payload?: object) => {
    const res = await call(method, url, headers, payload)
    if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`)
    return res.json()
  }
  const account = (await ok('POST', '/api/accounts/', A, { name: 'Initech' })).id as string
  const contact = async (headers: Headers, body: object) => (await ok('POST', '/api/contacts/', headers, body)).id as string
  const peter = await contact(A, { first_name: 'Peter', email: 'peter@initech.test', account })
  const milton = await contact(A, { first_name: 'Milton', email: 'milton@initech.test', account })
  // The same address at another organization: a different contact, bound to Globex.
  const globexPeter = await contact(globex.admin.headers, { first_name: 'Peter', email: 'peter@initech.test' })
  const caseOf = async (headers: Headers, body: object) => (await ok('POST', '/api/cases/', headers, body)).id as string
  const printer = await caseOf(A, { name: 'Printer jams', contacts: [peter], assigned_to: [acme.admin.profileId] })
  const stapler = await caseOf(A, { name: "Milton's stapler", contacts: [milton] })
  const globexCase = await caseOf(globex.admin.headers, { name: 'Globex secret case', contacts: [globexPeter] })
  await ok('POST', `/api/cases/${printer}/`, A, { comment: 'Have you tried PC LOAD LETTER?' })
  await ok('POST', `/api/cases/${printer}/`, A, { comment: 'Internal: he broke it himself', is_internal: true })
  const published = (await ok('POST', '/api/cases/solutions/', A, { title: 'Clearing a printer jam', description: 'Open the tray and pull the paper gently.', status: 'approved' })).id as string
  await ok('POST', `/api/cases/solutions/${published}/publish/`, A)
  const draft = (await ok('POST', '/api/cases/solutions/', A, { title: 'Printer draft notes', description: 'Not for customers.' })).id as string

  const session = await portalSignIn(app, mail, acme.orgId, 'Peter@Initech.test')
  const P = session.headers

  t.test('login/request/ answers the same for any address; mail goes only to a live contact, bound to the organization', async (t) => {
    const before = mail.outbox.length
    const answers = []
    for (const email of ['milton@initech.test', 'stranger@initech.test', 'admin@acme.test']) {
      const res = await call('POST', `/api/portal/login/${acme.orgId}/request/`, {}, { email })
      answers.push({ status: res.statusCode, body: res.json() })
    }
    await app.afterReply.settled()
    t.same(answers, Array(3).fill({ status: 200, body: SENT }), 'a contact, a stranger and a staff member (no contact) get the same answer')
    t.same(mail.outbox.slice(before).map((m) => m.to), ['milton@initech.test'], 'one mail, to the contact')
    t.match(mail.outbox.at(-1), { subject: 'Your support portal sign-in link', text: new RegExp(`/portal/sign-in\\?org=${acme.orgId}&token=svc_pl_.*code: \\d{6}.*15 minutes`, 's') })
    t.equal((await call('POST', '/api/portal/login/not-an-org/request/', {}, { email: 'x@y.test' })).statusCode, 404, 'a malformed organization id reads as a missing one')
  })

  t.test('login/verify/ trades a link once, in its own organization, for a portal token of that contact', async (t) => {
    t.same(session.contact, { id: peter, first_name: 'Peter', last_name: null, email: 'peter@initech.test' })
    t.same(session.organization, { id: acme.orgId, name: 'Acme' })
    const claims = app.jwt.decode<{ sub: string; org_id: string; typ: string; iat: number; exp: number }>(session.access_token)!
    t.match(claims, { sub: peter, org_id: acme.orgId, typ: 'portal' })
    t.equal(claims.exp - claims.iat, 8 * 3600, 'eight hours')
    const { token, code } = await requestPortalMail(app, mail, acme.orgId, 'peter@initech.test')
    const verify = (orgId: string, body: object) => call('POST', `/api/portal/login/${orgId}/verify/`, {}, body)
    t.equal((await verify(globex.orgId, { token })).statusCode, 401, "Acme's link at Globex")
    t.equal((await verify(acme.orgId, { email: 'peter@initech.test', code: code === '000000' ? '111111' : '000000' })).statusCode, 401, 'a wrong code')
    const byCode = await verify(acme.orgId, { email: 'peter@initech.test', code })
    t.equal(byCode.statusCode, 200, byCode.body)
    t.equal((await verify(acme.orgId, { token })).statusCode, 401, 'signing in spent every live link of the contact')
    t.equal((await verify(acme.orgId, {})).statusCode, 400)
    const globexSession = await portalSignIn(app, mail, globex.orgId, 'peter@initech.test')
    t.equal(globexSession.contact.id, globexPeter, "Globex's Peter, not Acme's")
    clock.now = new Date(FIXED_NOW.getTime() + 16 * 60_000)
    const late = await requestPortalMail(app, mail, acme.orgId, 'milton@initech.test')
    clock.now = new Date(clock.now.getTime() + 16 * 60_000)
    t.equal((await verify(acme.orgId, late)).statusCode, 401, 'expired after 15 minutes')
    clock.now = FIXED_NOW
  })

  t.test('a portal token reaches only portal routes, and portal routes take only a portal token', async (t) => {
    for (const url of ['/api/cases/', `/api/cases/${printer}/`, '/api/contacts/', '/api/auth/me/', '/api/cases/solutions/']) {
      t.equal((await call('GET', url, P)).statusCode, 401, `portal token on GET ${url}`)
    }
    t.equal((await call('POST', '/api/cases/', P, { name: 'x' })).statusCode, 401, 'portal token on POST /api/cases/')
    for (const headers of [A, {}, { authorization: 'Bearer nonsense' }]) {
      t.equal((await call('GET', '/api/portal/cases/', headers)).statusCode, 401, `GET /api/portal/cases/ with ${JSON.stringify(headers).slice(0, 30)}`)
      t.equal((await call('GET', '/api/portal/articles/', headers)).statusCode, 401)
    }
  })

  t.test("cases/: the contact's own cases only; another contact's and another organization's are 404", async (t) => {
    const list = await ok('GET', '/api/portal/cases/', P)
    t.same({ count: list.count, names: list.results.map((c: { name: string }) => c.name) }, { count: 1, names: ['Printer jams'] })
    t.notOk(JSON.stringify(list).includes(acme.admin.profileId), 'no assignee of the team')
    const staplerEvents = (await store.readStream(caseStream(stapler))).length
    for (const id of [stapler, globexCase, milton]) {
      t.equal((await call('GET', `/api/portal/cases/${id}/`, P)).statusCode, 404, `GET ${id}`)
      t.equal((await call('POST', `/api/portal/cases/${id}/comment/`, P, { comment: 'me too' })).statusCode, 404, `comment on ${id}`)
    }
    t.equal((await store.readStream(caseStream(stapler))).length, staplerEvents, 'nothing appended to a case refused')
    t.same((await ok('GET', '/api/portal/cases/?status=closed', P)).count, 0)
  })

  t.test('cases/{id}/ shows the public comments; internal notes are never shown', async (t) => {
    const detail = await ok('GET', `/api/portal/cases/${printer}/`, P)
    t.match(detail, { id: printer, name: 'Printer jams', status: 'New', priority: 'Normal' })
    t.same(detail.comments.map((c: { comment: string; from: string; author: string }) => [c.comment, c.from, c.author]), [['Have you tried PC LOAD LETTER?', 'support', 'Support']])
    t.notOk(JSON.stringify(detail).includes('Internal'), 'the internal note is nowhere in the answer')
  })

  t.test('POST cases/ opens a case for the contact, on their account; the team sees it', async (t) => {
    const res = await call('POST', '/api/portal/cases/', P, { name: 'Cannot log in', description: 'Since Monday.', priority: 'High' })
    t.equal(res.statusCode, 201, res.body)
    t.match(res.headers['x-event-position'], /^\d+-\d+$/)
    const opened = res.json().case
    t.match(opened, { name: 'Cannot log in', description: 'Since Monday.', priority: 'High', status: 'New', comments: [] })
    const staff = await ok('GET', `/api/cases/${opened.id}/`, A)
    t.same(staff.cases_obj.contacts.map((c: { id: string }) => c.id), [peter])
    t.equal(staff.cases_obj.account?.id, account)
    const [created] = await store.readStream(caseStream(opened.id))
    t.match(created!.metadata, { actorId: null, contactId: peter }, 'the contact is named in the metadata')
    t.equal((await ok('GET', '/api/portal/cases/', P)).count, 2)
    t.equal((await call('POST', '/api/portal/cases/', P, { name: ' ' })).statusCode, 400)
    t.equal((await call('POST', '/api/portal/cases/', P, { name: 'x', assigned_to: [acme.admin.profileId] })).statusCode, 400, 'no field of the team')
  })

  t.test('comment/: a public reply; a case waiting on the customer goes back to the team', async (t) => {
    await ok('PATCH', `/api/cases/${printer}/`, A, { status: 'Pending' })
    const res = await call('POST', `/api/portal/cases/${printer}/comment/`, P, { comment: 'It says PC LOAD LETTER' })
    t.equal(res.statusCode, 201, res.body)
    const answered = res.json().case
    t.equal(answered.status, 'Assigned', 'out of Pending, to its assignee')
    // (The clock is fixed: both comments have the same time, so their order is not asserted.)
    t.match(answered.comments.find((c: { comment: string }) => c.comment === 'It says PC LOAD LETTER'), { from: 'customer', author: 'You' })
    const staff = await ok('GET', `/api/cases/${printer}/`, A)
    t.ok(staff.comments.some((c: { comment: string }) => c.comment === 'It says PC LOAD LETTER'), 'the team reads it as a comment')
    t.equal(staff.internal_notes.length, 1)
    t.equal((await call('POST', `/api/portal/cases/${printer}/comment/`, P, { comment: '' })).statusCode, 400)
  })

  t.test('articles/: the published knowledge base only', async (t) => {
    const list = await ok('GET', '/api/portal/articles/', P)
    t.same(list.results.map((a: { id: string }) => a.id), [published])
    t.equal((await call('GET', `/api/portal/articles/${draft}/`, P)).statusCode, 404, 'a draft')
    t.match(await ok('GET', `/api/portal/articles/${published}/`, P), { id: published, title: 'Clearing a printer jam' })
    const suggested = await ok('GET', '/api/portal/articles/suggest/?q=printer%20ja', P)
    t.same(suggested.results.map((a: { id: string }) => a.id), [published], 'ranked, drafts left out')
    t.same((await ok('GET', '/api/portal/articles/suggest/?q=x', P)).results, [])
  })

  t.test('a deleted or erased contact, or a deactivated organization, loses the portal at once', async (t) => {
    const lumbergh = await contact(A, { first_name: 'Bill', email: 'lumbergh@initech.test' })
    const lumberghSession = await portalSignIn(app, mail, acme.orgId, 'lumbergh@initech.test')
    t.equal((await call('GET', '/api/portal/cases/', lumberghSession.headers)).statusCode, 200)
    t.equal((await call('POST', '/api/privacy/erasures/', A, { kind: 'contact', id: lumbergh })).statusCode, 201)
    t.equal((await call('GET', '/api/portal/cases/', lumberghSession.headers)).statusCode, 401, 'erased: the record stays, the person is gone')
    const miltonSession = await portalSignIn(app, mail, acme.orgId, 'milton@initech.test')
    t.equal((await call('GET', '/api/portal/cases/', miltonSession.headers)).statusCode, 200)
    await ok('DELETE', `/api/contacts/${milton}/`, A)
    t.equal((await call('GET', '/api/portal/cases/', miltonSession.headers)).statusCode, 401)
    const globexSession = await portalSignIn(app, mail, globex.orgId, 'peter@initech.test')
    t.equal((await call('GET', '/api/portal/cases/', globexSession.headers)).statusCode, 200)
    await database.db.updateTable('organizations').set({ is_active: false }).where('id', '=', globex.orgId).execute()
    t.equal((await call('GET', '/api/portal/cases/', globexSession.headers)).statusCode, 401)
    t.equal((await call('POST', `/api/portal/login/${globex.orgId}/verify/`, {}, await requestPortalMail(app, mail, globex.orgId, 'peter@initech.test').catch(() => ({ token: 'none' })))).statusCode, 401, 'and no new sign-in')
  })

  t.test('sign-in is rate-limited per client IP and email (429 with Retry-After)', async (t) => {
    const statuses = []
    for (let i = 0; i <= RATE_LIMIT; i++) statuses.push((await call('POST', `/api/portal/login/${acme.orgId}/request/`, {}, { email: 'flood@initech.test' })).statusCode)
    t.same(statuses, [...Array(RATE_LIMIT).fill(200), 429])
    const verifies = []
    for (let i = 0; i <= RATE_LIMIT; i++) verifies.push(await call('POST', `/api/portal/login/${acme.orgId}/verify/`, {}, { email: 'flood@initech.test', code: '123456' }))
    t.same(verifies.map((res) => res.statusCode), [...Array(RATE_LIMIT).fill(401), 429], 'wrong codes, then no more tries')
    t.ok(verifies.at(-1)!.headers['retry-after'])
    await app.afterReply.settled()
  })
})
