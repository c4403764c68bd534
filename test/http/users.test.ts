import { randomUUID } from 'node:crypto'
import t from 'tap'
import { buildTestApp } from '../helpers/app.ts'
import { givenOrganization } from '../helpers/identity.ts'
import { recordSignIn } from '../../src/identity/users.ts'
import { bearer, givenSignInWorld, signIn } from '../helpers/sign-in.ts'

t.test('users and members', async (t) => {
  const { app, database } = await buildTestApp(t)
  const db = database.db
  const acme = await givenOrganization(app, db, 'Acme')
  const globex = await givenOrganization(app, db, 'Globex')
  const alice = await acme.addMember('alice@acme.test')
  const bob = await acme.addMember('bob@acme.test')
  const gina = await globex.addMember('gina@globex.test')

  const profileRow = (profileId: string) => db.selectFrom('profiles').selectAll().where('id', '=', profileId).executeTakeFirstOrThrow()
  const userRow = (userId: string) => db.selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirstOrThrow()

  t.test('GET /api/users/', async (t) => {
    t.test('lists active and inactive members of the caller organization only', async (t) => {
      const res = await app.inject({ url: '/api/users/', headers: { ...acme.admin.headers, org: globex.orgId } })
      t.equal(res.statusCode, 200)
      const body = res.json()
      t.same(body.roles, [['ADMIN', 'ADMIN'], ['USER', 'USER']])
      t.same(body.status, [['Active', 'Active'], ['Inactive', 'Inactive']])
      t.equal(body.admin_email, 'admin@acme.test')
      t.equal(body.active_users.active_users_count, 3)
      t.same(body.active_users.active_users.map((u: { user_details: { email: string } }) => u.user_details.email).sort(), ['admin@acme.test', 'alice@acme.test', 'bob@acme.test'], 'the org header has no effect')
      t.same(body.inactive_users, { inactive_users_count: 0, inactive_users: [], offset: null })
      const row = body.active_users.active_users.find((u: { id: string }) => u.id === alice.profileId)
      t.match(row, { id: alice.profileId, user_details: { id: alice.userId, email: 'alice@acme.test', first_name: '', last_name: '' }, role: 'USER', is_active: true, phone: '', created_at: String })
    })

    t.test('pages each section by limit and offset', async (t) => {
      const first = (await app.inject({ url: '/api/users/?limit=2', headers: acme.admin.headers })).json()
      t.equal(first.active_users.active_users.length, 2)
      t.equal(first.active_users.offset, 2)
      const last = (await app.inject({ url: '/api/users/?limit=2&offset=2', headers: acme.admin.headers })).json()
      t.equal(last.active_users.active_users.length, 1)
      t.equal(last.active_users.offset, null)
      const seen = [...first.active_users.active_users, ...last.active_users.active_users].map((u: { id: string }) => u.id)
      t.equal(new Set(seen).size, 3, 'pages do not overlap')
    })

    t.test('filters by email and role; unknown values match nothing', async (t) => {
      const byEmail = (await app.inject({ url: '/api/users/?email=ALICE', headers: acme.admin.headers })).json()
      t.same(byEmail.active_users.active_users.map((u: { id: string }) => u.id), [alice.profileId])
      const admins = (await app.inject({ url: '/api/users/?role=ADMIN', headers: acme.admin.headers })).json()
      t.equal(admins.active_users.active_users_count, 1)
      const none = (await app.inject({ url: '/api/users/?role=OWNER', headers: acme.admin.headers }))
      t.equal(none.statusCode, 200)
      t.equal(none.json().active_users.active_users_count, 0)
    })

    t.test('bad paging is a 400, never a 500', async (t) => {
      const res = await app.inject({ url: '/api/users/?limit=abc&offset=-1', headers: acme.admin.headers })
      t.equal(res.statusCode, 400)
      t.match(res.json(), { error: true, errors: { limit: [String], offset: [String] } })
    })

    t.test('non-admins get 403; no credential 401', async (t) => {
      t.equal((await app.inject({ url: '/api/users/', headers: alice.headers })).statusCode, 403)
      t.equal((await app.inject({ url: '/api/users/' })).statusCode, 401)
    })
  })

  t.test('POST /api/users/', async (t) => {
    t.test('creates the user and a profile in the caller organization', async (t) => {
      const res = await app.inject({ method: 'POST', url: '/api/users/', headers: { ...acme.admin.headers, org: globex.orgId }, payload: { email: 'carol@acme.test', role: 'USER', phone: '+1 555 0100' } })
      t.equal(res.statusCode, 200)
      const body = res.json()
      t.match(body, { error: false, message: String, id: String, user_id: String })
      t.match(await profileRow(body.id), { user_id: body.user_id, org_id: acme.orgId, role: 'USER', is_active: true, phone: '+1 555 0100' })
      t.equal((await userRow(body.user_id)).email, 'carol@acme.test')
    })

    t.test('reuses an existing user, matching the email case-insensitively', async (t) => {
      const res = await app.inject({ method: 'POST', url: '/api/users/', headers: globex.admin.headers, payload: { email: 'Alice@ACME.test', role: 'ADMIN' } })
      t.equal(res.statusCode, 200)
      t.equal(res.json().user_id, alice.userId, 'the same user, now in two organizations')
      t.match(await profileRow(res.json().id), { org_id: globex.orgId, role: 'ADMIN' })
      const users = await db.selectFrom('users').select('id').where((eb) => eb(eb.fn('lower', ['email']), '=', 'alice@acme.test')).execute()
      t.equal(users.length, 1)
    })

    t.test('a user already in this organization is 400 on email', async (t) => {
      const res = await app.inject({ method: 'POST', url: '/api/users/', headers: acme.admin.headers, payload: { email: 'BOB@acme.test', role: 'USER' } })
      t.equal(res.statusCode, 400)
      t.match(res.json(), { error: true, errors: { email: [/already a member/] } })
    })

    t.test('invalid email or role is 400 naming the field', async (t) => {
      const res = await app.inject({ method: 'POST', url: '/api/users/', headers: acme.admin.headers, payload: { email: 'not-an-email', role: 'OWNER' } })
      t.equal(res.statusCode, 400)
      t.match(res.json(), { error: true, errors: { email: [String], role: [String] } })
      const missing = await app.inject({ method: 'POST', url: '/api/users/', headers: acme.admin.headers, payload: {} })
      t.match(missing.json(), { error: true, errors: { email: [String], role: [String] } })
    })

    t.test('non-admins get 403 and nothing is created', async (t) => {
      const res = await app.inject({ method: 'POST', url: '/api/users/', headers: alice.headers, payload: { email: 'mallory@acme.test', role: 'ADMIN' } })
      t.equal(res.statusCode, 403)
      t.equal(await db.selectFrom('users').select('id').where('email', '=', 'mallory@acme.test').executeTakeFirst(), undefined)
    })
  })

  t.test('GET /api/users/get-teams-and-users/', async (t) => {
    const res = await app.inject({ url: '/api/users/get-teams-and-users/', headers: { ...bob.headers, org: globex.orgId } })
    t.equal(res.statusCode, 200, 'any member may read it')
    const body = res.json()
    t.same(body.teams, [])
    const emails = body.profiles.map((p: { user_details: { email: string } }) => p.user_details.email)
    t.same(emails, ['admin@acme.test', 'alice@acme.test', 'bob@acme.test', 'carol@acme.test'], 'active members of the caller organization, by email')
    const team = (await app.inject({ method: 'POST', url: '/api/teams/', headers: acme.admin.headers, payload: { name: 'Sales', users: [bob.profileId, alice.profileId] } })).json()
    await app.inject({ method: 'POST', url: '/api/teams/', headers: globex.admin.headers, payload: { name: 'Elsewhere', users: [] } })
    const after = (await app.inject({ url: '/api/users/get-teams-and-users/', headers: bob.headers })).json()
    t.same(after.teams, [{ id: team.id, name: 'Sales', users: [alice.profileId, bob.profileId] }], "the organization's teams with their member profile ids")
  })

  t.test('GET /api/user/{id}/', async (t) => {
    const asAdmin = await app.inject({ url: `/api/user/${alice.profileId}/`, headers: acme.admin.headers })
    t.equal(asAdmin.statusCode, 200)
    t.match(asAdmin.json(), { error: false, profile_obj: { id: alice.profileId, user_details: { id: alice.userId, email: 'alice@acme.test' }, role: 'USER' } })
    t.equal((await app.inject({ url: `/api/user/${alice.profileId}/`, headers: alice.headers })).statusCode, 200, 'a member may read their own profile')
    t.equal((await app.inject({ url: `/api/user/${alice.profileId}/`, headers: bob.headers })).statusCode, 403, "but not another member's")
    const foreign = await app.inject({ url: `/api/user/${gina.profileId}/`, headers: acme.admin.headers })
    t.equal(foreign.statusCode, 404, "another organization's profile is not found")
    t.same(foreign.json(), (await app.inject({ url: `/api/user/${randomUUID()}/`, headers: acme.admin.headers })).json(), 'exactly like a missing id')
    t.equal((await app.inject({ url: '/api/user/not-a-uuid/', headers: acme.admin.headers })).statusCode, 404)
  })

  t.test('PUT and PATCH /api/user/{id}/', async (t) => {
    t.test('an admin edits name, phone and role', async (t) => {
      const res = await app.inject({ method: 'PATCH', url: `/api/user/${bob.profileId}/`, headers: acme.admin.headers, payload: { first_name: ' Bob ', last_name: 'Builder', phone: '0123', role: 'ADMIN' } })
      t.equal(res.statusCode, 200)
      t.match(res.json(), { error: false, message: String })
      t.match(await profileRow(bob.profileId), { role: 'ADMIN', phone: '0123' })
      t.match(await userRow(bob.userId), { first_name: 'Bob', last_name: 'Builder' })
      const put = await app.inject({ method: 'PUT', url: `/api/user/${bob.profileId}/`, headers: acme.admin.headers, payload: { role: 'USER' } })
      t.equal(put.statusCode, 200)
      t.match(await profileRow(bob.profileId), { role: 'USER', phone: '0123' }, 'PUT changes only the fields sent')
    })

    t.test('a member edits their own name and phone but not their role', async (t) => {
      const own = await app.inject({ method: 'PUT', url: `/api/user/${bob.profileId}/`, headers: bob.headers, payload: { first_name: 'Robert', phone: '999', role: 'USER' } })
      t.equal(own.statusCode, 200, 'sending the current role is no change')
      t.match(await userRow(bob.userId), { first_name: 'Robert' })
      const promote = await app.inject({ method: 'PATCH', url: `/api/user/${bob.profileId}/`, headers: bob.headers, payload: { role: 'ADMIN' } })
      t.equal(promote.statusCode, 403)
      t.equal((await profileRow(bob.profileId)).role, 'USER')
      const other = await app.inject({ method: 'PATCH', url: `/api/user/${alice.profileId}/`, headers: bob.headers, payload: { phone: '1' } })
      t.equal(other.statusCode, 403)
    })

    t.test("an admin may not rename a user who also belongs to another organization", async (t) => {
      const res = await app.inject({ method: 'PATCH', url: `/api/user/${alice.profileId}/`, headers: acme.admin.headers, payload: { first_name: 'Eve', phone: '42' } })
      t.equal(res.statusCode, 403)
      t.equal((await userRow(alice.userId)).first_name, '')
      t.equal((await profileRow(alice.profileId)).phone, '', 'and nothing else changed either')
      const self = await app.inject({ method: 'PATCH', url: `/api/user/${alice.profileId}/`, headers: alice.headers, payload: { first_name: 'Alice' } })
      t.equal(self.statusCode, 200, 'the user themselves may')
    })

    t.test("another organization's id is 404 and nothing changes", async (t) => {
      const res = await app.inject({ method: 'PATCH', url: `/api/user/${gina.profileId}/`, headers: acme.admin.headers, payload: { phone: '666', role: 'ADMIN' } })
      t.equal(res.statusCode, 404)
      t.match(await profileRow(gina.profileId), { phone: '', role: 'USER' })
    })

    t.test('invalid values are 400 naming the field', async (t) => {
      const res = await app.inject({ method: 'PATCH', url: `/api/user/${bob.profileId}/`, headers: acme.admin.headers, payload: { phone: 'call me', role: 'ROOT', first_name: 'x'.repeat(151) } })
      t.equal(res.statusCode, 400)
      t.match(res.json(), { error: true, errors: { phone: [String], role: [String], first_name: [String] } })
    })

    t.test('demoting the last active admin is 400 on role', async (t) => {
      const res = await app.inject({ method: 'PATCH', url: `/api/user/${acme.admin.profileId}/`, headers: acme.admin.headers, payload: { role: 'USER' } })
      t.equal(res.statusCode, 400)
      t.match(res.json(), { error: true, errors: { role: [/at least one active admin/] } })
      t.equal((await profileRow(acme.admin.profileId)).role, 'ADMIN')
    })
  })

  t.test('DELETE /api/user/{id}/ and POST /api/user/{id}/status/', async (t) => {
    t.test('non-admins get 403', async (t) => {
      t.equal((await app.inject({ method: 'DELETE', url: `/api/user/${alice.profileId}/`, headers: bob.headers })).statusCode, 403)
      t.equal((await app.inject({ method: 'POST', url: `/api/user/${alice.userId}/status/`, headers: bob.headers, payload: { status: 'Inactive' } })).statusCode, 403)
      t.equal((await profileRow(alice.profileId)).is_active, true)
    })

    t.test('deactivation is soft: the profile stays, its JWT is refused until reactivation', async (t) => {
      t.equal((await app.inject({ url: '/api/profile/', headers: bob.headers })).statusCode, 200)
      const res = await app.inject({ method: 'DELETE', url: `/api/user/${bob.profileId}/`, headers: acme.admin.headers })
      t.equal(res.statusCode, 200)
      t.match(res.json(), { error: false, message: String })
      t.match(await profileRow(bob.profileId), { is_active: false })
      t.equal((await app.inject({ url: '/api/profile/', headers: bob.headers })).statusCode, 401)
      const list = (await app.inject({ url: '/api/users/', headers: acme.admin.headers })).json()
      t.same(list.inactive_users.inactive_users.map((u: { id: string }) => u.id), [bob.profileId])
      t.equal((await app.inject({ method: 'DELETE', url: `/api/user/${bob.profileId}/`, headers: acme.admin.headers })).statusCode, 200, 'a second delete is a no-op')

      const back = await app.inject({ method: 'POST', url: `/api/user/${bob.userId}/status/`, headers: acme.admin.headers, payload: { status: 'Active' } })
      t.equal(back.statusCode, 200)
      t.equal((await app.inject({ url: '/api/profile/', headers: bob.headers })).statusCode, 200, 'the same JWT works again')
    })

    t.test('status takes the user id, not the profile id', async (t) => {
      const res = await app.inject({ method: 'POST', url: `/api/user/${bob.profileId}/status/`, headers: acme.admin.headers, payload: { status: 'Inactive' } })
      t.equal(res.statusCode, 404)
      const ok = await app.inject({ method: 'POST', url: `/api/user/${bob.userId}/status/`, headers: acme.admin.headers, payload: { status: 'Inactive' } })
      t.equal(ok.statusCode, 200)
      t.equal((await profileRow(bob.profileId)).is_active, false)
      t.equal((await app.inject({ url: '/api/auth/me/', headers: bob.headers })).statusCode, 401)
      await app.inject({ method: 'POST', url: `/api/user/${bob.userId}/status/`, headers: acme.admin.headers, payload: { status: 'Active' } })
    })

    t.test('an invalid status is 400', async (t) => {
      const res = await app.inject({ method: 'POST', url: `/api/user/${bob.userId}/status/`, headers: acme.admin.headers, payload: { status: 'Gone' } })
      t.equal(res.statusCode, 400)
      t.match(res.json(), { error: true, errors: { status: [String] } })
    })

    t.test("another organization's ids are 404 and nothing changes", async (t) => {
      t.equal((await app.inject({ method: 'POST', url: `/api/user/${gina.userId}/status/`, headers: acme.admin.headers, payload: { status: 'Inactive' } })).statusCode, 404)
      t.equal((await app.inject({ method: 'DELETE', url: `/api/user/${gina.profileId}/`, headers: acme.admin.headers })).statusCode, 404)
      t.equal((await profileRow(gina.profileId)).is_active, true)
      t.equal((await app.inject({ url: '/api/auth/me/', headers: gina.headers })).statusCode, 200)
    })

    t.test('the last active admin cannot be deactivated', async (t) => {
      const byStatus = await app.inject({ method: 'POST', url: `/api/user/${acme.admin.userId}/status/`, headers: acme.admin.headers, payload: { status: 'Inactive' } })
      t.equal(byStatus.statusCode, 400)
      t.match(byStatus.json(), { error: true, errors: /at least one active admin/ })
      t.equal((await app.inject({ method: 'DELETE', url: `/api/user/${acme.admin.profileId}/`, headers: acme.admin.headers })).statusCode, 400)
      t.equal((await profileRow(acme.admin.profileId)).is_active, true)
    })

    t.test('with a second admin, one admin may leave', async (t) => {
      await app.inject({ method: 'PATCH', url: `/api/user/${alice.profileId}/`, headers: acme.admin.headers, payload: { role: 'ADMIN' } })
      const res = await app.inject({ method: 'DELETE', url: `/api/user/${acme.admin.profileId}/`, headers: alice.headers })
      t.equal(res.statusCode, 200)
      const alone = await app.inject({ method: 'DELETE', url: `/api/user/${alice.profileId}/`, headers: alice.headers })
      t.equal(alone.statusCode, 400, 'but the remaining one may not')
      t.equal((await app.inject({ url: '/api/users/', headers: alice.headers })).json().admin_email, 'alice@acme.test', 'admin_email follows the active admins')
    })
  })
})

