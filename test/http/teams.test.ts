import { randomUUID } from 'node:crypto'
import t from 'tap'
import { teamsProjector } from '../../src/projections/team/teams.ts'
import { buildTestApp } from '../helpers/app.ts'
import { givenOrganization } from '../helpers/identity.ts'
import { rebuildEqualsLive } from '../helpers/read-models.ts'

t.test('/api/teams/', async (t) => {
  const { app, database, store } = await buildTestApp(t)
  const acme = await givenOrganization(app, database.db, 'Acme')
  const globex = await givenOrganization(app, database.db, 'Globex')
  const alice = await acme.addMember('alice@acme.test')
  const bob = await acme.addMember('bob@acme.test')
  const gina = await globex.addMember('gina@globex.test')
  const admin = acme.admin.headers
  const create = (headers: object, payload: object) => app.inject({ method: 'POST', url: '/api/teams/', headers: headers as Record<string, string>, payload })
  const get = (url: string, headers: object = admin) => app.inject({ url, headers: headers as Record<string, string> })
  const ids = (team: { users: { id: string }[] }) => team.users.map((u) => u.id)

  t.test('POST creates (admins), and the team is readable at once (read-your-writes)', async (t) => {
    const res = await create(admin, { name: ' Sales ', description: 'Field sales', users: [bob.profileId, alice.profileId, bob.profileId] })
    t.equal(res.statusCode, 201)
    t.match(res.json(), { name: 'Sales', description: 'Field sales', created_by: acme.admin.profileId })
    t.same(res.json().users, [
      { id: alice.profileId, email: 'alice@acme.test', role: 'USER', is_active: true },
      { id: bob.profileId, email: 'bob@acme.test', role: 'USER', is_active: true },
    ], 'members once each, by email')
    t.match(res.headers['x-event-position'], /^\d+-\d+$/)
    const listed = (await get('/api/teams/', alice.headers)).json()
    t.match(listed, { count: 1, offset: 0, limit: 10, results: [{ name: 'Sales', users: [{ id: alice.profileId }, { id: bob.profileId }] }] }, 'members read the list')
    t.same(listed.teams, listed.results, "the original's names too (the web app's team page reads teams)")
    t.equal(listed.teams_count, 1)
    t.equal((await get('/api/teams/?team_name=SAL', alice.headers)).json().count, 1, 'team_name filters like name')
    t.equal((await get('/api/teams/?team_name=nope', alice.headers)).json().count, 0)
    t.match((await get(`/api/teams/${res.json().id}/`, alice.headers)).json(), { id: res.json().id, name: 'Sales' }, 'and the detail')
    const empty = await create(admin, { name: 'Empty', users: [] })
    t.match(empty.json(), { description: null, users: [] }, 'a team may have no members')
  })

  t.test('non-admins may not write: 403', async (t) => {
    const team = (await create(admin, { name: 'Support', users: [] })).json()
    t.equal((await create(alice.headers, { name: 'Mine', users: [] })).statusCode, 403)
    t.equal((await app.inject({ method: 'PUT', url: `/api/teams/${team.id}/`, headers: alice.headers, payload: { name: 'X', users: [] } })).statusCode, 403)
    t.equal((await app.inject({ method: 'PATCH', url: `/api/teams/${team.id}/`, headers: alice.headers, payload: { name: 'X' } })).statusCode, 403)
    t.equal((await app.inject({ method: 'DELETE', url: `/api/teams/${team.id}/`, headers: alice.headers })).statusCode, 403)
    t.match((await get(`/api/teams/${team.id}/`)).json(), { name: 'Support' }, 'nothing changed')
    t.equal((await get('/api/teams/?name=mine')).json().count, 0)
  })

  t.test('bad input is a 400 in the error shape; members must be active profiles of this organization', async (t) => {
    t.match((await create(admin, { name: '  ', users: [] })).json(), { error: true, errors: { name: [String] } })
    t.match((await create(admin, { name: 'X' })).json(), { error: true, errors: { users: [String] } })
    t.equal((await create(admin, { name: 'X', users: ['nope'] })).statusCode, 400)
    const foreign = await create(admin, { name: 'X', users: [alice.profileId, gina.profileId] })
    t.equal(foreign.statusCode, 400)
    t.match(foreign.json(), { error: true, errors: { users: [new RegExp(gina.profileId)] } }, "another organization's profile is named")
    t.equal((await create(admin, { name: 'X', users: [randomUUID()] })).statusCode, 400, 'an unknown id too')
    t.equal((await get('/api/teams/?name=x')).json().count, 0, 'nothing created, and the name stays free')
    t.equal((await create(admin, { name: 'X', users: [] })).statusCode, 201)
  })

  t.test('names are unique per organization, case-insensitively, also when created concurrently', async (t) => {
    const dup = await create(admin, { name: 'sales', users: [] })
    t.equal(dup.statusCode, 400)
    t.same(dup.json(), { error: true, errors: { name: ['"sales" is already in use.'] } })
    t.equal((await create(globex.admin.headers, { name: 'Sales', users: [gina.profileId] })).statusCode, 201, 'another organization may use the name')
    const racers = await Promise.all(['Ops', 'OPS', 'ops', 'oPs', 'Ops '].map((name) => create(admin, { name, users: [] })))
    t.same(racers.map((r) => r.statusCode).sort(), [201, 400, 400, 400, 400])
    t.equal((await get('/api/teams/?name=OP')).json().count, 1)
  })

  t.test('GET lists by name with limit/offset and a name filter', async (t) => {
    const all = (await get('/api/teams/?limit=100')).json()
    t.same(all.results.map((r: { name: string }) => r.name.toLowerCase()), ['empty', 'ops', 'sales', 'support', 'x'], 'by name, case-insensitively')
    const page = (await get('/api/teams/?limit=2&offset=2')).json()
    t.match(page, { count: 5, offset: 2, limit: 2, results: [{ name: 'Sales' }, { name: 'Support' }] })
    t.same((await get('/api/teams/?name=%25')).json().results, [], 'wildcards are taken literally')
  })

  t.test('PUT replaces name, description and members; PATCH changes only the named fields', async (t) => {
    const team = (await create(admin, { name: 'Partners', description: 'Resellers', users: [alice.profileId] })).json()
    const put = await app.inject({ method: 'PUT', url: `/api/teams/${team.id}/`, headers: admin, payload: { name: 'Channel', users: [bob.profileId] } })
    t.equal(put.statusCode, 200)
    t.match(put.json(), { name: 'Channel', description: null })
    t.same(ids(put.json()), [bob.profileId])
    t.equal((await create(admin, { name: 'partners', users: [] })).statusCode, 201, 'the old name is free again')
    t.equal((await app.inject({ method: 'PATCH', url: `/api/teams/${team.id}/`, headers: admin, payload: { name: 'Sales' } })).statusCode, 400, 'a rename to a taken name is refused')
    const patched = (await app.inject({ method: 'PATCH', url: `/api/teams/${team.id}/`, headers: admin, payload: { description: 'Indirect' } })).json()
    t.match(patched, { name: 'Channel', description: 'Indirect' })
    t.same(ids(patched), [bob.profileId], 'members untouched')
    const members = (await app.inject({ method: 'PATCH', url: `/api/teams/${team.id}/`, headers: admin, payload: { users: [alice.profileId, bob.profileId] } })).json()
    t.same(ids(members), [alice.profileId, bob.profileId])
    t.match(members, { name: 'Channel', description: 'Indirect' })
    const bad = await app.inject({ method: 'PATCH', url: `/api/teams/${team.id}/`, headers: admin, payload: { name: 'Renamed', users: [gina.profileId] } })
    t.match(bad.json(), { error: true, errors: { users: [String] } })
    t.match((await get(`/api/teams/${team.id}/`)).json(), { name: 'Channel' }, 'a refused edit changes nothing')
    t.equal((await create(admin, { name: 'Renamed', users: [] })).statusCode, 201, 'and claims no name')
  })

  t.test('members of a deactivated profile stay listed with is_active: false', async (t) => {
    const carol = await acme.addMember('carol@acme.test')
    const team = (await create(admin, { name: 'Night shift', users: [carol.profileId, alice.profileId] })).json()
    t.equal((await app.inject({ method: 'POST', url: `/api/user/${carol.userId}/status/`, headers: admin, payload: { status: 'Inactive' } })).statusCode, 200)
    t.same((await get(`/api/teams/${team.id}/`)).json().users.map((u: { email: string; is_active: boolean }) => [u.email, u.is_active]), [['alice@acme.test', true], ['carol@acme.test', false]])
    const kept = await app.inject({ method: 'PUT', url: `/api/teams/${team.id}/`, headers: admin, payload: { name: 'Night shift', users: [carol.profileId] } })
    t.equal(kept.statusCode, 200, 'an existing member may stay')
    t.equal((await create(admin, { name: 'Day shift', users: [carol.profileId] })).statusCode, 400, 'but may not be added anew')
  })

  t.test('DELETE removes the team for good and frees its name (admins)', async (t) => {
    const team = (await create(admin, { name: 'Temp', users: [alice.profileId] })).json()
    t.same((await app.inject({ method: 'DELETE', url: `/api/teams/${team.id}/`, headers: admin })).json(), { error: false, message: 'Team deleted' })
    t.equal((await get(`/api/teams/${team.id}/`)).statusCode, 404)
    t.equal((await get('/api/teams/?name=temp')).json().count, 0, 'gone from the list')
    t.equal((await app.inject({ method: 'DELETE', url: `/api/teams/${team.id}/`, headers: admin })).statusCode, 404, 'deleting again: not found')
    t.equal((await create(admin, { name: 'temp', users: [] })).statusCode, 201, 'the name is free')
  })

  t.test("another organization's team ids answer 404 and change nothing", async (t) => {
    const foreign = (await create(globex.admin.headers, { name: 'Secret', users: [gina.profileId] })).json()
    for (const [method, url, payload] of [
      ['GET', `/api/teams/${foreign.id}/`, undefined],
      ['PUT', `/api/teams/${foreign.id}/`, { name: 'Hijacked', users: [] }],
      ['PATCH', `/api/teams/${foreign.id}/`, { name: 'Hijacked' }],
      ['DELETE', `/api/teams/${foreign.id}/`, undefined],
    ] as const) {
      t.equal((await app.inject({ method, url, headers: admin, payload })).statusCode, 404, `${method} ${url.replace(foreign.id, '<id>')}`)
    }
    const after = (await get(`/api/teams/${foreign.id}/`, globex.admin.headers)).json()
    t.match(after, { name: 'Secret' })
    t.same(ids(after), [gina.profileId])
    t.equal((await get('/api/teams/not-a-uuid/')).statusCode, 404)
  })

  t.test('GET /api/users/get-teams-and-users/ lists the teams with member ids', async (t) => {
    const body = (await get('/api/users/get-teams-and-users/', bob.headers)).json()
    const sales = body.teams.find((team: { name: string }) => team.name === 'Sales')
    t.same(Object.keys(sales).sort(), ['id', 'name', 'users'])
    t.same(sales.users, [alice.profileId, bob.profileId], 'member profile ids, by email')
    t.notOk(body.teams.some((team: { name: string }) => team.name === 'Secret'), "not another organization's")
    t.same(body.teams.map((team: { name: string }) => team.name), [...body.teams.map((team: { name: string }) => team.name)].sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase())), 'by name')
  })

  t.test('the read model rebuilt from the log is identical', async (t) => {
    const live = await rebuildEqualsLive(t, { db: database.db, store }, teamsProjector)
    t.ok(live.teams!.length >= 10)
    t.ok(live.team_members!.length >= 5)
  })
})
