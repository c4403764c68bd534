import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import t from 'tap'
import { leadStreams } from '../../src/commands/lead/lead.ts'
import { collectionClient, givenTwoOrganizations } from '../helpers/fixtures.ts'
import type { Headers } from '../helpers/fixtures.ts'
import { multipartBody as multipart } from '../helpers/multipart.ts'

const BASE = '/api/leads/'
t.test('leads: list envelope and every filter (§4.1)', async (t) => {
  const { app, database, acme, globex, alice, bob } = await givenTwoOrganizations(t)
  const admin = acme.admin.headers
  const leads = collectionClient(app, BASE)
  const create = async (payload: object, headers: Headers = admin) => {
    const res = await leads.create(headers, payload)
    t.equal(res.statusCode, 200, res.body)
    return res.json().id as string
  }
  const field = await leads.inject('POST', '/api/custom-fields/', admin, { module: 'leads', key: 'tier', label: 'Tier', type: 'select', options: ['gold', 'silver'] })
  t.equal(field.statusCode, 201, field.body)
  const tag = (await leads.inject('POST', '/api/tags/', admin, { name: 'hot' })).json().id as string
  const tag2 = (await leads.inject('POST', '/api/tags/', admin, { name: 'cold' })).json().id as string
  const ann = await create({ salutation: 'Dr', first_name: 'Ann', last_name: 'Archer', email: 'ann@initech.test', company_name: 'Initech', city: 'Austin', source: 'call', rating: 'hot', status: 'in process', tags: [tag], assigned_to: [alice.profileId], close_date: '2026-12-01', cf_tier: 'gold' })
  const ben = await create({ salutation: 'Mr', first_name: 'Ben', last_name: 'Baker', email: 'ben@globo.test', company_name: 'Globo', city: 'Boston', source: 'compaign', rating: 'COLD', tags: [tag2], assigned_to: [bob.profileId], close_date: '2027-01-15' })
  const cid = await create({ first_name: 'Cid', last_name: 'Cole', status: 'closed', company_name: 'Acme Corp', source: 'other' })
  await create({ first_name: 'Dot', last_name: 'Dunn', status: 'recycled', email: 'dot@initech.test' }, alice.headers)
  await create({ first_name: 'Ext' }, globex.admin.headers)
  // Ann was created a while ago, and not worked since.
  await sql`UPDATE leads SET created_at = '2026-11-01T10:00:00Z', worked_at = '2026-11-01T10:00:00Z' WHERE id = ${ann}`.execute(database.db)
  await sql`UPDATE leads SET created_at = '2026-11-22T10:00:00Z' WHERE first_name = 'Dot'`.execute(database.db)

  const names = async (query: string, headers: Headers = admin) => {
    const body = await leads.list(headers, query)
    return [...body.open_leads.open_leads, ...body.close_leads.close_leads].map((l: { first_name: string }) => l.first_name).sort()
  }

  t.test('the envelope: open_leads, close_leads (closed and converted), totals', async (t) => {
    const body = await leads.list(admin)
    t.same(Object.keys(body).sort(), ['close_leads', 'open_leads', 'totals'])
    t.same(Object.keys(body.open_leads).sort(), ['leads_count', 'offset', 'open_leads'])
    t.same(Object.keys(body.close_leads).sort(), ['close_leads', 'leads_count', 'offset'])
    t.match(body.open_leads, { leads_count: 3, offset: null })
    t.match(body.close_leads, { leads_count: 1, offset: null, close_leads: [{ id: cid, status: 'closed' }] })
    t.same(body.totals, { count: 4, unworked_over_a_week: 1 }, 'Ann has seen no event for three weeks')
    t.same(body.open_leads.open_leads.map((l: { first_name: string }) => l.first_name), ['Dot', 'Ben', 'Ann'], 'newest first')
    t.match(body.open_leads.open_leads[2], { id: ann, status: 'in process', source: 'call', rating: 'HOT', tags: [{ id: tag, name: 'hot' }], assigned_to: [{ id: alice.profileId }], close_date: '2026-12-01', custom_fields: { tier: 'gold' }, conversion: null, account: null })
    const page = await leads.list(admin, '?limit=2')
    t.match(page.open_leads, { leads_count: 3, offset: 2 })
    t.equal(page.open_leads.open_leads.length, 2)
    t.match((await leads.list(admin, '?limit=2&offset=2')).open_leads, { leads_count: 3, offset: null, open_leads: [{ first_name: 'Ann' }] })
  })

  t.test('a non-admin sees only leads they created or are assigned to', async (t) => {
    t.same(await names('', alice.headers), ['Ann', 'Dot'])
    t.same(await names('', bob.headers), ['Ben'])
    t.same((await leads.list(bob.headers)).totals, { count: 1, unworked_over_a_week: 0 })
    t.same(await names('', globex.admin.headers), ['Ext'])
  })

  t.test('each filter, matching and not', async (t) => {
    const cases: [string, string[]][] = [
      ['?name=ar', ['Ann']],
      ['?name=BAK', ['Ben']],
      ['?name=initech', []],
      ['?salutation=d', ['Ann']],
      ['?salutation=mrs', []],
      ['?source=call', ['Ann']],
      ['?source=compaign', ['Ben']],
      ['?source=CALL', []],
      ['?source=campaign', []],
      ['?status=in%20process', ['Ann']],
      ['?status=closed', ['Cid']],
      ['?status=assigned&status=recycled', ['Ben', 'Dot']],
      ['?status=open', []],
      ['?status=Closed', []],
      [`?assigned_to=${alice.profileId}`, ['Ann']],
      [`?assigned_to=${alice.profileId}&assigned_to=${bob.profileId}`, ['Ann', 'Ben']],
      [`?assigned_to=${randomUUID()}`, []],
      ['?assigned_to=nobody', []],
      [`?tags=${tag}`, ['Ann']],
      [`?tags=${tag}&tags=${tag2}`, ['Ann', 'Ben']],
      ['?tags=x', []],
      ['?city=bost', ['Ben']],
      ['?city=paris', []],
      ['?email=INITECH', ['Ann', 'Dot']],
      ['?email=nowhere', []],
      ['?rating=hot', ['Ann']],
      ['?rating=HOT', ['Ann']],
      // Ben was created with rating COLD, as the original's clients send it.
      ['?rating=cold', ['Ben']],
      ['?rating=lukewarm', []],
      ['?search=initech', ['Ann', 'Dot']],
      ['?search=acme', ['Cid']],
      ['?search=cole', ['Cid']],
      ['?search=ben@', ['Ben']],
      ['?search=zzz', []],
      ['?created_at__gte=2026-11-22', ['Ben', 'Cid', 'Dot']],
      ['?created_at__lte=2026-11-01', ['Ann']],
      ['?created_at__lte=2026-10-31', []],
      ['?created_at__gte=yesterday', []],
      ['?close_date__gte=2026-12-01', ['Ann', 'Ben']],
      ['?close_date__lte=2026-12-01', ['Ann']],
      ['?close_date__gte=2027-02-01', []],
      ['?close_date__lte=2026-13-45', []],
      ['?cf_tier=gold', ['Ann']],
      ['?cf_tier=silver', []],
      ['?cf_nope=x', []],
      ['?tags=&status=&name=', ['Ann', 'Ben', 'Cid', 'Dot']],
    ]
    for (const [query, expected] of cases) t.same(await names(query), expected, query)
    const filtered = await leads.list(admin, '?status=in%20process&status=closed')
    t.same(filtered.totals, { count: 2, unworked_over_a_week: 1 }, 'totals follow the filters')
    t.match(filtered, { open_leads: { leads_count: 1 }, close_leads: { leads_count: 1 } })
  })

  t.test('a comment works a lead', async (t) => {
    t.equal((await leads.inject('POST', `${BASE}${ann}/`, admin, { comment: 'Called' })).statusCode, 200)
    t.equal((await leads.list(admin)).totals.unworked_over_a_week, 0)
    t.ok(ben)
  })
})

