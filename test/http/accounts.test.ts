import t from 'tap'
import { accountsProjector } from '../../src/projections/account/accounts.ts'
import { collectionClient, givenTwoOrganizations } from '../helpers/fixtures.ts'
import type { Headers } from '../helpers/fixtures.ts'
import { rebuildEqualsLive } from '../helpers/read-models.ts'

t.test('/api/accounts/', async (t) => {
  const { app, database, store, acme, globex, alice, bob } = await givenTwoOrganizations(t)
  const { inject, create, detail, list } = collectionClient(app, '/api/accounts/')
  const tag = async (headers: Headers, name: string): Promise<string> => (await inject('POST', '/api/tags/', headers, { name })).json().id
  const vip = await tag(alice.headers, 'VIP')
  const partner = await tag(alice.headers, 'Partner')
  const foreignTag = await tag(globex.admin.headers, 'Secret')

  t.test('POST creates with defaults, answers the id, and the account is readable at once', async (t) => {
    const res = await create(alice.headers, { name: ' Initech ', email: 'sales@initech.test', city: 'Austin', tags: [vip], assigned_to: [bob.profileId] })
    t.equal(res.statusCode, 200)
    const body = res.json()
    t.match(body, { error: false, message: 'Account created', id: /^[0-9a-f-]{36}$/ })
    t.match(res.headers['x-event-position'], /^\d+-\d+$/)
    const shown = await detail(alice.headers, body.id)
    t.match(shown.account_obj, { id: body.id, name: 'Initech', email: 'sales@initech.test', city: 'Austin', is_active: true, phone: null, tags: [{ id: vip }], assigned_to: [{ id: bob.profileId }], created_by: alice.profileId })
    t.same(shown.contacts, [])
    t.same(shown.opportunities, [])
    t.match(shown.tags, [{ id: vip, name: 'VIP' }])
    t.match(shown.assigned_to, [{ id: bob.profileId, email: 'bob@acme.test' }])
    t.equal(shown.account_obj.assigned_to[0].user_details.email, 'bob@acme.test', 'the owner as the web app reads it')
    t.same(shown.account_obj.tags.map((tag: { name: string }) => tag.name), ['VIP'], 'tag names as the web app reads them')
    const listed = await list(alice.headers)
    t.match(listed, { count: 1, offset: 0, limit: 10, results: [{ name: 'Initech' }] })
    t.match(listed.active_accounts.open_accounts, [{ tags: [{ id: vip, name: 'VIP' }], assigned_to: [{ id: bob.profileId, user_details: { email: 'bob@acme.test' } }] }], 'list rows carry the objects too')
  })

  t.test('names are unique per organization, case-insensitively, also when created concurrently', async (t) => {
    const dup = await create(alice.headers, { name: 'INITECH' })
    t.equal(dup.statusCode, 400)
    t.same(dup.json(), { error: true, errors: { name: ['"INITECH" is already in use.'] } })
    t.equal((await create(globex.admin.headers, { name: 'Initech' })).statusCode, 200, 'another organization may use the name')
    const racers = await Promise.all(['Hooli', 'HOOLI', 'hooli', 'hOoli', 'Hooli '].map((name) => create(alice.headers, { name })))
    t.same(racers.map((r) => r.statusCode).sort(), [200, 400, 400, 400, 400])
    t.equal((await list(alice.headers, '?name=hooli')).count, 1)
  })

  t.test('invalid input is a 400 naming the field, and nothing is created', async (t) => {
    const before = (await list(alice.headers)).count
    const errorsOf = async (payload: object) => (await create(alice.headers, payload)).json()
    t.match(await errorsOf({ name: '  ' }), { error: true, errors: { name: [String] } })
    t.match(await errorsOf({}), { error: true, errors: { name: [String] } })
    t.match(await errorsOf({ name: 'A', email: 'not-an-email' }), { error: true, errors: { email: [String] } })
    t.match(await errorsOf({ name: 'A', tags: ['nope'] }), { error: true, errors: { tags: [String] } })
    t.match(await errorsOf({ name: 'A', tags: [foreignTag] }), { error: true, errors: { tags: [String] } })
    t.match(await errorsOf({ name: 'A', assigned_to: [globex.admin.profileId] }), { error: true, errors: { assigned_to: [String] } })
    t.match(await errorsOf({ name: 'A', assigned_to: [acme.orgId] }), { error: true, errors: { assigned_to: [String] } })
    const deleted = await tag(alice.headers, 'Gone')
    await inject('DELETE', `/api/tags/${deleted}/`, acme.admin.headers)
    t.match(await errorsOf({ name: 'A', tags: [deleted] }), { error: true, errors: { tags: [String] } }, 'a deleted tag')
    t.equal((await list(alice.headers)).count, before)
    t.equal((await create(alice.headers, { name: 'A' })).statusCode, 200, 'the name of a refused create stays free')
  })

  t.test('an inactive profile cannot be assigned', async (t) => {
    const carol = await acme.addMember('carol@acme.test')
    await database.db.updateTable('profiles').set({ is_active: false }).where('id', '=', carol.profileId).execute()
    t.match((await create(alice.headers, { name: 'Inactive', assigned_to: [carol.profileId] })).json(), { errors: { assigned_to: [String] } })
  })

  t.test('ids the account already holds may stay after their tag is deleted or their profile deactivated', async (t) => {
    const dave = await acme.addMember('dave@acme.test')
    const temp = await tag(alice.headers, 'Temporary')
    const { id } = (await create(alice.headers, { name: 'Echo', tags: [temp], assigned_to: [dave.profileId] })).json()
    await database.db.updateTable('profiles').set({ is_active: false }).where('id', '=', dave.profileId).execute()
    await inject('DELETE', `/api/tags/${temp}/`, acme.admin.headers)
    const read = (await detail(alice.headers, id)).account_obj
    t.same(read.tags.map((tag: { id: string }) => tag.id), [temp], 'the stored ids are kept')
    t.same(read.assigned_to.map((p: { id: string }) => p.id), [dave.profileId], 'and the deactivated profile')
    t.same((await detail(alice.headers, id)).tags.map((ref: { id: string }) => ref.id), [temp], 'the detail still shows the tag: DELETE archives it, and records keep an archived tag')
    t.match((await inject('PUT', `/api/accounts/${id}/`, alice.headers, { name: read.name, tags: read.tags, assigned_to: read.assigned_to })).json(), { error: false }, 'sending back what was read')
    t.match((await inject('PATCH', `/api/accounts/${id}/`, alice.headers, { tags: [] })).json(), { error: false })
    t.match((await inject('PATCH', `/api/accounts/${id}/`, alice.headers, { tags: [temp] })).json(), { error: true, errors: { tags: [String] } }, 'but not added again')
  })

  t.test('PUT replaces every field and clears relations it does not mention; PATCH changes only the named fields', async (t) => {
    const { id } = (await create(alice.headers, { name: 'Umbrella', phone: '123', city: 'Raccoon', tags: [vip, partner], assigned_to: [alice.profileId] })).json()
    const patched = await inject('PATCH', `/api/accounts/${id}/`, alice.headers, { industry: 'Pharma' })
    t.same(patched.json(), { error: false, message: 'Account updated' })
    t.match((await detail(alice.headers, id)).account_obj, { name: 'Umbrella', phone: '123', industry: 'Pharma', tags: [{ id: vip }, { id: partner }], assigned_to: [{ id: alice.profileId }] })
    t.match((await inject('PATCH', `/api/accounts/${id}/`, alice.headers, { tags: [partner] })).json(), { error: false })
    t.match((await detail(alice.headers, id)).account_obj, { tags: [{ id: partner }], assigned_to: [{ id: alice.profileId }] }, 'PATCH replaces a list it names')
    t.match((await inject('PUT', `/api/accounts/${id}/`, alice.headers, { name: 'Umbrella Corp', is_active: false })).json(), { error: false })
    t.match((await detail(alice.headers, id)).account_obj, { name: 'Umbrella Corp', phone: null, city: null, industry: null, is_active: false, tags: [], assigned_to: [] })
    t.equal((await create(alice.headers, { name: 'umbrella' })).statusCode, 200, 'the old name is free after a rename')
    t.match((await inject('PATCH', `/api/accounts/${id}/`, alice.headers, { name: 'UMBRELLA' })).json(), { error: true, errors: { name: [String] } }, 'renaming onto a taken name')
    t.match((await inject('PATCH', `/api/accounts/${id}/`, alice.headers, { tags: [foreignTag] })).json(), { error: true, errors: { tags: [String] } })
    t.match((await inject('PUT', `/api/accounts/${id}/`, alice.headers, { city: 'X' })).json(), { error: true, errors: { name: [String] } }, 'PUT needs the name')
    t.match((await detail(alice.headers, id)).account_obj, { name: 'Umbrella Corp', tags: [] }, 'refused updates changed nothing')
    t.match((await inject('PATCH', `/api/accounts/${id}/`, alice.headers, { name: 'umbrella corp' })).json(), { error: false }, 'a change of case keeps the claim')
    t.match((await detail(alice.headers, id)).account_obj, { name: 'umbrella corp' })
  })

  t.test('DELETE is soft, for an admin or the creator, and frees the name', async (t) => {
    const { id } = (await create(alice.headers, { name: 'Soylent' })).json()
    t.equal((await inject('DELETE', `/api/accounts/${id}/`, bob.headers)).statusCode, 403, 'another member may not')
    t.equal((await detail(alice.headers, id)).account_obj.name, 'Soylent')
    t.same((await inject('DELETE', `/api/accounts/${id}/`, alice.headers)).json(), { error: false, message: 'Account deleted' })
    t.equal((await inject('GET', `/api/accounts/${id}/`, alice.headers)).statusCode, 404)
    t.equal((await inject('DELETE', `/api/accounts/${id}/`, alice.headers)).statusCode, 404, 'deleting twice')
    t.notOk((await list(alice.headers, '?name=soylent')).count)
    const again = (await create(bob.headers, { name: 'soylent' })).json()
    t.same((await inject('DELETE', `/api/accounts/${again.id}/`, acme.admin.headers)).json(), { error: false, message: 'Account deleted' }, 'an admin may')
  })

  t.test("another organization's account ids answer 404 and change nothing", async (t) => {
    const foreign = (await create(globex.admin.headers, { name: 'Globex Secret', city: 'Cypress Creek' })).json()
    for (const [method, payload] of [['GET'], ['PUT', { name: 'Hijacked' }], ['PATCH', { name: 'Hijacked' }], ['DELETE']] as const) {
      t.equal((await inject(method, `/api/accounts/${foreign.id}/`, acme.admin.headers, payload)).statusCode, 404, method)
    }
    t.match((await detail(globex.admin.headers, foreign.id)).account_obj, { name: 'Globex Secret', city: 'Cypress Creek' })
    t.equal((await create(globex.admin.headers, { name: 'Hijacked' })).statusCode, 200, 'the refused rename claimed nothing')
    t.equal((await inject('GET', '/api/accounts/not-a-uuid/', acme.admin.headers)).statusCode, 404)
    t.notOk((await list(acme.admin.headers)).results.some((r: { id: string }) => r.id === foreign.id))
  })

  t.test('list filters: name, search, tags and assigned_to (any of); unknown values match nothing', async (t) => {
    const a = (await create(alice.headers, { name: 'Filter Alpha', email: 'hello@alpha.test', city: 'Springfield', tags: [vip], assigned_to: [bob.profileId] })).json().id
    const b = (await create(alice.headers, { name: 'Filter Beta', city: 'Shelbyville', tags: [partner] })).json().id
    const ids = async (query: string) => {
      const res = await inject('GET', `/api/accounts/${query}`, alice.headers)
      t.equal(res.statusCode, 200, query)
      return res.json().results.map((r: { id: string }) => r.id).filter((id: string) => id === a || id === b).sort()
    }
    t.same(await ids('?name=filter%20al'), [a])
    t.same(await ids('?search=ALPHA.TEST'), [a], 'search covers email')
    t.same(await ids('?search=shelby'), [b], 'search covers city')
    t.same(await ids('?search=filter'), [a, b].sort())
    t.same(await ids('?name=springfield'), [], 'name does not cover city')
    t.same(await ids(`?tags=${vip}`), [a])
    t.same(await ids(`?tags=${vip}&tags=${partner}`), [a, b].sort())
    t.same(await ids(`?tags=${vip.toUpperCase()}`), [a], 'an uppercase id resolves')
    t.same(await ids(`?assigned_to=${bob.profileId}`), [a])
    t.same(await ids(`?tags=${foreignTag}`), [], "another org's tag")
    t.same(await ids('?tags=junk'), [], 'a malformed id matches nothing')
    t.same(await ids(`?tags=junk&tags=${partner}`), [b])
    t.same(await ids('?assigned_to=junk'), [])
    t.same(await ids('?tags=&name=filter'), [a, b].sort(), 'a blank value is no filter')
    t.same(await ids('?name=%25'), [], 'wildcards are literal')
    const page = await list(alice.headers, '?limit=1&offset=1&search=filter')
    t.match(page, { count: 2, limit: 1, offset: 1, results: [{ id: b }] })
    t.same(page.tags.map((x: { name: string }) => x.name), ['Partner', 'VIP'], "the envelope lists the organization's live tags")
    t.equal((await list(alice.headers, '?limit=500')).limit, 500, 'no maximum')
  })

  t.test('the detail nests the contacts of the account', async (t) => {
    const { id } = (await create(alice.headers, { name: 'With Contacts' })).json()
    const contact = (await inject('POST', '/api/contacts/', alice.headers, { first_name: 'Zed', account: id })).json()
    await inject('POST', '/api/contacts/', alice.headers, { first_name: 'Other' })
    t.match((await detail(alice.headers, id)).contacts, [{ id: contact.id, first_name: 'Zed', account: id }])
    t.equal((await detail(alice.headers, id)).contacts.length, 1)
  })

  t.test('the OpenAPI document describes the routes', async (t) => {
    const doc = (await app.inject({ url: '/schema/' })).json()
    t.ok(doc.paths['/api/accounts/'] && doc.paths['/api/accounts/{id}/'])
    t.match(JSON.stringify(doc.paths['/api/accounts/{id}/']), /The account's deals the caller may see, newest first/)
  })

  t.test('the read model rebuilt from the log is identical', async (t) => {
    const live = await rebuildEqualsLive(t, { db: database.db, store }, accountsProjector, { tables: ['accounts'] })
    t.ok(live.accounts!.length >= 10)
  })
})
