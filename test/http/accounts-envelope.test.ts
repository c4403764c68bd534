import t from 'tap'
import { accountsProjector } from '../../src/projections/account/accounts.ts'
import { collectionClient, givenTwoOrganizations } from '../helpers/fixtures.ts'
import { rebuildEqualsLive } from '../helpers/read-models.ts'

/**
 * GET /api/accounts/ answers the original's envelope (issue 22): active and inactive accounts in
 * `active_accounts` / `closed_accounts` with their counts and next offsets, and the side lists the
 * web app's forms read; the account records carry the original's business fields and rollups.
 */
t.test('/api/accounts/ as the web app reads it', async (t) => {
  const { app, database, store, acme, globex, alice, bob } = await givenTwoOrganizations(t)
  const { inject, create, detail, list } = collectionClient(app, '/api/accounts/')
  const idOf = async (headers: Record<string, string>, payload: object) => {
    const res = await create(headers, payload)
    t.equal(res.statusCode, 200, JSON.stringify(res.json()))
    return res.json().id as string
  }
  const vip = (await inject('POST', '/api/tags/', alice.headers, { name: 'VIP' })).json().id
  const team = (await inject('POST', '/api/teams/', acme.admin.headers, { name: 'Sales', users: [] })).json().id
  const foreignTag = (await inject('POST', '/api/tags/', globex.admin.headers, { name: 'Secret' })).json().id

  // What the web app's create form sends (its toBody): numbers as JSON numbers, blanks as null, one owner.
  const north = await idOf(alice.headers, { name: 'Northwind', industry: 'FOOD & BEVERAGE', website: null, number_of_employees: 120, annual_revenue: 1250000.5, city: 'Seattle', country: 'US', assigned_to: [bob.profileId], tags: [vip] })
  const contoso = await idOf(alice.headers, { name: 'Contoso', industry: 'SOFTWARE', city: 'Redmond', country: 'us', annual_revenue: '99.9', currency: 'eur' })
  await idOf(bob.headers, { name: 'Fabrikam', industry: 'SOFTWARE', city: 'Seattle', is_active: false })
  await idOf(bob.headers, { name: 'Adatum', is_active: 'false' })
  await idOf(globex.admin.headers, { name: 'Globex Hidden', city: 'Seattle', industry: 'SOFTWARE' })
  const grace = (await inject('POST', '/api/contacts/', alice.headers, { first_name: 'Grace', account: north })).json().id
  await inject('POST', '/api/contacts/', globex.admin.headers, { first_name: 'Foreign' })

  t.test('the envelope: active and inactive apart, their counts, next offsets and the side lists', async (t) => {
    const body = await list(alice.headers)
    t.match(body.active_accounts, { open_accounts_count: 2, offset: null })
    t.same(body.active_accounts.open_accounts.map((a: { name: string }) => a.name), ['Contoso', 'Northwind'])
    t.match(body.closed_accounts, { close_accounts_count: 2, offset: null })
    t.same(body.closed_accounts.close_accounts.map((a: { name: string }) => a.name), ['Adatum', 'Fabrikam'])
    t.match(body, { count: 4, offset: 0, limit: 10, per_page: 10, page_number: 1, status: ['active', 'inactive'] }, "today's page of all of them stays")
    t.equal(body.results.length, 4)
    t.same(body.contacts, [{ id: grace, first_name: 'Grace' }], "the organization's contacts, for the form")
    t.same(body.teams.map((x: { id: string }) => x.id), [team])
    t.same(body.tags.map((x: { id: string }) => x.id), [vip])
    t.same(body.users.map((u: { user__email: string }) => u.user__email).sort(), ['admin@acme.test', 'alice@acme.test', 'bob@acme.test'].sort())
    t.match(body.users[0], { id: /^[0-9a-f-]{36}$/ })
    t.ok(body.countries.some(([code, name]: string[]) => code === 'US' && name === 'United States'))
    t.ok(body.industries.some(([value, label]: string[]) => value === 'FOOD & BEVERAGE' && label === 'FOOD & BEVERAGE'))
  })

  t.test('pagination: limit and offset page each section; offset says where the next page starts', async (t) => {
    const first = await list(alice.headers, '?limit=1')
    t.match(first.active_accounts, { open_accounts_count: 2, offset: 1, open_accounts: [{ name: 'Contoso' }] })
    t.match(first.closed_accounts, { close_accounts_count: 2, offset: 1, close_accounts: [{ name: 'Adatum' }] })
    const second = await list(alice.headers, '?limit=1&offset=1')
    t.match(second.active_accounts, { offset: null, open_accounts: [{ name: 'Northwind' }] })
    t.match(second, { page_number: 2, per_page: 1 })
    const past = await list(alice.headers, '?limit=1&offset=5')
    t.match(past.active_accounts, { offset: null, open_accounts: [], open_accounts_count: 2 }, 'an empty page past the end has no next page (§4.1), not 0 (the original), which would start over')
    t.match(past.closed_accounts, { offset: null, close_accounts: [] })
    const none = await list(alice.headers, '?name=nothing-matches')
    t.match(none.active_accounts, { offset: null, open_accounts: [], open_accounts_count: 0 }, 'no records: the first page is the last')
  })

  t.test("records: the original's business fields, as decimal strings where money", async (t) => {
    const { active_accounts } = await list(alice.headers)
    const row = active_accounts.open_accounts.find((a: { id: string }) => a.id === north)
    t.match(row, { number_of_employees: 120, annual_revenue: '1250000.50', currency: null, country: 'US', country_display: 'United States', industry: 'FOOD & BEVERAGE', is_active: true, tags: [{ id: vip }], assigned_to: [{ id: bob.profileId }] })
    t.match(row.rollups, { won_amount: '0.00', won_count: 0, open_pipeline: '0.00', open_deal_count: 0, overdue_amount: '0.00', open_tickets: 0, first_won_on: null })
    t.match((await detail(alice.headers, contoso)).account_obj, { annual_revenue: '99.90', currency: 'EUR', country_display: 'United States' })
  })

  t.test('filters narrow both sections: city, industry, name, search, tags, assigned_to, created_at', async (t) => {
    const names = async (query: string) => {
      const res = await inject('GET', `/api/accounts/${query}`, alice.headers)
      t.equal(res.statusCode, 200, query)
      const body = res.json()
      return { open: body.active_accounts.open_accounts.map((a: { name: string }) => a.name), closed: body.closed_accounts.close_accounts.map((a: { name: string }) => a.name), counts: [body.active_accounts.open_accounts_count, body.closed_accounts.close_accounts_count] }
    }
    t.same(await names('?city=seat'), { open: ['Northwind'], closed: ['Fabrikam'], counts: [1, 1] }, "another organization's Seattle account is not there")
    t.same(await names('?industry=software'), { open: ['Contoso'], closed: ['Fabrikam'], counts: [1, 1] })
    t.same(await names('?industry=software&city=seattle'), { open: [], closed: ['Fabrikam'], counts: [0, 1] })
    t.same(await names('?name=ada'), { open: [], closed: ['Adatum'], counts: [0, 1] })
    t.same(await names(`?tags=${vip}`), { open: ['Northwind'], closed: [], counts: [1, 0] })
    t.same(await names(`?tags=${foreignTag}`), { open: [], closed: [], counts: [0, 0] }, "another organization's tag matches nothing")
    t.same(await names(`?assigned_to=${bob.profileId}`), { open: ['Northwind'], closed: [], counts: [1, 0] })
    const today = (await detail(alice.headers, north)).account_obj.created_at.slice(0, 10)
    t.same((await names(`?created_at__gte=${today}&created_at__lte=${today}`)).counts, [2, 2], 'created today, the whole day included')
    t.same((await names('?created_at__lte=2000-01-01')).counts, [0, 0])
    t.same((await names('?created_at__gte=not-a-date')).counts, [0, 0], 'a malformed date matches nothing')
  })

  t.test("another organization sees none of it, and its side lists are its own", async (t) => {
    const body = await list(globex.admin.headers)
    t.same(body.active_accounts.open_accounts.map((a: { name: string }) => a.name), ['Globex Hidden'])
    t.equal(body.closed_accounts.close_accounts_count, 0)
    t.same(body.contacts.map((c: { first_name: string }) => c.first_name), ['Foreign'])
    t.same(body.users.map((u: { user__email: string }) => u.user__email), ['admin@globex.test'])
    t.same(body.tags.map((x: { id: string }) => x.id), [foreignTag])
    t.same(body.teams, [])
  })

  t.test('bad business values are 400s naming the field, and nothing is stored', async (t) => {
    const errorsOf = async (payload: object) => (await create(alice.headers, { name: 'Bad Co', ...payload })).json()
    t.match(await errorsOf({ annual_revenue: -1 }), { error: true, errors: { annual_revenue: [String] } })
    t.match(await errorsOf({ annual_revenue: '1.234' }), { error: true, errors: { annual_revenue: [String] } })
    t.match(await errorsOf({ annual_revenue: 'lots' }), { error: true, errors: { annual_revenue: [String] } })
    t.match(await errorsOf({ number_of_employees: 2.5 }), { error: true, errors: { number_of_employees: [String] } })
    t.match(await errorsOf({ number_of_employees: -3 }), { error: true, errors: { number_of_employees: [String] } })
    t.match(await errorsOf({ currency: 'XXXX' }), { error: true, errors: { currency: [String] } })
    t.equal((await list(alice.headers, '?name=bad%20co')).count, 0)
  })

  t.test("the edit form's PATCH: only what it sends changes; blanks clear", async (t) => {
    t.match((await inject('PATCH', `/api/accounts/${north}/`, alice.headers, { number_of_employees: '150', annual_revenue: null, website: null })).json(), { error: false })
    t.match((await detail(alice.headers, north)).account_obj, { number_of_employees: 150, annual_revenue: null, city: 'Seattle', tags: [{ id: vip }], assigned_to: [{ id: bob.profileId }] })
    t.match((await inject('PATCH', `/api/accounts/${north}/`, alice.headers, { number_of_employees: '', tags: [{ id: vip, name: 'VIP' }] })).json(), { error: false }, 'relation items may be objects with an id')
    t.match((await detail(alice.headers, north)).account_obj, { number_of_employees: null, tags: [{ id: vip }] })
  })

  t.test('rollups and the detail come from the deals of the account', async (t) => {
    const deal = async (payload: object) => {
      // Assigned to Alice, who reads the rollups: a member's rollups sum only the deals she may see (visibility/policy.ts).
      const res = await inject('POST', '/api/opportunities/', acme.admin.headers, { account: north, assigned_to: [alice.profileId], ...payload })
      t.equal(res.statusCode, 200, JSON.stringify(res.json()))
      return res.json().id as string
    }
    await deal({ name: 'Won big', stage: 'CLOSED_WON', amount: '1000.10', closed_on: '2026-03-01' })
    await deal({ name: 'Won small', stage: 'CLOSED_WON', amount: 5, closed_on: '2026-02-01' })
    const open = await deal({ name: 'In play', stage: 'PROPOSAL', amount: '250.00' })
    await deal({ name: 'Lost', stage: 'CLOSED_LOST', amount: 7, closed_on: '2026-01-01' })
    await inject('POST', '/api/opportunities/', acme.admin.headers, { name: 'Elsewhere', account: contoso, stage: 'CLOSED_WON', amount: 1, closed_on: '2026-01-01' })
    const row = (await list(alice.headers)).active_accounts.open_accounts.find((a: { id: string }) => a.id === north)
    t.same(row.rollups, { won_amount: '1005.10', won_count: 2, open_pipeline: '250.00', open_deal_count: 1, overdue_amount: '0.00', open_tickets: 0, first_won_on: '2026-02-01' })
    const shown = await detail(alice.headers, north)
    t.same(shown.account_obj.rollups, row.rollups, 'the same numbers on the detail')
    t.equal(shown.opportunity_list.length, 4)
    t.same(shown.opportunities, shown.opportunity_list)
    t.match(shown.opportunity_list.find((d: { id: string }) => d.id === open), { name: 'In play', stage: 'PROPOSAL', stage_kind: 'open', amount: '250.00', currency: 'USD', days_in_stage: 0, aging_status: 'green' })
    t.match(shown.contacts, [{ id: grace, first_name: 'Grace', do_not_call: false, is_active: true, account_detail: { id: north, name: 'Northwind' } }])
    t.match(shown, { cases: [], invoices: [], tasks: [], comment_permission: true, tags: [{ id: vip, name: 'VIP' }] })
    t.ok(shown.users.length === 3 && shown.countries.length > 200)
    t.equal((await inject('GET', `/api/accounts/${north}/`, globex.admin.headers)).statusCode, 404, "another organization's admin")
  })

  t.test('the read model rebuilt from the log is identical', async (t) => {
    const live = await rebuildEqualsLive(t, { db: database.db, store }, accountsProjector, { tables: ['accounts'] })
    t.ok(live.accounts!.some((row) => row.annual_revenue === '99.90' && row.currency === 'EUR'))
  })
})