t.test('leads: create, detail, PUT, PATCH, DELETE; access rules like deals', async (t) => {
  const { app, store, database, acme, globex, alice, bob } = await givenTwoOrganizations(t)
  const admin = acme.admin.headers
  const leads = collectionClient(app, BASE)
  const { inject } = leads
  const createOk = async (payload: object, headers: Headers = admin) => {
    const res = await leads.create(headers, payload)
    t.equal(res.statusCode, 200, res.body)
    return res.json().id as string
  }
  const globexTag = (await inject('POST', '/api/tags/', globex.admin.headers, { name: 'x' })).json().id as string

  t.test('create answers {error, message, id}; detail is {lead_obj, attachments, comments, users_mention, assigned_data, users, custom_field_definitions}', async (t) => {
    const res = await leads.create(alice.headers, { first_name: 'Ann', email: 'Ann@Initech.test', assigned_to: [bob.profileId], opportunity_amount: '1200.5', probability: 40, account: randomUUID(), id: randomUUID() })
    t.equal(res.statusCode, 200, res.body)
    t.same(Object.keys(res.json()).sort(), ['error', 'id', 'message'])
    const detail = await leads.detail(alice.headers, res.json().id)
    t.same(Object.keys(detail).sort(), ['assigned_data', 'attachments', 'comments', 'custom_field_definitions', 'lead_obj', 'users', 'users_mention'])
    t.same(detail.users.map((u: { role: string; user_details: { email: string } }) => [u.role, u.user_details.email]), [['ADMIN', 'admin@acme.test']], 'a non-admin is offered the admins as assignees, as the original does')
    t.same(detail.custom_field_definitions, [], 'no custom field for leads defined yet (the phone harness reads one back)')
    t.match(detail.lead_obj, { id: res.json().id, first_name: 'Ann', email: 'Ann@Initech.test', status: 'assigned', opportunity_amount: '1200.50', probability: 40, account: null, created_by: { id: alice.profileId }, created_on_arrow: 'just now' })
    t.same(detail.assigned_data, [{ id: bob.profileId, name: 'bob@acme.test' }])
    t.same(detail.users_mention, [{ user__email: 'alice@acme.test' }], 'a non-admin: only the creator')
    t.equal((await leads.detail(admin, res.json().id)).users_mention.length, 3, 'an admin: every active member')
    t.same(detail.comments, [])
  })

  t.test('validation: 400 naming the field', async (t) => {
    for (const [payload, key] of [[{}, 'first_name'], [{ first_name: 'X', status: 'open' }, 'status'], [{ first_name: 'X', source: 'CALL' }, 'source'], [{ first_name: 'X', rating: 'tepid' }, 'rating'], [{ first_name: 'X', email: 'nope' }, 'email'], [{ first_name: 'X', probability: 101 }, 'probability'], [{ first_name: 'X', close_date: '01/12/2026' }, 'close_date'], [{ first_name: 'X', tags: [globexTag] }, 'tags'], [{ first_name: 'X', assigned_to: ['not-a-uuid'] }, 'assigned_to']] as const) {
      const res = await leads.create(admin, payload)
      t.equal(res.statusCode, 400, `${JSON.stringify(payload)}: ${res.body}`)
      t.ok(res.json().error === true && key in res.json().errors, `names ${key}`)
    }
  })

  t.test('email is unique per organization, case-insensitively; 5 concurrent creates: 1 wins', async (t) => {
    const id = await createOk({ first_name: 'Uma', email: 'uma@initech.test' })
    t.match((await leads.create(alice.headers, { first_name: 'Other', email: 'UMA@initech.TEST' })).json(), { error: true, errors: { email: [String] } })
    await createOk({ first_name: 'Uma', email: 'uma@initech.test' }, globex.admin.headers)
    const other = await createOk({ first_name: 'Vic', email: 'vic@initech.test' })
    t.equal((await inject('PATCH', `${BASE}${other}/`, admin, { email: 'Uma@initech.test' })).statusCode, 400, 'a change to a taken email')
    t.equal((await inject('DELETE', `${BASE}${id}/`, admin)).statusCode, 200)
    t.equal((await inject('PATCH', `${BASE}${other}/`, admin, { email: 'Uma@initech.test' })).statusCode, 200, 'free after the delete')
    t.equal((await leads.create(admin, { first_name: 'Vic2', email: 'vic@initech.test' })).statusCode, 200, 'the old email is free after the change')
    const results = await Promise.all(Array.from({ length: 5 }, (_, i) => leads.create(admin, { first_name: `Race ${i}`, email: 'Race@Initech.test' })))
    t.same(results.map((r) => r.statusCode).sort(), [200, 400, 400, 400, 400], results.map((r) => r.body).join('\n'))
    for (const loser of results.filter((r) => r.statusCode === 400)) t.match(loser.json(), { error: true, errors: { email: [String] } })
    t.equal((await leads.list(admin, '?email=race@')).totals.count, 1)
  })

  t.test('PUT replaces (keeping status), PATCH merges', async (t) => {
    const id = await createOk({ first_name: 'Pat', city: 'Paris', status: 'in process', assigned_to: [alice.profileId] })
    t.same((await inject('PATCH', `${BASE}${id}/`, admin, { city: 'Lyon' })).json(), { error: false, message: 'Lead updated' })
    t.match((await leads.detail(admin, id)).lead_obj, { city: 'Lyon', status: 'in process', assigned_to: [{ id: alice.profileId }] })
    t.equal((await inject('PUT', `${BASE}${id}/`, admin, { first_name: 'Pat' })).statusCode, 200)
    t.match((await leads.detail(admin, id)).lead_obj, { city: null, status: 'in process', assigned_to: [] })
    t.equal((await inject('PATCH', `${BASE}${id}/`, admin, { status: 'closed' })).statusCode, 200)
    t.equal((await inject('PATCH', `${BASE}${id}/`, admin, { status: 'assigned' })).statusCode, 200, 'a closed lead reopens')
    t.same((await store.readStream(leadStreams.stream(id))).map((e) => e.type), ['LeadCreated', 'LeadUpdated', 'LeadUpdated', 'LeadUpdated', 'LeadUpdated'])
  })

  t.test("the web app's lead form (issue 22): job_title and industry stored and answered; title stays an alias of job_title", async (t) => {
    // What the original's create form sends: every editable field, blanks as null, the amount as a number.
    const id = await createOk({ first_name: 'Jo', last_name: 'Jobs', job_title: 'VP of Sales', company_name: 'Initech', email: null, phone: null, website: null, status: 'assigned', source: null, industry: 'SOFTWARE', opportunity_amount: 2500, description: null, assigned_to: [] })
    t.match((await leads.detail(admin, id)).lead_obj, { job_title: 'VP of Sales', title: 'VP of Sales', industry: 'SOFTWARE', opportunity_amount: '2500.00', currency: 'USD' }, "an amount without a currency: the organization's default")
    t.equal((await inject('PATCH', `${BASE}${id}/`, admin, { job_title: 'CTO', industry: null })).statusCode, 200)
    t.match((await leads.detail(admin, id)).lead_obj, { job_title: 'CTO', title: 'CTO', industry: null })
    t.equal((await inject('PATCH', `${BASE}${id}/`, admin, { title: 'CFO' })).statusCode, 200, 'the old name still writes')
    t.match((await leads.detail(admin, id)).lead_obj, { job_title: 'CFO' })
    t.equal((await inject('PATCH', `${BASE}${id}/`, admin, { title: 'ignored', job_title: 'COO' })).statusCode, 200)
    t.match((await leads.detail(admin, id)).lead_obj, { job_title: 'COO', title: 'COO' }, 'job_title wins')
    const listed = (await leads.list(admin)).open_leads.open_leads.find((l: { id: string }) => l.id === id)
    t.match(listed, { job_title: 'COO', industry: null, currency: 'USD' })
    const noAmount = await createOk({ first_name: 'No amount' })
    t.match((await leads.detail(admin, noAmount)).lead_obj, { opportunity_amount: null, currency: null }, 'no amount, no currency')
    t.equal((await inject('PATCH', `${BASE}${noAmount}/`, admin, { opportunity_amount: '10' })).statusCode, 200)
    t.match((await leads.detail(admin, noAmount)).lead_obj, { currency: 'USD' }, 'setting an amount stamps the default')
    t.equal((await inject('PATCH', `${BASE}${noAmount}/`, admin, { currency: 'eur' })).statusCode, 200)
    t.match((await leads.detail(admin, noAmount)).lead_obj, { currency: 'EUR' })
    t.equal((await inject('PATCH', `${BASE}${noAmount}/`, admin, { currency: 'XYZ' })).statusCode, 400)
  })

  t.test('a first or a last name will do, as the web app\'s form says; neither is 400 on first_name', async (t) => {
    const id = await createOk({ first_name: null, last_name: 'Onlylast', email: 'onlylast@initech.test' })
    t.match((await leads.detail(admin, id)).lead_obj, { first_name: '', last_name: 'Onlylast' })
    for (const payload of [{ first_name: '', last_name: null }, { first_name: null }, { last_name: '  ' }]) {
      const res = await leads.create(admin, payload)
      t.equal(res.statusCode, 400, JSON.stringify(payload))
      t.match(res.json(), { error: true, errors: { first_name: [String] } })
    }
    const cleared = await inject('PATCH', `${BASE}${id}/`, admin, { last_name: null })
    t.equal(cleared.statusCode, 400, 'a change that would leave no name')
    t.match(cleared.json(), { errors: { first_name: [String] } })
    t.equal((await inject('PATCH', `${BASE}${id}/`, admin, { first_name: 'Now', last_name: null })).statusCode, 200, 'one for the other')
    t.equal((await inject('PATCH', `${BASE}${id}/`, admin, { first_name: null, last_name: 'Back' })).statusCode, 200)
    const converted = await inject('PATCH', `${BASE}${id}/`, admin, { status: 'converted' })
    t.equal(converted.statusCode, 200, converted.body)
    t.match((await inject('GET', `/api/contacts/${converted.json().contact_id}/`, admin)).json(), { contact_obj: { first_name: 'Back', last_name: null } }, 'its contact is named by the last name')
  })

  t.test('404 and 403 as for deals', async (t) => {
    const id = await createOk({ first_name: 'Alice lead', assigned_to: [bob.profileId] }, alice.headers)
    const carol = await acme.addMember('carol@acme.test')
    for (const [method, url, payload] of [['GET', `${BASE}${id}/`], ['PUT', `${BASE}${id}/`, { first_name: 'x' }], ['PATCH', `${BASE}${id}/`, { first_name: 'x' }], ['DELETE', `${BASE}${id}/`], ['POST', `${BASE}${id}/`, { comment: 'x' }]] as const) {
      t.equal((await inject(method, url, carol.headers, payload)).statusCode, 403, `${method} by a stranger`)
      const other = await inject(method, url, globex.admin.headers, payload)
      t.equal(other.statusCode, 404, `${method} from another org`)
      t.match(other.json(), { error: true, errors: String })
    }
    t.equal((await inject('GET', `${BASE}${randomUUID()}/`, admin)).statusCode, 404)
    t.equal((await inject('GET', `${BASE}not-a-uuid/`, admin)).statusCode, 404)
    t.equal((await inject('PATCH', `${BASE}${id}/`, bob.headers, { city: 'by the assignee' })).statusCode, 200)
    t.equal((await inject('DELETE', `${BASE}${id}/`, bob.headers)).statusCode, 403, 'an assignee may not delete')
    await sql`UPDATE users SET is_superuser = true WHERE id = ${carol.userId}`.execute(database.db)
    t.same((await inject('DELETE', `${BASE}${id}/`, carol.headers)).json(), { error: false, message: 'Lead deleted' }, 'a superuser may')
    t.equal((await inject('GET', `${BASE}${id}/`, admin)).statusCode, 404, 'a deleted lead is gone')
  })
})

