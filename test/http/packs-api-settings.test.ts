import t from 'tap'
import { nameBasedId } from '../../src/commands/name-based-id.ts'
import { hashSecret } from '../../src/identity/secrets.ts'
import { apiSettingsProjector } from '../../src/projections/api-setting/api-settings.ts'
import { buildTestApp } from '../helpers/app.ts'
import { givenOrganization } from '../helpers/identity.ts'
import { rebuildEqualsLive } from '../helpers/read-models.ts'

type Headers = Record<string, string>

t.test('/api/packs/ and /api/api-settings/', async (t) => {
  const { app, database, store } = await buildTestApp(t)
  const acme = await givenOrganization(app, database.db, 'Acme')
  const globex = await givenOrganization(app, database.db, 'Globex')
  const alice = await acme.addMember('alice@acme.test')
  const gina = await globex.addMember('gina@globex.test')
  const admin = acme.admin.headers
  const call = (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, headers: Headers = admin, payload?: object) => app.inject({ method, url, headers, ...(payload && { payload }) })
  const names = async (path: string, field: string, headers: Headers = admin) => ((await call('GET', `${path}?limit=100`, headers)).json().results as Record<string, string>[]).map((row) => row[field]).sort()
  /** The id a pack's item gets in an organization's `generation`th application. */
  const sampleId = (orgId: string, pack: string, generation: number, key: string) => nameBasedId(`sample-data:${orgId}:${pack}:${generation}:${key}`)

  t.test('GET /api/packs/ lists the packs to any member', async (t) => {
    const res = await call('GET', '/api/packs/', alice.headers)
    t.equal(res.statusCode, 200)
    t.same(res.json().packs.map((p: { id: string }) => p.id), ['professional-services', 'software-sales'], 'by name')
    t.match(res.json().packs[0], { name: 'Professional services', description: String, version: 1 })
  })

  t.test('apply: admins only, an unknown pack is 404, and the records are created by their own modules', async (t) => {
    t.equal((await call('POST', '/api/packs/professional-services/apply/', alice.headers)).statusCode, 403)
    t.equal((await call('POST', '/api/packs/nope/apply/')).statusCode, 404)
    const res = await call('POST', '/api/packs/professional-services/apply/')
    t.equal(res.statusCode, 200, res.body)
    const { report } = res.json()
    t.equal(report.created.length, 10)
    t.same(report.skipped, [])
    t.match(report.created, [{ type: 'sample_account', name: 'Lumen Analytics (sample)' }])
    t.same(await names('/api/accounts/', 'name'), ['Harbor & Finch Legal (sample)', 'Lumen Analytics (sample)'])
    const accounts = (await call('GET', '/api/accounts/?limit=100')).json().results as { tags: { name: string }[] }[]
    t.ok(accounts.every((account) => account.tags.some((tag) => tag.name === 'Sample data')), 'each sample record carries the Sample data tag')
    t.same(await names('/api/contacts/', 'first_name'), ['Ines', 'Tom'])
    t.same(await names('/api/tasks/', 'title'), ['Call Ravi about the quote (sample)', 'Send the Lumen proposal (sample)'])
    const lead = (await call('GET', `/api/leads/${sampleId(acme.orgId, 'professional-services', 0, 'lead:orchard')}/`)).json()
    t.match(lead, { lead_obj: { first_name: 'Ravi', email: 'ravi.menon@orchardhealth.example.com' } }, "ids are derived from the organization, the pack, the application and the item")
    const deal = await call('GET', `/api/opportunities/${sampleId(acme.orgId, 'professional-services', 0, 'deal:lumen-reporting')}/`)
    t.equal(deal.statusCode, 200, deal.body)
    t.equal((await call('GET', `/api/opportunities/${sampleId(acme.orgId, 'professional-services', 0, 'deal:lumen-reporting')}/`, alice.headers)).statusCode, 403, 'sample records follow the visibility policy like any other (the admin created them)')

    const again = (await call('POST', '/api/packs/professional-services/apply/')).json().report
    t.same(again.created, [])
    t.match(again.skipped, [{ type: 'sample_data', name: 'professional-services' }], 'while sample data is present another apply adds nothing')
    t.match((await call('POST', '/api/packs/software-sales/apply/')).json().report.skipped, [{ type: 'sample_data' }], 'not even another pack')
    t.equal((await names('/api/accounts/', 'name')).length, 2)
  })

  t.test('an item whose name is taken is skipped; concurrent applies create each record once', async (t) => {
    const G = globex.admin.headers
    t.equal((await call('POST', '/api/accounts/', G, { name: 'Northwind Logistics (sample)' })).statusCode < 300, true)
    const [first, second] = await Promise.all([call('POST', '/api/packs/software-sales/apply/', G), call('POST', '/api/packs/software-sales/apply/', G)])
    t.equal(first.statusCode, 200, first.body)
    t.equal(second.statusCode, 200, second.body)
    const skipped = [...first.json().report.skipped, ...second.json().report.skipped].filter((item: { type: string }) => item.type === 'sample_account')
    t.match(skipped[0], { name: 'Northwind Logistics (sample)', reason: /could not be created/ })
    t.same(await names('/api/accounts/', 'name', G), ['Kestrel Foods (sample)', 'Northwind Logistics (sample)'], 'one of each name: the user\'s and the pack\'s other account')
    t.same(await names('/api/tasks/', 'title', G), ['Demo for Pinecrest (sample)', 'Review Northwind trial usage (sample)'])
    const anouk = (await call('GET', `/api/contacts/${sampleId(globex.orgId, 'software-sales', 0, 'contact:anouk')}/`, G)).json()
    t.equal(anouk.contact_obj.account, null, 'a contact of a skipped account has none, never the user\'s account of that name')
  })

  t.test('DELETE sample-data/ removes exactly what the packs created, keeping what real work points at', async (t) => {
    const lumen = sampleId(acme.orgId, 'professional-services', 0, 'account:lumen')
    const orchard = sampleId(acme.orgId, 'professional-services', 0, 'lead:orchard')
    const realDeal = (await call('POST', '/api/opportunities/', admin, { name: 'Real deal', account: lumen })).json().id
    const realTask = (await call('POST', '/api/tasks/', admin, { title: 'Real task', lead: orchard })).json().id
    await call('POST', '/api/accounts/', admin, { name: 'Real account' })
    t.equal((await call('DELETE', '/api/packs/sample-data/', alice.headers)).statusCode, 403)
    const res = await call('DELETE', '/api/packs/sample-data/')
    t.equal(res.statusCode, 200, res.body)
    t.same(res.json(), { deleted: 8, deleted_by_type: { sample_task: 2, sample_lead: 1, sample_deal: 2, sample_contact: 2, sample_account: 1 }, retained_by_type: { sample_lead: 1, sample_account: 1 } })
    t.same(await names('/api/accounts/', 'name'), ['Lumen Analytics (sample)', 'Real account'])
    t.same(await names('/api/tasks/', 'title'), ['Real task'])
    t.equal((await call('GET', `/api/opportunities/${realDeal}/`)).statusCode, 200, "the user's deal is untouched")
    t.same(await names('/api/accounts/', 'name', globex.admin.headers), ['Kestrel Foods (sample)', 'Northwind Logistics (sample)'], "another organization's sample data is untouched")

    t.equal((await call('DELETE', `/api/opportunities/${realDeal}/`)).statusCode, 200)
    t.equal((await call('DELETE', `/api/tasks/${realTask}/`)).statusCode, 200)
    t.same((await call('DELETE', '/api/packs/sample-data/')).json(), { deleted: 2, deleted_by_type: { sample_lead: 1, sample_account: 1 }, retained_by_type: {} }, 'once nothing points at them, a later clear deletes what it kept')
    t.same((await call('DELETE', '/api/packs/sample-data/')).json(), { deleted: 0, deleted_by_type: {}, retained_by_type: {} })
    const reapplied = (await call('POST', '/api/packs/professional-services/apply/')).json().report
    t.equal(reapplied.created.length, 10, 'applied again after a clear, under new ids (the names were freed)')
    t.equal((await call('GET', `/api/leads/${sampleId(acme.orgId, 'professional-services', 1, 'lead:orchard')}/`)).statusCode, 200)
  })

  t.test('API settings: admins only; the key is shown once and kept as a hash', async (t) => {
    t.equal((await call('GET', '/api/api-settings/', alice.headers)).statusCode, 403)
    t.equal((await call('POST', '/api/api-settings/', alice.headers, { title: 'Mine' })).statusCode, 403)
    await call('POST', '/api/tags/', admin, { name: 'Web' })
    const res = await call('POST', '/api/api-settings/', admin, { title: 'Main site', website: 'https://acme.example.com', lead_assigned_to: [alice.profileId], tags: ['web'] })
    t.equal(res.statusCode, 201, res.body)
    const { id, apikey } = res.json()
    t.match(apikey, /^svc_site_[\w-]{43}$/)
    t.match(res.json().api_setting, { title: 'Main site', website: 'https://acme.example.com', apikey_prefix: apikey.slice(0, 15), lead_assigned_to: [{ id: alice.profileId }], tags: [{ name: 'Web' }] })
    const list = await call('GET', '/api/api-settings/')
    t.match(list.json(), { error: false, api_settings: [{ id, title: 'Main site' }], users: Array })
    t.notOk(list.body.includes(apikey), 'the list never shows the key')
    t.notOk((await call('GET', `/api/api-settings/${id}/`)).body.includes(apikey), 'nor the detail')
    const logged = JSON.stringify((await store.readStream(`api_setting-${id}`)).map((event) => event.data))
    t.notOk(logged.includes(apikey), 'nor the event log')
    t.ok(logged.includes(hashSecret(apikey).toString('hex')), 'which keeps its hash')

    const bad = async (body: object) => (await call('POST', '/api/api-settings/', admin, { title: 'X', ...body })).json().errors
    t.match(await bad({ website: 'acme.example.com' }), { website: [String] }, 'a website needs its scheme')
    t.match(await bad({ website: 'https://acme.example.com/' }), { website: [String] }, 'and no path or trailing slash')
    t.match(await bad({ tags: ['nope'] }), { tags: [/nope/] })
    t.match(await bad({ lead_assigned_to: [gina.profileId] }), { lead_assigned_to: [String] })
    t.match(await bad({ title: ' ' }), { title: [String] })

    t.equal((await call('PUT', `/api/api-settings/${id}/`, admin, { title: 'Main site 2' })).statusCode, 200)
    t.match((await call('GET', `/api/api-settings/${id}/`)).json().domain, { title: 'Main site 2', website: 'https://acme.example.com', lead_assigned_to: [], tags: [] }, 'PUT clears the lists left out and keeps the website')
    t.equal((await call('PATCH', `/api/api-settings/${id}/`, admin, { website: '' })).statusCode, 200)
    t.equal((await call('GET', `/api/api-settings/${id}/`)).json().domain.website, null)
    t.equal((await call('PATCH', `/api/api-settings/${id}/`, alice.headers, { title: 'X' })).statusCode, 403)
    t.equal((await call('GET', `/api/api-settings/${id}/`, globex.admin.headers)).statusCode, 404, 'another organization: as if missing')
    t.equal((await call('DELETE', `/api/api-settings/${id}/`, globex.admin.headers)).statusCode, 404)
    await rebuildEqualsLive(t, { db: database.db, store }, apiSettingsProjector, { oneByOne: true })
    t.equal((await call('DELETE', `/api/api-settings/${id}/`)).statusCode, 200)
    t.equal((await call('GET', `/api/api-settings/${id}/`)).statusCode, 404)
  })
})
