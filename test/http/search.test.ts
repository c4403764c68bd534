import t from 'tap'
import { givenTwoOrganizations } from '../helpers/fixtures.ts'
import type { Headers } from '../helpers/fixtures.ts'
import { projectorNamed, rebuildEqualsLive } from '../helpers/read-models.ts'

// Search's read model over the kinds the manifests declare (src/modules/search.ts).
const searchProjector = projectorNamed('search')

type Hit = { type: string; id: string; title: string; subtitle: string }

t.test('global search: GET /api/search/ (issue 19)', async (t) => {
  const { app, database, store, acme, globex, alice, bob } = await givenTwoOrganizations(t)
  const admin = acme.admin.headers
  const post = async (headers: Headers, url: string, payload: object) => {
    const res = await app.inject({ method: 'POST', url, headers, payload })
    t.ok(res.statusCode === 200 || res.statusCode === 201, `${url} ${res.body}`)
    return res.json().id as string
  }
  const edit = async (url: string, payload: object) => t.equal((await app.inject({ method: 'PATCH', url, headers: admin, payload })).statusCode, 200, url)
  const search = async (headers: Headers, q: string, extra = '') => {
    const res = await app.inject({ url: `/api/search/?q=${encodeURIComponent(q)}${extra}`, headers })
    t.equal(res.statusCode, 200, res.body)
    return res.json() as { query: string; results: Hit[] }
  }
  const found = async (headers: Headers, q: string) => (await search(headers, q)).results.map((hit) => `${hit.type}:${hit.title}`)

  const widgets = await post(admin, '/api/accounts/', { name: 'Acme Widgets', email: 'sales@widgets.test', industry: 'RETAIL' })
  await post(admin, '/api/accounts/', { name: 'Northwind Traders' })
  const jane = await post(admin, '/api/contacts/', { first_name: 'Jane', last_name: 'Doe', email: 'jane@initech.test', organization: 'Initech' })
  const enquiry = await post(admin, '/api/leads/', { title: 'Website enquiry', first_name: 'Mary', last_name: 'Major', company_name: 'Vandelay Industries' })
  await post(admin, '/api/leads/', { first_name: 'Bert', last_name: 'Bob-assigned', assigned_to: [bob.profileId] })
  await post(alice.headers, '/api/leads/', { first_name: 'Alma', last_name: 'Alice-made', email: 'alma@vandelay.test' })
  const renewal = await post(admin, '/api/opportunities/', { name: 'Vandelay renewal', account: widgets, assigned_to: [alice.profileId] })
  const pilot = await post(admin, '/api/opportunities/', { name: 'Vandelay pilot' })
  await post(admin, '/api/cases/solutions/', { title: 'Reset a password', description: 'Open the Vandelay portal settings.' })
  const call = await post(admin, '/api/tasks/', { title: 'Call Vandelay', due_date: '2026-12-01', assigned_to: [bob.profileId] })
  await post(globex.admin.headers, '/api/accounts/', { name: 'Acme Widgets of Globex' })

  t.test("the original's shape; fewer than two characters find nothing", async (t) => {
    const answer = await search(admin, '  acme widgets ')
    t.same(answer, { query: 'acme widgets', results: [{ type: 'account', id: widgets, title: 'Acme Widgets', subtitle: 'sales@widgets.test' }, { type: 'deal', id: renewal, title: 'Vandelay renewal', subtitle: 'Acme Widgets' }] }, "a deal is found by its account's name, which is its subtitle")
    t.same(await search(admin, ' a '), { query: 'a', results: [] })
    t.same(await search(admin, ''), { query: '', results: [] })
    t.equal((await app.inject({ url: '/api/search/?q=x&limit=0', headers: admin })).statusCode, 400)
    t.equal((await app.inject({ url: `/api/search/?q=${'x'.repeat(201)}`, headers: admin })).statusCode, 400)
    t.equal((await app.inject({ url: '/api/search/?q=acme' })).statusCode, 401)
  })

  t.test('names by prefix first, then words anywhere, then fragments and typos (pg_trgm)', async (t) => {
    const vandelay = await found(admin, 'vandelay')
    t.same(vandelay.slice(0, 2), ['deal:Vandelay pilot', 'deal:Vandelay renewal'], 'names starting with it first, in name order')
    t.same(vandelay.slice(2).sort(), ['lead:Alma Alice-made', 'lead:Website enquiry', 'solution:Reset a password', 'task:Call Vandelay'], 'then other words: an email domain, a company, a description, a word of a name')
    t.match((await search(admin, 'call')).results, [{ type: 'task', id: call, subtitle: 'New · due 2026-12-01' }], "a task: its status and due date")
    t.same(await found(admin, 'mary maj'), ['lead:Website enquiry'], "a lead's person, every word a prefix")
    t.same(await found(admin, 'initech'), ['contact:Jane Doe'], 'an email domain or organization')
    t.same(await found(admin, 'thwind'), ['account:Northwind Traders'], 'a fragment of a name (trigrams)')
    t.same(await found(admin, 'northwnd'), ['account:Northwind Traders'], 'a typo (word similarity)')
    t.same(await found(admin, 'zzyzx'), [])
    t.same(await found(admin, "o'brien % _"), [], 'quotes and LIKE wildcards are text')
    t.equal((await search(admin, 'vandelay', '&limit=1')).results.filter((hit) => hit.type === 'deal').length, 1, 'limit: hits per kind')
  })

  t.test("each kind as the caller's list shows it; another organization sees nothing of Acme", async (t) => {
    t.same((await found(alice.headers, 'vandelay')).sort(), ['deal:Vandelay renewal', 'lead:Alma Alice-made', 'solution:Reset a password'], 'a member: the lead she made, the deal she is assigned; not the others')
    t.same(await found(bob.headers, 'bert'), ['lead:Bert Bob-assigned'], 'a lead assigned to him')
    t.same(await found(bob.headers, 'call vandelay'), ['task:Call Vandelay'], 'a task assigned to him')
    t.notOk((await found(alice.headers, 'call vandelay')).includes('task:Call Vandelay'), 'not a task of others')
    t.same(await found(bob.headers, 'jane'), ['contact:Jane Doe'], 'contacts, accounts and solutions are organization-wide')
    t.same(await found(globex.admin.headers, 'acme'), ['account:Acme Widgets of Globex'])
    t.same(await found(globex.admin.headers, 'vandelay'), [])
  })

  t.test('documents follow the records: edits, stage moves, task status, account renames, deletions', async (t) => {
    await edit(`/api/accounts/${widgets}/`, { name: 'Widgetworks' })
    t.match((await search(admin, 'renewal')).results, [{ id: renewal, subtitle: 'Widgetworks' }])
    t.same(await found(admin, 'widgetworks'), ['account:Widgetworks', 'deal:Vandelay renewal'])
    await edit(`/api/opportunities/${pilot}/`, { stage: 'QUALIFICATION' })
    t.match((await search(admin, 'pilot')).results, [{ id: pilot, subtitle: 'QUALIFICATION' }], 'a deal without an account shows its stage')
    await edit(`/api/tasks/${call}/`, { status: 'Completed' })
    t.match((await search(admin, 'call')).results, [{ id: call, subtitle: 'Completed · due 2026-12-01' }])
    await edit(`/api/opportunities/${renewal}/`, { assigned_to: [bob.profileId] })
    t.notOk((await found(alice.headers, 'renewal')).includes('deal:Vandelay renewal'), 'reassigned: no longer found by the member it left')
    t.ok((await found(bob.headers, 'renewal')).includes('deal:Vandelay renewal'), 'found by its new assignee, by a word')
    t.ok((await found(bob.headers, 'vandelay renewl')).includes('deal:Vandelay renewal'), 'and by a typo (the trigram tier and its viewers column)')
    t.notOk((await found(alice.headers, 'vandelay renewl')).includes('deal:Vandelay renewal'), 'not by a typo either, for the member it left')
    await edit(`/api/leads/${enquiry}/`, { title: 'Trade show' })
    t.same(await found(admin, 'trade show'), ['lead:Trade show'])
    t.equal((await app.inject({ method: 'DELETE', url: `/api/contacts/${jane}/`, headers: admin })).statusCode, 200)
    t.same(await found(admin, 'jane'), [])
  })

  t.test('the read model rebuilt from the log is identical, batched or one event at a time', async (t) => {
    // The parent table holds every partition's rows.
    const live = await rebuildEqualsLive(t, { db: database.db, store }, searchProjector, { tables: ['search_documents'], oneByOne: true })
    t.equal(live.search_documents!.length, 10)
  })
})