t.test('conversion (§3.3): PATCH status converted creates account, contact and deal', async (t) => {
  const { app, store, acme, alice } = await givenTwoOrganizations(t)
  const admin = acme.admin.headers
  const leads = collectionClient(app, BASE)
  const { inject } = leads
  const tag = (await inject('POST', '/api/tags/', admin, { name: 'hot' })).json().id as string

  t.test('answers the ids; the records exist, linked both ways; events recorded', async (t) => {
    const id = (await leads.create(alice.headers, { first_name: 'Ann', last_name: 'Archer', title: 'CTO', email: 'ann@initech.test', phone: '555', company_name: 'Initech', industry: 'SOFTWARE', city: 'Austin', source: 'compaign', opportunity_amount: 5000, currency: 'EUR', probability: 30, tags: [tag], assigned_to: [alice.profileId] })).json().id as string
    const res = await inject('PATCH', `${BASE}${id}/`, alice.headers, { status: 'converted' })
    t.equal(res.statusCode, 200, res.body)
    const { account_id, contact_id, opportunity_id } = res.json()
    t.match(res.json(), { error: false, message: 'Lead converted', account_id: /^[0-9a-f-]{36}$/, contact_id: /^[0-9a-f-]{36}$/, opportunity_id: /^[0-9a-f-]{36}$/ })
    t.match((await inject('GET', `/api/accounts/${account_id}/`, admin)).json(), { account_obj: { name: 'Initech', email: 'ann@initech.test', industry: 'SOFTWARE', city: 'Austin', tags: [{ id: tag, name: 'hot' }] } })
    t.match((await inject('GET', `/api/contacts/${contact_id}/`, admin)).json(), { contact_obj: { first_name: 'Ann', last_name: 'Archer', title: 'CTO', email: 'ann@initech.test', account: account_id } })
    t.match((await inject('GET', `/api/opportunities/${opportunity_id}/`, admin)).json().opportunity_obj, { name: 'Initech', account: { id: account_id }, contacts: [{ id: contact_id }], amount: '5000.00', currency: 'EUR', probability: 30, lead_source: 'CAMPAIGN', stage: 'PROSPECTING', created_by: { id: alice.profileId } })
    const lead = (await leads.detail(alice.headers, id)).lead_obj
    t.match(lead, { status: 'converted', account: { id: account_id, name: 'Initech' }, contacts: [{ id: contact_id }], conversion: { account_id, contact_id, opportunity_id, converted_by: { id: alice.profileId } } })
    t.same((await store.readStream(leadStreams.stream(id))).map((e) => e.type), ['LeadCreated', 'LeadConverted'])
    t.match((await leads.list(admin, '?status=converted')).close_leads, { leads_count: 1, close_leads: [{ id }] }, 'a converted lead is in close_leads')

    const twice = await inject('PATCH', `${BASE}${id}/`, alice.headers, { status: 'converted' })
    t.match({ status: twice.statusCode, body: twice.json() }, { status: 400, body: { error: true, errors: { status: [String] } } }, 'converting twice')
    t.match((await inject('PATCH', `${BASE}${id}/`, alice.headers, { status: 'assigned' })).json(), { errors: { status: [String] } }, 'conversion cannot be undone')
    t.equal((await leads.inject('GET', '/api/opportunities/?name=Initech', admin)).json().opportunities_count, 1, 'nothing more was created')
  })

  t.test('needs an email: 400, nothing created', async (t) => {
    const id = (await leads.create(admin, { first_name: 'Nomail', company_name: 'Nomail Inc' })).json().id as string
    const res = await inject('PATCH', `${BASE}${id}/`, admin, { status: 'converted' })
    t.match({ status: res.statusCode, body: res.json() }, { status: 400, body: { error: true, errors: { email: [String] } } })
    t.equal((await inject('GET', '/api/accounts/?name=Nomail', admin)).json().count, 0)
    t.equal((await leads.detail(admin, id)).lead_obj.status, 'assigned')
  })

  t.test('created directly as converted', async (t) => {
    const res = await leads.create(admin, { first_name: 'Dee', email: 'dee@umbrella.test', company_name: 'Umbrella', status: 'converted' })
    t.equal(res.statusCode, 200, res.body)
    t.match(res.json(), { error: false, id: String, account_id: String, contact_id: String, opportunity_id: String })
    t.match((await leads.detail(admin, res.json().id)).lead_obj, { status: 'converted', account: { id: res.json().account_id } })
  })

  t.test('a taken account name refuses the conversion and undoes what it created', async (t) => {
    await inject('POST', '/api/accounts/', admin, { name: 'Taken Co' })
    const id = (await leads.create(admin, { first_name: 'Tom', email: 'tom@taken.test', company_name: 'Taken Co' })).json().id as string
    const res = await inject('PATCH', `${BASE}${id}/`, admin, { status: 'converted' })
    t.match({ status: res.statusCode, body: res.json() }, { status: 400, body: { errors: { company_name: [String] } } })
    t.equal((await inject('GET', '/api/contacts/?search=tom@taken', admin)).json().count, 0)
    const deal = await inject('POST', '/api/opportunities/', admin, { name: 'Deal before' })
    t.equal(deal.statusCode, 200)
    await inject('POST', '/api/opportunities/', admin, { name: 'Clash Co' })
    const clash = (await leads.create(admin, { first_name: 'Cy', email: 'cy@clash.test', company_name: 'Clash Co' })).json().id as string
    const refused = await inject('PATCH', `${BASE}${clash}/`, admin, { status: 'converted' })
    t.equal(refused.statusCode, 400, 'a taken deal name')
    t.equal((await inject('GET', '/api/accounts/?name=Clash', admin)).json().count, 0, 'the account was deleted again')
    t.equal((await inject('GET', '/api/contacts/?search=cy@clash', admin)).json().count, 0, 'and the contact')
    t.equal((await inject('POST', '/api/accounts/', admin, { name: 'Clash Co' })).statusCode, 200, 'its name is free again')
  })
})

