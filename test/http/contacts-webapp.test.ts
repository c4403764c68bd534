import t from 'tap'
import { contactsProjector } from '../../src/projections/contact/contacts.ts'
import { collectionClient, givenTwoOrganizations } from '../helpers/fixtures.ts'
import { rebuildEqualsLive } from '../helpers/read-models.ts'

/**
 * Contacts as the web app's pages read and write them (issue 22): the original's professional,
 * communication and address fields, active and inactive counts, the is_active filter, the account
 * link with its name, and a detail with the contact's deals and colleagues.
 */
t.test('/api/contacts/ as the web app reads it', async (t) => {
  const { app, database, store, globex, alice, bob } = await givenTwoOrganizations(t)
  const { inject, create, detail, list } = collectionClient(app, '/api/contacts/')
  const idOf = async (headers: Record<string, string>, payload: object) => {
    const res = await create(headers, payload)
    t.equal(res.statusCode, 200, JSON.stringify(res.json()))
    return res.json().id as string
  }
  const northwind = (await inject('POST', '/api/accounts/', alice.headers, { name: 'Northwind' })).json().id
  const foreignAccount = (await inject('POST', '/api/accounts/', globex.admin.headers, { name: 'Globex' })).json().id

  // What the web app's create form sends (its toBody): blanks as null, flags as booleans, one owner.
  const ada = await idOf(alice.headers, {
    first_name: 'Ada', last_name: 'Lovelace', email: 'ada@northwind.test', phone: '+44 20 1234', title: 'CTO', department: 'Engineering', organization: 'Northwind Ltd',
    linkedin_url: 'https://www.linkedin.com/in/ada', do_not_call: true, address_line: '1 Main St', city: 'London', state: null, postcode: 'N1', country: 'GB',
    description: null, account: northwind, assigned_to: [bob.profileId],
  })
  const charles = await idOf(alice.headers, { first_name: 'Charles', last_name: 'Babbage', title: 'Advisor', account: northwind, city: 'Cambridge', phone: '555-0100' })
  const gone = await idOf(bob.headers, { first_name: 'Gone', email: 'gone@elsewhere.test', is_active: false, city: 'London' })
  await idOf(globex.admin.headers, { first_name: 'Foreign', city: 'London' })

  t.test("the original's fields are stored and answered, with the account's name", async (t) => {
    const shown = await detail(alice.headers, ada)
    t.match(shown.contact_obj, {
      department: 'Engineering', organization: 'Northwind Ltd', linkedin_url: 'https://www.linkedin.com/in/ada', do_not_call: true, is_active: true, address_line: '1 Main St', city: 'London', postcode: 'N1', country: 'GB',
      country_display: 'United Kingdom', account: northwind, account_detail: { id: northwind, name: 'Northwind' }, linked_accounts: [{ id: northwind, name: 'Northwind' }], assigned_to: [{ id: bob.profileId, user_details: { email: 'bob@acme.test' } }],
    })
    t.same(shown.address_obj, { address_line: '1 Main St', city: 'London', state: null, postcode: 'N1', country: 'GB' })
    t.match(shown.account, { id: northwind, name: 'Northwind', rollups: { won_count: 0 } })
    t.match((await detail(alice.headers, gone)).contact_obj, { is_active: false, do_not_call: false, account_detail: null, linked_accounts: [] })
  })

  t.test('the list: active and inactive counted before the is_active filter, the side lists', async (t) => {
    const all = await list(alice.headers)
    t.match(all, { count: 3, active_count: 2, inactive_count: 1, contacts_count: 3, per_page: 10, page_number: 1, offset: 0, limit: 10 })
    t.same(all.contact_obj_list, all.results)
    t.same(all.users.map((u: { user__email: string }) => u.user__email).sort(), ['admin@acme.test', 'alice@acme.test', 'bob@acme.test'])
    t.ok(all.countries.some(([code]: string[]) => code === 'GB'))
    const active = await list(alice.headers, '?is_active=true&limit=25')
    t.match(active, { count: 2, active_count: 2, inactive_count: 1 })
    t.same(active.results.map((c: { first_name: string }) => c.first_name), ['Ada', 'Charles'])
    t.same((await list(alice.headers, '?is_active=false')).results.map((c: { id: string }) => c.id), [gone])
    t.equal((await list(alice.headers, '?is_active=maybe')).count, 3, 'any other value is no filter')
  })

  t.test('filters: city, phone, email, search (phone too), created_at, and the counts follow them', async (t) => {
    const names = async (query: string) => {
      const res = await inject('GET', `/api/contacts/${query}`, alice.headers)
      t.equal(res.statusCode, 200, query)
      const body = res.json()
      return { names: body.results.map((c: { first_name: string }) => c.first_name), active: body.active_count, inactive: body.inactive_count }
    }
    t.same(await names('?city=lond'), { names: ['Ada', 'Gone'], active: 1, inactive: 1 }, "another organization's Londoner is not there")
    t.same(await names('?city=lond&is_active=true'), { names: ['Ada'], active: 1, inactive: 1 })
    t.same(await names('?phone=0100'), { names: ['Charles'], active: 1, inactive: 0 })
    t.same(await names('?email=ELSEWHERE'), { names: ['Gone'], active: 0, inactive: 1 })
    t.same((await names('?search=555-01')).names, ['Charles'], 'search covers the phone')
    const day = (await detail(alice.headers, ada)).contact_obj.created_at.slice(0, 10)
    t.same((await names(`?created_at__gte=${day}&created_at__lte=${day}`)).names.length, 3)
    t.same((await names('?created_at__lte=2000-01-01')).names, [])
  })

  t.test("the edit form's PATCH: flags switch off, blanks clear, the owner stays unless sent", async (t) => {
    t.match((await inject('PATCH', `/api/contacts/${ada}/`, alice.headers, { do_not_call: false, is_active: false, department: null, city: 'Paris', account: null })).json(), { error: false })
    t.match((await detail(alice.headers, ada)).contact_obj, { do_not_call: false, is_active: false, department: null, city: 'Paris', account: null, account_detail: null, assigned_to: [{ id: bob.profileId }], organization: 'Northwind Ltd' })
    t.match((await inject('PATCH', `/api/contacts/${ada}/`, alice.headers, { is_active: 'on', account: northwind })).json(), { error: false }, 'form values')
    t.match((await detail(alice.headers, ada)).contact_obj, { is_active: true, account: northwind })
  })

  t.test('bad values are 400s naming the field; another organization\'s account is refused', async (t) => {
    const errorsOf = async (payload: object) => (await create(alice.headers, { first_name: 'Bad', ...payload })).json()
    t.match(await errorsOf({ linkedin_url: 'not a url' }), { error: true, errors: { linkedin_url: [String] } })
    t.match(await errorsOf({ do_not_call: 'perhaps' }), { error: true, errors: { do_not_call: [String] } })
    t.match(await errorsOf({ account: foreignAccount }), { error: true, errors: { account: [String] } })
    t.equal((await list(alice.headers, '?name=bad')).count, 0)
  })

  t.test("the detail: the contact's deals and colleagues; nothing of another organization", async (t) => {
    const deal = await inject('POST', '/api/opportunities/', alice.headers, { name: 'Engine', account: northwind, contacts: [ada], stage: 'PROPOSAL', amount: '12.5' })
    t.equal(deal.statusCode, 200, JSON.stringify(deal.json()))
    await inject('POST', '/api/opportunities/', alice.headers, { name: 'Not hers', account: northwind, contacts: [charles] })
    const shown = await detail(alice.headers, ada)
    t.match(shown.opportunities, [{ id: deal.json().id, name: 'Engine', stage: 'PROPOSAL', amount: '12.50', currency: 'USD', stage_kind: 'open' }])
    t.equal(shown.opportunities.length, 1)
    t.same(shown.colleagues, [{ id: charles, first_name: 'Charles', last_name: 'Babbage', title: 'Advisor' }])
    t.match(shown, { cases: [], tasks: [] })
    t.equal((await inject('GET', `/api/contacts/${ada}/`, globex.admin.headers)).statusCode, 404)
    const foreign = await list(globex.admin.headers)
    t.same(foreign.results.map((c: { first_name: string }) => c.first_name), ['Foreign'])
    t.same(foreign.users.map((u: { user__email: string }) => u.user__email), ['admin@globex.test'])
  })

  t.test('the read model rebuilt from the log is identical', async (t) => {
    const live = await rebuildEqualsLive(t, { db: database.db, store }, contactsProjector, { tables: ['contacts'] })
    t.ok(live.contacts!.some((row) => row.organization === 'Northwind Ltd'))
  })
})
