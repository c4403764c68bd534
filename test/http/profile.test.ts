import t from 'tap'
import { buildTestApp } from '../helpers/app.ts'
import { givenOrganization } from '../helpers/identity.ts'
import { recordSignIn } from '../../src/identity/users.ts'

t.test('own profile', async (t) => {
  const { app, database } = await buildTestApp(t)
  const db = database.db
  const acme = await givenOrganization(app, db, 'Acme')
  const globex = await givenOrganization(app, db, 'Globex')
  const alice = await acme.addMember('alice@acme.test')
  const aliceAtGlobex = await globex.addMember('ALICE@acme.test')
  const apiKey = (await app.inject({ method: 'POST', url: '/api/org/api-key/', headers: acme.admin.headers })).json().api_key as string

  t.test('GET /api/profile/ and GET /api/auth/profile/', async (t) => {
    const res = await app.inject({ url: '/api/profile/', headers: { ...alice.headers, org: globex.orgId } })
    t.equal(res.statusCode, 200)
    t.same(res.json(), {
      error: false,
      user_obj: {
        id: alice.profileId,
        user_details: { id: alice.userId, email: 'alice@acme.test', first_name: '', last_name: '', name: '', last_login: null },
        role: 'USER',
        is_active: true,
        phone: '',
        created_at: res.json().user_obj.created_at,
        org: { id: acme.orgId, name: 'Acme' },
        teams: [],
      },
    }, 'the profile of the credential, whatever the org header says')
    const detail = (await app.inject({ url: '/api/auth/profile/', headers: alice.headers })).json()
    t.same({ error: detail.error, user_obj: detail.user_obj }, res.json(), 'both routes answer the same user_obj')
    t.same({ ...detail, error: undefined, user_obj: undefined }, {
      error: undefined,
      user_obj: undefined,
      id: alice.profileId,
      user: { id: alice.userId, email: 'alice@acme.test', name: 'alice', profile_pic: null },
      org: { id: acme.orgId, name: 'Acme' },
      role: 'USER',
      is_organization_admin: false,
      has_sales_access: true,
      has_marketing_access: true,
      phone: '',
      date_of_joining: res.json().user_obj.created_at.slice(0, 10),
      is_active: true,
      teams: [],
      last_login: null,
    }, "/api/auth/profile/ is also the original's flat profile detail (the phone app's profile screen)")
    t.equal(aliceAtGlobex.userId, alice.userId, 'one user in two organizations')
    t.match((await app.inject({ url: '/api/profile/', headers: aliceAtGlobex.headers })).json(), { user_obj: { id: aliceAtGlobex.profileId, org: { id: globex.orgId, name: 'Globex' } } })
    t.equal((await app.inject({ url: '/api/profile/', headers: { token: apiKey } })).statusCode, 403, 'the API key belongs to no user')
    t.equal((await app.inject({ url: '/api/profile/' })).statusCode, 401)
  })

  t.test('PATCH /api/profile/', async (t) => {
    const escalate = await app.inject({ method: 'PATCH', url: '/api/profile/', headers: alice.headers, payload: { first_name: 'Alice', role: 'ADMIN', is_active: false } })
    t.equal(escalate.statusCode, 400, 'role and status are refused here, not silently dropped')
    t.same(Object.keys(escalate.json().errors).sort(), ['is_active', 'role'])
    const res = await app.inject({ method: 'PATCH', url: '/api/profile/', headers: alice.headers, payload: { first_name: 'Alice', last_name: 'Liddell', phone: '+44 20 7946 0000' } })
    t.equal(res.statusCode, 200)
    t.match(res.json(), { error: false, message: String, user_obj: { id: alice.profileId, role: 'USER', is_active: true, phone: '+44 20 7946 0000', user_details: { first_name: 'Alice', last_name: 'Liddell' } } })
    const row = await db.selectFrom('profiles').selectAll().where('id', '=', alice.profileId).executeTakeFirstOrThrow()
    t.match(row, { role: 'USER', is_active: true }, 'role and status are not editable here')
    const elsewhere = (await app.inject({ url: '/api/profile/', headers: aliceAtGlobex.headers })).json().user_obj
    t.match(elsewhere, { phone: '', user_details: { first_name: 'Alice' } }, 'the name belongs to the user; the phone to the profile')
    const bad = await app.inject({ method: 'PATCH', url: '/api/profile/', headers: alice.headers, payload: { phone: 'not a phone' } })
    t.equal(bad.statusCode, 400)
    t.match(bad.json(), { error: true, errors: { phone: [String] } })
    t.equal((await app.inject({ method: 'PATCH', url: '/api/profile/', headers: { token: apiKey }, payload: { phone: '1' } })).statusCode, 403)
  })

  t.test("what the web app's profile page reads and sends (issue 22): one name, teams, last_login", async (t) => {
    const res = await app.inject({ method: 'PATCH', url: '/api/profile/', headers: alice.headers, payload: { name: '  Alice  Pleasance Liddell ', phone: '' } })
    t.equal(res.statusCode, 200, res.body)
    t.match(res.json().user_obj, { phone: '', user_details: { first_name: 'Alice', last_name: 'Pleasance Liddell', name: 'Alice Pleasance Liddell' } })
    t.match((await app.inject({ method: 'PATCH', url: '/api/profile/', headers: alice.headers, payload: { name: 'Al', last_name: 'Kept' } })).json().user_obj, { user_details: { first_name: 'Al', last_name: 'Kept' } }, 'last_name wins over the rest of name')
    const team = await app.inject({ method: 'POST', url: '/api/teams/', headers: acme.admin.headers, payload: { name: 'Support', users: [alice.profileId] } })
    t.equal(team.statusCode, 201, team.body)
    await app.inject({ method: 'POST', url: '/api/teams/', headers: acme.admin.headers, payload: { name: 'Others', users: [] } })
    const at = new Date('2026-11-20T08:00:00Z')
    await recordSignIn(db, alice.profileId, at)
    const own = (await app.inject({ url: '/api/profile/', headers: alice.headers })).json().user_obj
    t.same(own.teams, ['Support'])
    t.equal(own.user_details.last_login, at.toISOString())
  })
})