t.test('concurrent demotions keep one active admin', async (t) => {
  const { app, database } = await buildTestApp(t)
  const org = await givenOrganization(app, database.db, 'Initech')
  const second = await org.addMember('second@initech.test', 'ADMIN')
  const [a, b] = await Promise.all([
    app.inject({ method: 'PATCH', url: `/api/user/${second.profileId}/`, headers: org.admin.headers, payload: { role: 'USER' } }),
    app.inject({ method: 'PATCH', url: `/api/user/${org.admin.profileId}/`, headers: second.headers, payload: { role: 'USER' } }),
  ])
  // The loser is refused as the last admin (400), or as no longer an admin (403) if it authenticated after the winner committed.
  t.equal([a.statusCode, b.statusCode].filter((s) => s === 200).length, 1)
  const admins = await database.db.selectFrom('profiles').select('id').where('org_id', '=', org.orgId).where('role', '=', 'ADMIN').where('is_active', '=', true).execute()
  t.equal(admins.length, 1)
})

t.test("the web app's team page (issue 22): last_login, active_token_count, members named by user id", async (t) => {
  const { app, database } = await buildTestApp(t)
  const db = database.db
  const acme = await givenOrganization(app, db, 'Acme')
  const globex = await givenOrganization(app, db, 'Globex')
  const carol = await acme.addMember('carol@acme.test')
  const dave = await acme.addMember('dave@acme.test')
  const gina = await globex.addMember('gina@globex.test')
  const signedIn = new Date('2026-11-21T07:30:00Z')
  await recordSignIn(db, carol.profileId, signedIn)
  const token = async (member: { headers: Record<string, string> }, payload: object) => {
    const res = await app.inject({ method: 'POST', url: '/api/profile/tokens/', headers: member.headers, payload })
    t.equal(res.statusCode, 201, res.body)
    return res.json().id as string
  }
  await token(carol, { name: 'live' })
  const revoked = await token(carol, { name: 'revoked' })
  t.equal((await app.inject({ method: 'DELETE', url: `/api/profile/tokens/${revoked}/`, headers: carol.headers })).statusCode, 200)
  await token(dave, { name: 'before leaving' })
  t.equal((await app.inject({ method: 'POST', url: `/api/user/${dave.userId}/status/`, headers: acme.admin.headers, payload: { status: 'Inactive' } })).statusCode, 200)

  const list = (await app.inject({ url: '/api/users/', headers: acme.admin.headers })).json()
  const carolRow = list.active_users.active_users.find((u: { id: string }) => u.id === carol.profileId)
  t.match(carolRow, { user_details: { id: carol.userId, email: 'carol@acme.test', name: '', last_login: signedIn.toISOString() }, active_token_count: 1 })
  t.match(list.active_users.active_users.find((u: { id: string }) => u.id === acme.admin.profileId), { user_details: { last_login: null }, active_token_count: 0 }, 'never signed in')
  t.match(list.inactive_users.inactive_users, [{ id: dave.profileId, active_token_count: 1 }], 'a live token on a deactivated member: what the page warns about')

  const byUser = await app.inject({ url: `/api/user/${carol.userId}/`, headers: acme.admin.headers })
  t.equal(byUser.statusCode, 200, byUser.body)
  t.same(byUser.json(), (await app.inject({ url: `/api/user/${carol.profileId}/`, headers: acme.admin.headers })).json(), 'the user id names the same member as the profile id')
  t.equal(byUser.json().profile_obj.user_details.last_login, signedIn.toISOString())
  // The team page changes a role by user id; the profile form sends one name.
  t.equal((await app.inject({ method: 'PATCH', url: `/api/user/${carol.userId}/`, headers: acme.admin.headers, payload: { role: 'ADMIN', name: 'Carol  Danvers' } })).statusCode, 200)
  t.match(await db.selectFrom('profiles').selectAll().where('id', '=', carol.profileId).executeTakeFirstOrThrow(), { role: 'ADMIN' })
  t.match(await db.selectFrom('users').selectAll().where('id', '=', carol.userId).executeTakeFirstOrThrow(), { first_name: 'Carol', last_name: 'Danvers' })
  t.equal((await app.inject({ url: `/api/user/${gina.userId}/`, headers: acme.admin.headers })).statusCode, 404, "another organization's user id is not found")
  t.equal((await app.inject({ method: 'PATCH', url: `/api/user/${gina.userId}/`, headers: acme.admin.headers, payload: { phone: '1' } })).statusCode, 404)
  t.equal((await app.inject({ method: 'DELETE', url: `/api/user/${gina.userId}/`, headers: acme.admin.headers })).statusCode, 404)
  t.equal((await app.inject({ method: 'DELETE', url: `/api/user/${carol.userId}/`, headers: acme.admin.headers })).statusCode, 200, 'DELETE by user id too')
  t.match(await db.selectFrom('profiles').selectAll().where('id', '=', carol.profileId).executeTakeFirstOrThrow(), { is_active: false })
})

