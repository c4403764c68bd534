import t from 'tap'
import { rebuildProjection } from '../../src/projections/rebuild.ts'
import { tagsProjector } from '../../src/projections/tags.ts'
import { buildTestApp } from '../helpers/app.ts'
import { givenOrganization } from '../helpers/identity.ts'

t.test('/api/tags/', async (t) => {
  const { app, database, store } = await buildTestApp(t)
  const acme = await givenOrganization(app, database.db, 'Acme')
  const globex = await givenOrganization(app, database.db, 'Globex')
  const alice = await acme.addMember('alice@acme.test')
  const create = (headers: object, payload: object) => app.inject({ method: 'POST', url: '/api/tags/', headers: headers as Record<string, string>, payload })

  t.test('POST creates, and the tag is readable at once (read-your-writes)', async (t) => {
    const res = await create(alice.headers, { name: ' VIP ', color: '#ff0000' })
    t.equal(res.statusCode, 201)
    t.match(res.json(), { name: 'VIP', color: '#ff0000', is_deleted: false, created_by: alice.profileId })
    t.match(res.headers['x-event-position'], /^\d+-\d+$/)
    const list = (await app.inject({ url: '/api/tags/', headers: alice.headers })).json()
    t.match(list, { count: 1, results: [{ name: 'VIP' }] })
  })

  t.test('names are unique per organization, case-insensitively, also when created concurrently', async (t) => {
    const dup = await create(acme.admin.headers, { name: 'vip' })
    t.equal(dup.statusCode, 400)
    t.same(dup.json(), { error: true, errors: { name: ['"vip" is already in use.'] } })
    t.equal((await create(globex.admin.headers, { name: 'VIP' })).statusCode, 201, 'another organization may use the name')
    const racers = await Promise.all(['Hot', 'HOT', 'hot', 'hOt', 'Hot '].map((name) => create(alice.headers, { name })))
    t.same(racers.map((r) => r.statusCode).sort(), [201, 400, 400, 400, 400])
    t.equal((await app.inject({ url: '/api/tags/?search=hot', headers: alice.headers })).json().count, 1)
  })

  t.test('bad input is a 400 in the error shape', async (t) => {
    t.match((await create(alice.headers, { name: '  ' })).json(), { error: true, errors: { name: [String] } })
    t.match((await create(alice.headers, { name: 'x', color: 'red' })).json(), { error: true, errors: { color: [String] } })
    t.equal((await create(alice.headers, {})).statusCode, 400)
  })

  t.test('rename frees the old name; delete is soft, admin-only, and frees the name; restore re-claims it', async (t) => {
    const tag = (await create(alice.headers, { name: 'Partner' })).json()
    const renamed = await app.inject({ method: 'PUT', url: `/api/tags/${tag.id}/`, headers: alice.headers, payload: { name: 'Partners' } })
    t.match(renamed.json(), { name: 'Partners' })
    t.equal((await create(alice.headers, { name: 'partner' })).statusCode, 201, 'the old name is free again')
    t.equal((await app.inject({ method: 'DELETE', url: `/api/tags/${tag.id}/`, headers: alice.headers })).statusCode, 403, 'members cannot delete')
    t.same((await app.inject({ method: 'DELETE', url: `/api/tags/${tag.id}/`, headers: acme.admin.headers })).json(), { error: false, message: 'Tag deleted' })
    t.match((await app.inject({ url: `/api/tags/${tag.id}/`, headers: alice.headers })).json(), { is_deleted: true })
    t.notOk((await app.inject({ url: '/api/tags/', headers: alice.headers })).json().results.some((r: { id: string }) => r.id === tag.id), 'hidden from the list')
    t.ok((await app.inject({ url: '/api/tags/?include_deleted=true', headers: alice.headers })).json().results.some((r: { id: string }) => r.id === tag.id))
    const taken = (await create(alice.headers, { name: 'Partners' })).json()
    t.equal((await app.inject({ method: 'POST', url: `/api/tags/${tag.id}/restore/`, headers: acme.admin.headers })).statusCode, 400, 'restore refused while the name is taken')
    await app.inject({ method: 'DELETE', url: `/api/tags/${taken.id}/`, headers: acme.admin.headers })
    t.match((await app.inject({ method: 'POST', url: `/api/tags/${tag.id}/restore/`, headers: acme.admin.headers })).json(), { is_deleted: false, name: 'Partners' })
  })

  t.test('merge: the source disappears into the target', async (t) => {
    const source = (await create(alice.headers, { name: 'Prospect' })).json()
    const target = (await create(alice.headers, { name: 'Lead' })).json()
    t.equal((await app.inject({ method: 'POST', url: `/api/tags/${source.id}/merge/`, headers: acme.admin.headers, payload: { into: source.id } })).statusCode, 400, 'not into itself')
    const merged = await app.inject({ method: 'POST', url: `/api/tags/${source.id}/merge/`, headers: acme.admin.headers, payload: { into: target.id } })
    t.match(merged.json(), { error: false, into: { id: target.id } })
    t.equal((await app.inject({ url: `/api/tags/${source.id}/`, headers: alice.headers })).statusCode, 404)
    t.equal((await create(alice.headers, { name: 'Prospect' })).statusCode, 201, "the source's name is free")
  })

  t.test("another organization's tag ids answer 404 and change nothing", async (t) => {
    const foreign = (await create(globex.admin.headers, { name: 'Secret' })).json()
    for (const [method, url, payload] of [
      ['GET', `/api/tags/${foreign.id}/`, undefined],
      ['PUT', `/api/tags/${foreign.id}/`, { name: 'Hijacked' }],
      ['DELETE', `/api/tags/${foreign.id}/`, undefined],
      ['POST', `/api/tags/${foreign.id}/restore/`, undefined],
      ['POST', `/api/tags/${foreign.id}/merge/`, { into: foreign.id }],
    ] as const) {
      t.equal((await app.inject({ method, url, headers: acme.admin.headers, payload })).statusCode, 404, `${method} ${url.replace(foreign.id, '<id>')}`)
    }
    t.match((await app.inject({ url: `/api/tags/${foreign.id}/`, headers: globex.admin.headers })).json(), { name: 'Secret', is_deleted: false })
    t.equal((await app.inject({ url: '/api/tags/not-a-uuid/', headers: acme.admin.headers })).statusCode, 404)
  })

  t.test('the read model rebuilt from the log is identical', async (t) => {
    const rows = () => database.db.selectFrom('tags' as any).selectAll().orderBy('id').execute()
    const before = await rows()
    t.ok(before.length >= 8)
    await rebuildProjection(database.db, store, tagsProjector)
    t.same(await rows(), before)
    await rebuildProjection(database.db, store, { ...tagsProjector, applyBatch: undefined })
    t.same(await rows(), before, 'the batched apply leaves the same rows as applying one event at a time')
  })
})
