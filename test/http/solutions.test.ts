import { randomUUID } from 'node:crypto'
import t from 'tap'
import { caseSolutionsProjector } from '../../src/projections/case/solution-links.ts'
import { FIXED_NOW } from '../helpers/app.ts'
import { collectionClient, givenTwoOrganizations, jsonClient } from '../helpers/fixtures.ts'
import { rebuildEqualsLive } from '../helpers/read-models.ts'

const BASE = '/api/cases/solutions/'

t.test('solutions: /api/cases/solutions/ (§4.1 envelope, where-the-spec-is-silent.md totals)', async (t) => {
  const { app, acme, globex, alice, bob } = await givenTwoOrganizations(t)
  const admin = acme.admin.headers
  const { inject, create, list } = collectionClient(app, BASE)
  const made = async (headers: Record<string, string>, body: object) => {
    const res = await create(headers, body)
    t.equal(res.statusCode, 201, res.body)
    return res.json()
  }
  const a = await made(alice.headers, { title: 'Reset a password', description: 'Steps…' })
  const b = await made(admin, { title: 'Export data', status: 'approved' })
  await made(admin, { title: 'Billing cycles', status: 'reviewed', is_published: true })
  await made(globex.admin.headers, { title: 'Theirs' })

  t.test('the standard envelope plus totals of the whole base; next/previous links', async (t) => {
    const page = await list(admin, '?limit=2')
    t.same(Object.keys(page).sort(), ['count', 'next', 'previous', 'results', 'totals'])
    t.match(page, { count: 3, previous: null, results: [{ title: 'Billing cycles' }, { title: 'Export data' }] })
    t.match(page.next, /\/api\/cases\/solutions\/\?limit=2&offset=2$/)
    t.same(page.totals, { count: 3, published: 1, draft: 1, reviewed: 1, approved_unpublished: 1 })
    const second = await list(admin, '?limit=2&offset=2')
    t.match(second, { next: null, results: [{ id: a.id }] })
    t.match(second.previous, /offset=0/)
    t.same((await list(admin, '?status=approved')).totals, page.totals, 'totals ignore the filters')
    t.equal((await list(admin, '?status=approved')).count, 1)
    t.equal((await list(admin, '?status=nonsense')).count, 0, 'an unknown status matches nothing')
    t.equal((await list(admin, '?title=EXPORT')).count, 1)
    t.match((await list(admin, '?search=STEPS')).results, [{ id: a.id }], 'search: the title or the description')
    t.equal((await list(admin, '?search=export')).count, 1)
    t.equal((await list(globex.admin.headers)).count, 1, 'another organization sees only its own')
  })

  t.test("what the web app reads (issue 22): author, case_count (0: no case links it); the detail's linked_cases", async (t) => {
    t.match(a, { author: 'alice@acme.test', case_count: 0 }, 'a creator without a name: their email')
    await inject('PATCH', `/api/user/${alice.profileId}/`, alice.headers, { first_name: 'Alice', last_name: 'Able' })
    const detail = (await inject('GET', `${BASE}${a.id}/`, admin)).json()
    t.match(detail, { id: a.id, author: 'Alice Able', case_count: 0, linked_cases: [] })
    t.match((await list(admin, '?search=steps')).results, [{ author: 'Alice Able' }])
  })

  t.test('bare data: create 201, PATCH/PUT answer the record, DELETE 204; validation by status', async (t) => {
    t.match(a, { title: 'Reset a password', status: 'draft', is_published: false, created_by: alice.profileId })
    t.match((await inject('PATCH', `${BASE}${a.id}/`, bob.headers, { status: 'reviewed' })).json(), { id: a.id, status: 'reviewed', title: 'Reset a password' })
    t.match((await inject('PUT', `${BASE}${a.id}/`, bob.headers, { title: 'Reset your password' })).json(), { title: 'Reset your password', status: 'draft', description: null })
    const bad = await create(admin, { title: ' ', status: 'final' })
    t.equal(bad.statusCode, 400)
    t.match(bad.json(), { errors: { title: [String], status: [String] } })
    t.equal((await inject('DELETE', `${BASE}${a.id}/`, bob.headers)).statusCode, 403, 'neither admin nor creator')
    t.equal((await inject('DELETE', `${BASE}${a.id}/`, alice.headers)).statusCode, 204)
    t.equal((await inject('GET', `${BASE}${a.id}/`, admin)).statusCode, 404)
  })

  t.test('publish and unpublish: admins only', async (t) => {
    t.equal((await inject('POST', `${BASE}${b.id}/publish/`, alice.headers)).statusCode, 403)
    t.match((await inject('POST', `${BASE}${b.id}/publish/`, admin)).json(), { is_published: true })
    t.match((await list(admin)).totals, { approved_unpublished: 0 })
    t.match((await inject('POST', `${BASE}${b.id}/unpublish/`, admin)).json(), { is_published: false })
  })

  t.test('other organization and bad ids: 404', async (t) => {
    for (const [method, url] of [['GET', `${BASE}${b.id}/`], ['PATCH', `${BASE}${b.id}/`], ['DELETE', `${BASE}${b.id}/`], ['POST', `${BASE}${b.id}/publish/`]] as const) {
      t.equal((await inject(method, url, globex.admin.headers, method === 'PATCH' ? { title: 'x' } : undefined)).statusCode, 404, `${method} ${url}`)
    }
    t.equal((await inject('GET', `${BASE}${randomUUID()}/`, admin)).statusCode, 404)
    t.equal((await inject('GET', `${BASE}nope/`, admin)).statusCode, 404)
    t.match((await inject('GET', `${BASE}${b.id}/`, admin)).json(), { title: 'Export data' }, 'unchanged')
  })
})