t.test('sign-in times are per organization (issue 35): a list shows the last sign-in into that organization, never elsewhere', async (t) => {
  const { app, mail, clock, acme, beta, alice } = await givenSignInWorld(t)
  const at = (minutes: number) => (clock.now = new Date(Date.UTC(2026, 10, 22, 9, minutes)))
  /** Alice's last_login as the organization's admin sees it in the users list (either section) and in her detail. */
  const seenBy = async (org: typeof acme) => {
    const list = (await app.inject({ url: '/api/users/?email=alice', headers: org.admin.headers })).json()
    const [row] = [...list.active_users.active_users, ...list.inactive_users.inactive_users]
    const detail = (await app.inject({ url: `/api/user/${row.user_details.id}/`, headers: org.admin.headers })).json()
    t.equal(detail.profile_obj.user_details.last_login, row.user_details.last_login, 'the detail says the same')
    return row.user_details.last_login
  }

  at(1)
  const inAcme = await signIn(app, mail, alice.email, acme.orgId)
  t.same([await seenBy(acme), await seenBy(beta)], [at(1).toISOString(), null], 'a sign-in into Acme shows in Acme only')
  at(2)
  const inBeta = await signIn(app, mail, alice.email, beta.orgId)
  t.same([await seenBy(acme), await seenBy(beta)], [at(1).toISOString(), at(2).toISOString()], 'a sign-in into Beta does not move Acme\'s time')
  t.equal((await app.inject({ url: '/api/profile/', headers: bearer(inBeta) })).json().user_obj.user_details.last_login, at(2).toISOString(), 'her own profile shows the time of its organization too')

  at(3)
  const switched = await app.inject({ method: 'POST', url: '/api/auth/switch-org/', headers: bearer(inBeta), payload: { org_id: acme.orgId } })
  t.equal(switched.statusCode, 200, switched.body)
  t.same([await seenBy(acme), await seenBy(beta)], [at(3).toISOString(), at(2).toISOString()], 'switching into Acme is a sign-in into Acme')
  at(4)
  t.equal((await app.inject({ method: 'POST', url: '/api/auth/refresh-token/', payload: { refresh_token: inAcme.refresh_token } })).statusCode, 200)
  t.equal(await seenBy(acme), at(3).toISOString(), 'a token refresh is no sign-in')

  // Deleted (deactivated) in Acme: listed among the inactive members with its last sign-in into Acme, which no longer moves.
  t.equal((await app.inject({ method: 'DELETE', url: `/api/user/${alice.profileId}/`, headers: acme.admin.headers })).statusCode, 200)
  at(5)
  await signIn(app, mail, alice.email, beta.orgId)
  t.same([await seenBy(acme), await seenBy(beta)], [at(3).toISOString(), at(5).toISOString()], 'her sign-ins into Beta never show in Acme')
})