t.test('lead bodies: multipart with lead_attachment; comments and attachments', async (t) => {
  const { app, acme, globex, alice, bob } = await givenTwoOrganizations(t)
  const admin = acme.admin.headers
  const leads = collectionClient(app, BASE)
  const { inject } = leads
  const send = (method: 'POST' | 'PATCH', url: string, body: { payload: Buffer; contentType: string }, headers: Headers = admin) => app.inject({ method, url, headers: { ...headers, 'content-type': body.contentType }, payload: body.payload })

  t.test('multipart: fields and a file in one request', async (t) => {
    const res = await send('POST', BASE, await multipart({ first_name: 'Multi', probability: '20', assigned_to: alice.profileId, lead_attachment: { name: '../brief v1.txt', type: 'text/plain', content: 'the brief' } }))
    t.equal(res.statusCode, 200, res.body)
    const detail = await leads.detail(admin, res.json().id)
    t.match(detail.lead_obj, { first_name: 'Multi', probability: 20, assigned_to: [{ id: alice.profileId }] })
    t.match(detail.attachments, [{ file_name: 'brief v1.txt', content_type: 'text/plain', size: 9, created_by: { id: acme.admin.profileId }, download_url: String }])
    const download = await inject('GET', detail.attachments[0].download_url, alice.headers)
    t.equal(download.body, 'the brief')
    t.equal((await inject('GET', detail.attachments[0].download_url, bob.headers)).statusCode, 403, 'whoever may not see the lead')
    t.equal((await inject('DELETE', `${BASE}attachment/${detail.attachments[0].id}/`, alice.headers)).statusCode, 403, 'only the uploader or an admin')
    t.equal((await inject('DELETE', `${BASE}attachment/${detail.attachments[0].id}/`, globex.admin.headers)).statusCode, 404)
    t.equal((await inject('DELETE', `${BASE}attachment/${detail.attachments[0].id}/`, admin)).statusCode, 200)
    t.same((await leads.detail(admin, res.json().id)).attachments, [])
  })

  t.test('comments: add by POST /{id}/, edit or delete at comment/{id}/ by author or admin', async (t) => {
    const id = (await leads.create(alice.headers, { first_name: 'Noted', assigned_to: [bob.profileId] })).json().id as string
    const added = await inject('POST', `${BASE}${id}/`, bob.headers, { comment: 'Called them' })
    t.equal(added.statusCode, 200, added.body)
    t.match(added.json(), { lead_obj: { id }, attachments: [], comments: [{ comment: 'Called them', commented_by: { id: bob.profileId } }] })
    const commentId = added.json().comments[0].id as string
    t.equal((await inject('POST', `${BASE}${id}/`, bob.headers, {})).statusCode, 400, 'nothing to add')
    t.equal((await inject('PUT', `${BASE}comment/${commentId}/`, alice.headers, { comment: 'x' })).statusCode, 403, 'not the author')
    t.equal((await inject('PATCH', `${BASE}comment/${commentId}/`, bob.headers, { comment: ' ' })).statusCode, 400, 'blank')
    t.equal((await inject('PATCH', `${BASE}comment/${commentId}/`, globex.admin.headers, { comment: 'x' })).statusCode, 404, 'another org')
    t.same((await inject('PATCH', `${BASE}comment/${commentId}/`, bob.headers, { comment: 'Called them twice' })).json(), { error: false, message: 'Comment updated' })
    t.match((await leads.detail(alice.headers, id)).comments, [{ comment: 'Called them twice' }])
    t.equal((await inject('DELETE', `${BASE}comment/${commentId}/`, alice.headers)).statusCode, 403)
    t.equal((await inject('DELETE', `${BASE}comment/${commentId}/`, admin)).statusCode, 200, 'an admin may')
    t.equal((await inject('DELETE', `${BASE}comment/${commentId}/`, admin)).statusCode, 404, 'gone')
    t.same((await leads.detail(alice.headers, id)).comments, [])
  })
})