t.test('solutions on a case: /api/cases/{id}/solutions/ and /api/cases/{id}/solution-suggestions/', async (t) => {
  // A minute passes between writes, so "newest first" is seen.
  let now = FIXED_NOW.getTime()
  const { app, database, store, acme, globex, alice, bob } = await givenTwoOrganizations(t, { clock: () => new Date((now += 60_000)) })
  const admin = acme.admin.headers
  const { call, ok } = jsonClient(app, admin)
  const solution = async (body: object, headers = admin) => (await ok('POST', BASE, headers, { status: 'approved', is_published: true, ...body })).id as string
  const kase = async (body: object, headers = admin) => (await ok('POST', '/api/cases/', headers, body)).id as string
  const tray = Array(20).fill('Open the tray.').join(' ')
  const jams = await solution({ title: 'Printer jams', description: tray })
  const stuck = await solution({ title: 'Paper stuck', description: 'Check the tray rollers' })
  const drivers = await solution({ title: 'Printer drivers', status: 'draft', is_published: false })
  const theirs = await solution({ title: 'Theirs' }, globex.admin.headers)
  const printer = await kase({ name: 'Printer on fire', description: 'Smoke from the tray' }, alice.headers)
  const outage = await kase({ name: 'Outage' })
  const links = (caseId: string) => `/api/cases/${caseId}/solutions/`

  t.test('link: 201 with the solution, 200 when already linked; the item path links too', async (t) => {
    const first = await call('POST', links(printer), alice.headers, { solution_id: jams })
    t.equal(first.statusCode, 201, first.body)
    t.match(first.json(), { error: false, solution: { id: jams, title: 'Printer jams', case_count: 1 } })
    const again = await call('POST', links(printer), alice.headers, { solution_id: jams })
    t.equal(again.statusCode, 200)
    t.match(again.json(), { error: false, solution: { id: jams, case_count: 1 } })
    t.equal((await call('POST', `${links(printer)}${drivers}/`, alice.headers)).statusCode, 201, 'an unpublished solution may be linked (the original)')
    t.equal((await call('POST', links(outage), admin, { solution_id: jams })).statusCode, 201)
  })

  t.test('refusals: 400 without solution_id, 404 for another organization\'s or a malformed id, 403 for a member who may not change the case', async (t) => {
    t.match((await call('POST', links(printer), alice.headers, {})).json(), { error: true, errors: { solution_id: ['solution_id required'] } })
    t.equal((await call('POST', links(printer), alice.headers, { solution_id: ' ' })).statusCode, 400)
    for (const id of [theirs, randomUUID(), 'nope']) t.equal((await call('POST', links(printer), alice.headers, { solution_id: id })).statusCode, 404, `solution ${id}`)
    t.equal((await call('POST', `${links(printer)}nope/`, alice.headers)).statusCode, 404, 'a malformed id in the path')
    t.equal((await call('DELETE', `${links(printer)}${theirs}/`, alice.headers)).statusCode, 404)
    t.equal((await call('POST', links(printer), bob.headers, { solution_id: jams })).statusCode, 403, 'Bob may not see the case')
    t.equal((await call('DELETE', `${links(printer)}${jams}/`, bob.headers)).statusCode, 403)
    t.equal((await call('POST', links(printer), globex.admin.headers, { solution_id: theirs })).statusCode, 404, "another organization's case")
  })

  t.test("what the apps read: the case detail's solutions, case_count, the linked cases the caller may read", async (t) => {
    const detail = await ok('GET', `/api/cases/${printer}/`, alice.headers)
    t.match(detail.solutions, [{ id: drivers, case_count: 1, author: 'admin@acme.test' }, { id: jams, case_count: 2 }], 'newest solution first, in the solutions\' own shape')
    t.same((await ok('GET', `/api/cases/${outage}/`)).solutions.map((s: { id: string }) => s.id), [jams])
    t.match((await ok('GET', `${BASE}?search=printer`)).results, [{ id: drivers, case_count: 1 }, { id: jams, case_count: 2 }])
    t.match((await ok('GET', `${BASE}${jams}/`)).linked_cases, [{ id: outage, name: 'Outage', status: 'New', priority: 'Normal' }, { id: printer }])
    t.match(await ok('GET', `${BASE}${jams}/`, alice.headers), { case_count: 2, linked_cases: [{ id: printer, name: 'Printer on fire' }] }, 'Alice may not read the outage')
    t.equal((await ok('GET', `${BASE}${jams}/`, alice.headers)).linked_cases.length, 1)
    t.match(await ok('GET', `${BASE}${jams}/`, bob.headers), { case_count: 2, linked_cases: [] }, 'Bob reads neither')
  })

  t.test('unlink: 204 on the item path, and on the collection path with solution_id in the body or the query; a deleted case counts no more', async (t) => {
    t.equal((await call('DELETE', `${links(printer)}${jams}/`, alice.headers)).statusCode, 204)
    t.equal((await call('DELETE', `${links(printer)}${jams}/`, alice.headers)).statusCode, 204, 'not linked any more: nothing to do')
    t.match((await call('DELETE', links(printer), alice.headers)).json(), { errors: { solution_id: ['solution_id required'] } })
    t.equal((await call('DELETE', links(printer), alice.headers, { solution_id: drivers })).statusCode, 204)
    t.same((await ok('GET', `/api/cases/${printer}/`, alice.headers)).solutions, [])
    await ok('POST', links(printer), alice.headers, { solution_id: stuck })
    t.equal((await call('DELETE', `${links(printer)}?solution_id=${stuck}`, alice.headers)).statusCode, 204)
    t.same((await ok('GET', `/api/cases/${printer}/`, alice.headers)).solutions, [])
    t.match(await ok('GET', `${BASE}${jams}/`), { case_count: 1, linked_cases: [{ id: outage }] })
    await ok('DELETE', `/api/cases/${outage}/`)
    t.match(await ok('GET', `${BASE}${jams}/`), { case_count: 0, linked_cases: [] })
  })

  t.test('suggestions: published solutions matching q, else the case\'s own words, else the latest; limit 1 to 20; only for whoever may read the case', async (t) => {
    const suggest = async (caseId: string, query = '', headers = alice.headers) => ok('GET', `/api/cases/${caseId}/solution-suggestions/${query}`, headers)
    const ids = (answer: Record<string, any>) => answer.results.map((r: { id: string }) => r.id)
    const found = await suggest(printer, '?q=%20PRINTER%20')
    t.match(found, { q: 'PRINTER', count: 1, results: [{ id: jams, title: 'Printer jams', body: tray, updated_at: String }] }, 'the unpublished one is left out')
    t.equal(found.results[0].snippet.length, 200)
    t.match(found.results[0].snippet, /^Open the tray\..*…$/)
    t.same(ids(await suggest(printer)), [stuck, jams], "seeded by the case's words (printer, fire, smoke, from, tray): any of them, newest first")
    const quiet = await kase({ name: 'Hi', description: 'Why so?' }, alice.headers)
    const fallback = await suggest(quiet)
    t.equal(fallback.count, 2, 'no words to seed: the latest published')
    t.same(ids(fallback), [stuck, jams])
    t.same(ids(await suggest(quiet, '?q=zzz')), [], 'a q that matches nothing finds nothing')
    for (let i = 0; i < 5; i++) await solution({ title: `Tip ${i}` })
    t.equal((await suggest(quiet)).count, 5, 'default 5')
    t.equal((await suggest(quiet, '?limit=abc')).count, 5, 'not an integer: the default')
    t.equal((await suggest(quiet, '?limit=0')).count, 1, 'at least 1')
    t.equal((await suggest(quiet, '?limit=100')).count, 7, 'at most 20: every published one here')
    t.equal((await call('GET', `/api/cases/${printer}/solution-suggestions/`, bob.headers)).statusCode, 403, 'Bob may not read the case (the original only checked its organization)')
    t.equal((await call('GET', `/api/cases/${printer}/solution-suggestions/`, globex.admin.headers)).statusCode, 404)
  })

  t.test('the links read model rebuilt from the log is identical', async (t) => {
    const live = await rebuildEqualsLive(t, { db: database.db, store }, caseSolutionsProjector, { oneByOne: true })
    t.equal(live.case_solutions!.length, 1, 'the outage keeps its link, deleted as it is')
  })
})
