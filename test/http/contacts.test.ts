import t from 'tap'
import { contactsProjector } from '../../src/projections/contact/contacts.ts'
import { collectionClient, givenTwoOrganizations } from '../helpers/fixtures.ts'
import type { Headers } from '../helpers/fixtures.ts'
import { rebuildEqualsLive } from '../helpers/read-models.ts'

t.test('/api/contacts/', async (t) => {
  const { app, database, store, acme, globex, alice, bob } = await givenTwoOrganizations(t)
  const { inject, create, detail, list } = collectionClient(app, '/api/contacts/')
  const idOf = async (url: string, headers: Headers, payload: object): Promise<string> => (await inject('POST', url, headers, payload)).json().id
  const vip = await idOf('/api/tags/', alice.headers, { name: 'VIP' })
  const partner = await idOf('/api/tags/', alice.headers, { name: 'Partner' })
  const initech = await idOf('/api/accounts/', alice.headers, { name: 'Initech' })
  const hooli = await idOf('/api/accounts/', alice.headers, { name: 'Hooli' })
  const foreignAccount = await idOf('/api/accounts/', globex.admin.headers, { name: 'Globex' })
  const foreignTag = await idOf('/api/tags/', globex.admin.headers, { name: 'Secret' })

  t.test('POST creates, and the contact is readable at once with its account', async (t) => {
    const res = await create(alice.headers, { first_name: 'Peter', last_name: 'Gibbons', email: 'Peter@Initech.test', account: initech, tags: [vip], assigned_to: [bob.profileId] })
    t.equal(res.statusCode, 200)
    t.match(res.json(), { error: false, message: 'Contact created', id: String })
    t.match(res.headers['x-event-position'], /^\d+-\d+$/)
    const shown = await detail(alice.headers, res.json().id)
    t.match(shown, { contact_obj: { first_name: 'Peter', last_name: 'Gibbons', email: 'Peter@Initech.test', account: initech, tags: [{ id: vip }], assigned_to: [{ id: bob.profileId }], created_by: alice.profileId, phone: null }, account: { id: initech, name: 'Initech' }, tags: [{ name: 'VIP' }], assigned_to: [{ email: 'bob@acme.test' }] })
    t.match(await list(alice.headers), { count: 1, results: [{ first_name: 'Peter', tags: [{ id: vip, name: 'VIP' }], assigned_to: [{ id: bob.profileId, user_details: { email: 'bob@acme.test' } }] }], tags: [{ name: 'Partner' }, { name: 'VIP' }] })
  })

  t.test('email is optional, and unique per organization case-insensitively when given, also concurrently', async (t) => {
    t.equal((await create(alice.headers, { first_name: 'No Mail' })).statusCode, 200)
    t.equal((await create(alice.headers, { first_name: 'No Mail Either', email: '' })).statusCode, 200, 'a blank email is no email')
    const dup = await create(alice.headers, { first_name: 'Copy', email: 'peter@INITECH.test' })
    t.equal(dup.statusCode, 400)
    t.match(dup.json(), { error: true, errors: { email: [/already in use/] } })
    t.equal((await create(globex.admin.headers, { first_name: 'P', email: 'peter@initech.test' })).statusCode, 200, 'another organization may use it')
    const racers = await Promise.all(['a@race.test', 'A@race.test', 'a@RACE.test', 'A@RACE.TEST'].map((email) => create(alice.headers, { first_name: 'Racer', email })))
    t.same(racers.map((r) => r.statusCode).sort(), [200, 400, 400, 400])
    t.equal((await list(alice.headers, '?search=race.test')).count, 1)
  })

  t.test('invalid input is a 400 naming the field, and nothing is created', async (t) => {
    const before = (await list(alice.headers)).count
    const errorsOf = async (payload: object) => (await create(alice.headers, payload)).json()
    t.match(await errorsOf({ first_name: ' ' }), { error: true, errors: { first_name: [String] } })
    t.match(await errorsOf({ first_name: 'A', email: 'nope' }), { error: true, errors: { email: [String] } })
    t.match(await errorsOf({ first_name: 'A', account: foreignAccount }), { error: true, errors: { account: [String] } })
    t.match(await errorsOf({ first_name: 'A', account: 'junk' }), { error: true, errors: { account: [String] } })
    t.match(await errorsOf({ first_name: 'A', tags: [foreignTag] }), { error: true, errors: { tags: [String] } })
    t.match(await errorsOf({ first_name: 'A', assigned_to: [globex.admin.profileId] }), { error: true, errors: { assigned_to: [String] } })
    t.match(await errorsOf({ first_name: 'A', email: 'free@acme.test', account: foreignAccount, tags: [foreignTag] }), { errors: { account: [String], tags: [String] } }, 'every bad field at once')
    t.equal((await list(alice.headers)).count, before)
    t.equal((await create(alice.headers, { first_name: 'A', email: 'free@acme.test' })).statusCode, 200, 'a refused create claimed no email')
  })

  t.test('PUT clears what it does not mention; PATCH keeps it; changing or clearing the email frees the old one', async (t) => {
    const id = await idOf('/api/contacts/', alice.headers, { first_name: 'Milton', email: 'milton@initech.test', title: 'Collator', account: initech, tags: [vip, partner], assigned_to: [alice.profileId] })
    t.same((await inject('PATCH', `/api/contacts/${id}/`, alice.headers, { title: 'Stapler keeper' })).json(), { error: false, message: 'Contact updated' })
    t.match((await detail(alice.headers, id)).contact_obj, { email: 'milton@initech.test', title: 'Stapler keeper', account: initech, tags: [{ id: vip }, { id: partner }], assigned_to: [{ id: alice.profileId }] })
    t.match((await inject('PATCH', `/api/contacts/${id}/`, alice.headers, { email: 'milton@hooli.test', account: hooli })).json(), { error: false })
    t.equal((await create(alice.headers, { first_name: 'Reuse', email: 'MILTON@initech.test' })).statusCode, 200, 'the old email is free')
    t.match((await inject('PATCH', `/api/contacts/${id}/`, alice.headers, { account: foreignAccount })).json(), { errors: { account: [String] } })
    t.match((await inject('PUT', `/api/contacts/${id}/`, alice.headers, { first_name: 'Milton', last_name: 'Waddams' })).json(), { error: false })
    t.match((await detail(alice.headers, id)).contact_obj, { first_name: 'Milton', last_name: 'Waddams', email: null, title: null, account: null, tags: [], assigned_to: [] })
    t.equal((await create(alice.headers, { first_name: 'Reuse', email: 'milton@hooli.test' })).statusCode, 200, 'the cleared email is free')
    t.match((await inject('PATCH', `/api/contacts/${id}/`, alice.headers, { email: 'milton@hooli.test' })).json(), { errors: { email: [/already in use/] } })
    t.match((await detail(alice.headers, id)).contact_obj, { email: null }, 'the refused change changed nothing')
  })

  t.test('DELETE is soft, for an admin or the creator, and frees the email', async (t) => {
    const id = await idOf('/api/contacts/', alice.headers, { first_name: 'Bill', email: 'bill@initech.test', account: initech })
    t.equal((await inject('DELETE', `/api/contacts/${id}/`, bob.headers)).statusCode, 403)
    t.same((await inject('DELETE', `/api/contacts/${id}/`, alice.headers)).json(), { error: false, message: 'Contact deleted' })
    t.equal((await inject('GET', `/api/contacts/${id}/`, alice.headers)).statusCode, 404)
    t.notOk((await inject('GET', `/api/accounts/${initech}/`, alice.headers)).json().contacts.some((c: { id: string }) => c.id === id), "gone from the account's contacts")
    const again = await idOf('/api/contacts/', bob.headers, { first_name: 'Bill 2', email: 'BILL@initech.test' })
    t.equal((await inject('DELETE', `/api/contacts/${again}/`, acme.admin.headers)).statusCode, 200, 'an admin may')
    t.equal((await inject('DELETE', `/api/contacts/${(await idOf('/api/contacts/', bob.headers, { first_name: 'No mail' }))}/`, bob.headers)).statusCode, 200, 'a contact without email')
  })

  t.test("another organization's contact ids answer 404 and change nothing", async (t) => {
    const foreign = await idOf('/api/contacts/', globex.admin.headers, { first_name: 'Secret', email: 'secret@globex.test' })
    for (const [method, payload] of [['GET'], ['PUT', { first_name: 'X' }], ['PATCH', { email: 'x@acme.test' }], ['DELETE']] as const) {
      t.equal((await inject(method, `/api/contacts/${foreign}/`, acme.admin.headers, payload)).statusCode, 404, method)
    }
    t.match((await detail(globex.admin.headers, foreign)).contact_obj, { first_name: 'Secret', email: 'secret@globex.test' })
    t.equal((await create(acme.admin.headers, { first_name: 'X', email: 'x@acme.test' })).statusCode, 200, 'the refused change claimed nothing')
  })

  t.test('list filters: name, search, account, tags, assigned_to; unknown values match nothing', async (t) => {
    const a = await idOf('/api/contacts/', alice.headers, { first_name: 'Samir', last_name: 'Nagheenanajar', email: 'samir@filter.test', account: initech, tags: [vip], assigned_to: [bob.profileId] })
    const b = await idOf('/api/contacts/', alice.headers, { first_name: 'Michael', last_name: 'Bolton', email: 'mb@filter.test', account: hooli, tags: [partner] })
    const ids = async (query: string) => {
      const res = await inject('GET', `/api/contacts/${query}`, alice.headers)
      t.equal(res.statusCode, 200, query)
      return res.json().results.map((r: { id: string }) => r.id).filter((id: string) => id === a || id === b).sort()
    }
    t.same(await ids('?name=bolt'), [b], 'last name')
    t.same(await ids('?name=SAMIR'), [a], 'first name')
    t.same(await ids('?name=filter.test'), [], 'name does not cover email')
    t.same(await ids('?search=filter.test'), [a, b].sort(), 'search covers email')
    t.same(await ids(`?account=${initech}`), [a])
    t.same(await ids(`?account=${foreignAccount}`), [])
    t.same(await ids('?account=junk'), [])
    t.same(await ids(`?tags=${partner}`), [b])
    t.same(await ids(`?tags=${vip}&tags=${partner}`), [a, b].sort())
    t.same(await ids(`?assigned_to=${bob.profileId}`), [a])
    t.same(await ids('?assigned_to=junk'), [])
    t.same(await ids('?account=&search=filter.test'), [a, b].sort(), 'a blank value is no filter')
  })

  t.test('a deleted account may stay on its contacts but cannot be newly linked', async (t) => {
    const doomed = await idOf('/api/accounts/', alice.headers, { name: 'Doomed' })
    const id = await idOf('/api/contacts/', alice.headers, { first_name: 'Survivor', account: doomed })
    await inject('DELETE', `/api/accounts/${doomed}/`, alice.headers)
    t.match(await detail(alice.headers, id), { contact_obj: { account: doomed }, account: null })
    t.match((await inject('PATCH', `/api/contacts/${id}/`, alice.headers, { account: doomed, title: 'Still here' })).json(), { error: false })
    t.match((await create(alice.headers, { first_name: 'Late', account: doomed })).json(), { error: true, errors: { account: [String] } })
  })

  t.test('the read model rebuilt from the log is identical', async (t) => {
    const live = await rebuildEqualsLive(t, { db: database.db, store }, contactsProjector, { tables: ['contacts'] })
    t.ok(live.contacts!.length >= 10)
  })
})
