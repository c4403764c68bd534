import { randomUUID } from 'node:crypto'
import t from 'tap'
import { collectionClient, givenTwoOrganizations } from '../helpers/fixtures.ts'

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

  t.test("what the web app reads (issue 22): author, case_count; the detail's linked_cases", async (t) => {
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
