import t from 'tap'
import { commandSession } from '../../src/commands/command-session.ts'
import { TAG_NAME_SCOPE, tagDecider, tagStream } from '../../src/commands/tag/tag.ts'
import { withReleasedName } from '../../src/commands/unique-name.ts'
import { tagsProjector } from '../../src/projections/tag/tags.ts'
import { FIXED_NOW, buildTestApp } from '../helpers/app.ts'
import { givenOrganization } from '../helpers/identity.ts'
import { rebuildEqualsLive } from '../helpers/read-models.ts'

type Headers = Record<string, string>

t.test('/api/tags/', async (t) => {
  const { app, database, store, projections } = await buildTestApp(t)
  const acme = await givenOrganization(app, database.db, 'Acme')
  const globex = await givenOrganization(app, database.db, 'Globex')
  const alice = await acme.addMember('alice@acme.test')
  const create = (headers: object, payload: object) => app.inject({ method: 'POST', url: '/api/tags/', headers: headers as Headers, payload })
  const inject = (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, headers: Headers, payload?: object) => app.inject({ method, url, headers, ...(payload && { payload }) })
  const list = async (query = '', headers: Headers = alice.headers) => (await inject('GET', `/api/tags/${query}`, headers)).json()
  const listed = async (id: string, query = '?include_archived=true') => (await list(query)).tags.find((tag: { id: string }) => tag.id === id)

  t.test('POST creates, in the original envelope beside the flat tag, readable at once (read-your-writes)', async (t) => {
    const res = await create(alice.headers, { name: ' VIP ', color: '#ff0000' })
    t.equal(res.statusCode, 201)
    const tag = { name: 'VIP', slug: 'vip', color: '#ff0000', description: '', is_active: true, is_deleted: false, created_by: alice.profileId }
    t.match(res.json(), { error: false, message: 'Tag Created Successfully', ...tag, tag: { ...tag, id: res.json().id } })
    t.match(res.headers['x-event-position'], /^\d+-\d+$/)
    t.match(await list(), { count: 1, results: [{ name: 'VIP' }], tags_count: 1, tags: [{ name: 'VIP', usage: { accounts: 0, contacts: 0, leads: 0, opportunities: 0, cases: 0, tasks: 0 } }], totals: { count: 1, active: 1, unused: 1 } })
    t.match((await inject('GET', `/api/tags/${res.json().id}/`, alice.headers)).json(), { ...tag, tag })
  })

  t.test("colours: the original's palette (blue by default) or a hex; a description", async (t) => {
    t.match((await create(alice.headers, { name: 'Plain' })).json(), { color: 'blue', tag: { color: 'blue' } })
    t.match((await create(alice.headers, { name: 'Sea Green & Co', color: 'Teal', description: 'Shipping' })).json(), { color: 'teal', description: 'Shipping', slug: 'sea-green-co' })
  })

  t.test('names are unique per organization, case-insensitively, also when created concurrently', async (t) => {
    const dup = await create(acme.admin.headers, { name: 'vip' })
    t.equal(dup.statusCode, 400)
    t.same(dup.json(), { error: true, errors: { name: ['"vip" is already in use.'] } })
    t.equal((await create(globex.admin.headers, { name: 'VIP' })).statusCode, 201, 'another organization may use the name')
    const racers = await Promise.all(['Hot', 'HOT', 'hot', 'hOt', 'Hot '].map((name) => create(alice.headers, { name })))
    t.same(racers.map((r) => r.statusCode).sort(), [201, 400, 400, 400, 400])
    t.equal((await list('?search=hot')).count, 1)
    t.same((await list('?name=hO')).tags.map((tag: { name: string }) => tag.name.toLowerCase()), ['hot'], "the original's name filter")
  })

  t.test('bad input is a 400 in the error shape', async (t) => {
    t.match((await create(alice.headers, { name: '  ' })).json(), { error: true, errors: { name: [String] } })
    t.match((await create(alice.headers, { name: 'x', color: 'reddish' })).json(), { error: true, errors: { color: [String] } })
    t.equal((await create(alice.headers, {})).statusCode, 400)
  })

  t.test('rename frees the old name; DELETE archives (admins): the tag stays, off, with its name; restore turns it back on', async (t) => {
    const tag = (await create(alice.headers, { name: 'Partner' })).json()
    const renamed = await inject('PUT', `/api/tags/${tag.id}/`, alice.headers, { name: 'Partners', description: 'Resellers' })
    t.match(renamed.json(), { error: false, message: 'Tag Updated Successfully', name: 'Partners', slug: 'partners', description: 'Resellers', tag: { name: 'Partners' } })
    t.equal((await create(alice.headers, { name: 'partner' })).statusCode, 201, 'the old name is free again')
    t.equal((await inject('DELETE', `/api/tags/${tag.id}/`, alice.headers)).statusCode, 403, 'members cannot archive')
    t.same((await inject('DELETE', `/api/tags/${tag.id}/`, acme.admin.headers)).json(), { error: false, message: 'Tag archived successfully' })
    t.same((await inject('DELETE', `/api/tags/${tag.id}/`, acme.admin.headers)).json(), { error: false, message: 'Tag archived successfully' }, 'twice: no change')
    t.match((await inject('GET', `/api/tags/${tag.id}/`, alice.headers)).json(), { is_active: false, is_deleted: false, tag: { is_active: false } })
    t.notOk((await list()).tags.some((r: { id: string }) => r.id === tag.id), 'hidden from the default list')
    t.match(await listed(tag.id), { is_active: false, name: 'Partners' }, 'listed with include_archived=true')
    t.ok(await listed(tag.id, '?include_archived=TRUE'))
    t.ok(await listed(tag.id, '?include_deleted=true'), 'include_deleted is the same')
    t.match((await inject('PUT', `/api/tags/${tag.id}/`, alice.headers, { name: 'Partners', color: 'green' })).json(), { color: 'green', is_active: false }, 'an archived tag may be edited')
    const again = await create(alice.headers, { name: 'partners', color: 'rose' })
    t.equal(again.statusCode, 200, "creating an archived tag's name turns it back on, as the original does")
    t.match(again.json(), { error: false, message: 'Tag reactivated successfully', id: tag.id, name: 'Partners', color: 'rose', description: 'Resellers', is_active: true })
    await inject('DELETE', `/api/tags/${tag.id}/`, acme.admin.headers)
    t.equal((await inject('POST', `/api/tags/${tag.id}/restore/`, alice.headers)).statusCode, 403, 'members cannot restore')
    const restored = await inject('POST', `/api/tags/${tag.id}/restore/`, acme.admin.headers)
    t.equal(restored.statusCode, 200)
    t.match(restored.json(), { error: false, message: 'Tag restored successfully', is_active: true, tag: { id: tag.id, is_active: true } })
    t.match((await inject('POST', `/api/tags/${tag.id}/restore/`, acme.admin.headers)).json(), { is_active: true }, 'restoring an active tag changes nothing')
    t.same((await store.readStream(tagStream(tag.id))).map((e) => e.type), ['TagCreated', 'TagUpdated', 'TagArchived', 'TagUpdated', 'TagUnarchived', 'TagUpdated', 'TagArchived', 'TagUnarchived'])
  })

  t.test('records keep an archived tag, but it cannot be put on a record anew', async (t) => {
    const tag = (await create(alice.headers, { name: 'Seasonal' })).json()
    const account = (await inject('POST', '/api/accounts/', alice.headers, { name: 'Winterfell', tags: [tag.id] })).json().id
    await inject('DELETE', `/api/tags/${tag.id}/`, acme.admin.headers)
    const detail = (await inject('GET', `/api/accounts/${account}/`, alice.headers)).json()
    t.same(detail.account_obj.tags.map((tag: { id: string }) => tag.id), [tag.id])
    t.same(detail.tags.map((ref: { id: string }) => ref.id), [tag.id], "the record's tags show it")
    t.match((await inject('POST', '/api/accounts/', alice.headers, { name: 'Dorne', tags: [tag.id] })).json(), { error: true, errors: { tags: [String] } })
    t.match(await listed(tag.id), { is_active: false, usage: { accounts: 1 } }, 'its usage still counts')
  })

  t.test('a tag deleted before archiving existed (its name freed): restore claims the name back, or 400 if taken', async (t) => {
    const tag = (await create(alice.headers, { name: 'Legacy' })).json()
    const { run, position } = commandSession(store, { orgId: acme.orgId, profileId: acme.admin.profileId, isAdmin: true })
    await withReleasedName(run, { scope: TAG_NAME_SCOPE, orgId: acme.orgId, ownerId: tag.id, name: 'Legacy' }, (withRelease) => withRelease(tagDecider, tagStream(tag.id), { type: 'DeleteTag', orgId: acme.orgId, at: FIXED_NOW.toISOString() }))
    await projections.waitFor(position()!, 5000)
    t.match((await inject('GET', `/api/tags/${tag.id}/`, alice.headers)).json(), { is_active: false, is_deleted: true })
    t.match(await listed(tag.id), { is_active: false, is_deleted: true })
    const taken = (await create(alice.headers, { name: 'legacy' })).json()
    t.equal(taken.message, 'Tag Created Successfully', 'a deleted tag is not reactivated by a create: its name is free')
    t.equal((await inject('POST', `/api/tags/${tag.id}/restore/`, acme.admin.headers)).statusCode, 400, 'restore refused while the name is taken')
    await inject('PUT', `/api/tags/${taken.id}/`, alice.headers, { name: 'Legacy 2' })
    t.match((await inject('POST', `/api/tags/${tag.id}/restore/`, acme.admin.headers)).json(), { is_active: true, is_deleted: false, name: 'Legacy' })
    t.equal((await create(alice.headers, { name: 'LEGACY' })).statusCode, 400, 'the name is claimed again')
  })

  t.test('usage counts live accounts, contacts, deals, leads and tasks carrying each tag; totals count all tags', async (t) => {
    const [used, unused, off] = [(await create(alice.headers, { name: 'Used' })).json().id, (await create(alice.headers, { name: 'Unused' })).json().id, (await create(alice.headers, { name: 'Off' })).json().id]
    const post = async (url: string, payload: object) => (await inject('POST', url, alice.headers, payload)).json().id as string
    await post('/api/accounts/', { name: 'Used Inc', tags: [used, unused] })
    await inject('PATCH', `/api/accounts/${await post('/api/accounts/', { name: 'Gone Inc', tags: [used] })}/`, alice.headers, { tags: [] })
    await inject('DELETE', `/api/accounts/${await post('/api/accounts/', { name: 'Deleted Inc', tags: [used] })}/`, acme.admin.headers)
    await post('/api/contacts/', { first_name: 'Una', tags: [used] })
    await post('/api/contacts/', { first_name: 'Ugo', tags: [used] })
    await post('/api/opportunities/', { name: 'Used deal', tags: [used] })
    await post('/api/leads/', { first_name: 'Lou', tags: [used] })
    await post('/api/tasks/', { title: 'Use it', tags: [used, unused] })
    await post('/api/tasks/', { title: 'Use it too', tags: [used] })
    await inject('DELETE', `/api/tasks/${await post('/api/tasks/', { title: 'Deleted task', tags: [used] })}/`, alice.headers)
    await inject('DELETE', `/api/tags/${off}/`, acme.admin.headers)
    await inject('DELETE', `/api/tags/${unused}/`, acme.admin.headers)
    const globexTag = (await create(globex.admin.headers, { name: 'Used' })).json().id
    await inject('POST', '/api/accounts/', globex.admin.headers, { name: 'Globex', tags: [globexTag] })

    t.same((await listed(used))!.usage, { accounts: 1, contacts: 2, leads: 1, opportunities: 1, cases: 0, tasks: 2, api_settings: 0 }, 'deleted records and other organizations do not count')
    t.match((await listed(unused))!.usage, { accounts: 1, tasks: 1 }, 'an archived tag counts the records that keep it')
    const all = await list('?include_archived=true')
    const active = all.tags.filter((tag: { is_active: boolean }) => tag.is_active)
    const total = (tag: { usage: Record<string, number> }) => Object.values(tag.usage).reduce((a, b) => a + b, 0)
    t.same(all.totals, { count: all.tags.length, active: active.length, unused: active.filter((tag: { usage: Record<string, number> }) => total(tag) === 0).length })
    t.same((await list('?name=nothing-matches')).totals, all.totals, 'totals ignore the filters')
    t.same(all.not_covered, ['cases', 'api_settings'])
    t.equal(all.tags_count, all.tags.length)
    const paged = await list('?include_archived=true&limit=2&offset=1')
    t.same(paged.tags.length, all.tags.length, '`tags` is the whole list')
    t.same(paged.results, all.tags.slice(1, 3), '`results` the page')
    t.equal(paged.count, all.tags.length)
  })

  t.test('merge (admins): records move, the source is archived keeping its name, and answers the target and how many moved', async (t) => {
    const source = (await create(alice.headers, { name: 'Prospect' })).json()
    const target = (await create(alice.headers, { name: 'Lead' })).json()
    const off = (await create(alice.headers, { name: 'Retired' })).json()
    await inject('DELETE', `/api/tags/${off.id}/`, acme.admin.headers)
    await inject('POST', '/api/accounts/', alice.headers, { name: 'Prospect Co', tags: [source.id] })
    const merge = (into: string, headers = acme.admin.headers) => inject('POST', `/api/tags/${source.id}/merge/`, headers, { into })
    t.equal((await merge(target.id, alice.headers)).statusCode, 403)
    t.match((await merge(source.id)).json(), { error: true, errors: { into: ['A tag cannot merge into itself.'] } })
    t.match((await merge(off.id)).json(), { error: true, errors: { into: [/Restore that tag/] } }, 'not onto an archived tag')
    const merged = await merge(target.id)
    t.equal(merged.statusCode, 200)
    t.match(merged.json(), { error: false, message: /1 record\(s\) moved/, moved: 1, tag: { id: target.id, name: 'Lead' }, into: { id: target.id } })
    t.match((await inject('GET', `/api/tags/${source.id}/`, alice.headers)).json(), { is_active: false, merged_into: target.id })
    t.match(await listed(source.id), { is_active: false, usage: { accounts: 0 } })
    t.match(await listed(target.id), { usage: { accounts: 1 } })
    t.match((await create(alice.headers, { name: 'Prospect' })).json(), { id: source.id, message: 'Tag reactivated successfully' }, "the source's name survives: a create turns it back on")
  })

  t.test("another organization's tag ids answer 404 and change nothing", async (t) => {
    const foreign = (await create(globex.admin.headers, { name: 'Secret' })).json()
    const own = (await create(acme.admin.headers, { name: 'Own' })).json()
    for (const [method, url, payload] of [
      ['GET', `/api/tags/${foreign.id}/`, undefined],
      ['PUT', `/api/tags/${foreign.id}/`, { name: 'Hijacked' }],
      ['DELETE', `/api/tags/${foreign.id}/`, undefined],
      ['POST', `/api/tags/${foreign.id}/restore/`, undefined],
      ['POST', `/api/tags/${foreign.id}/merge/`, { into: foreign.id }],
      ['POST', `/api/tags/${own.id}/merge/`, { into: foreign.id }],
    ] as const) {
      t.equal((await app.inject({ method, url, headers: acme.admin.headers, payload })).statusCode, 404, `${method} ${url.replace(foreign.id, '<id>')}`)
    }
    t.match((await inject('GET', `/api/tags/${foreign.id}/`, globex.admin.headers)).json(), { name: 'Secret', is_active: true })
    t.match((await inject('GET', `/api/tags/${own.id}/`, acme.admin.headers)).json(), { is_active: true })
    t.notOk((await list('?include_archived=true')).tags.some((tag: { id: string }) => tag.id === foreign.id), 'never listed')
    t.equal((await app.inject({ url: '/api/tags/not-a-uuid/', headers: acme.admin.headers })).statusCode, 404)
  })

  t.test('the read model rebuilt from the log is identical', async (t) => {
    // One event at a time too: the batched apply must leave the same rows as applying each alone.
    const live = await rebuildEqualsLive(t, { db: database.db, store }, tagsProjector, { oneByOne: true })
    t.ok(live.tags!.length >= 8)
  })
})
