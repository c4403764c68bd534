import t from 'tap'
import { customFieldsProjector, definitionsOf } from '../../src/projections/custom-field/custom-fields.ts'
import { collectionClient, givenTwoOrganizations } from '../helpers/fixtures.ts'
import { rebuildEqualsLive } from '../helpers/read-models.ts'

const pairs = (...values: string[]) => values.map((value) => ({ value: value.toLowerCase(), label: value }))

t.test('/api/custom-fields/ (the original CustomFieldDefinition shape)', async (t) => {
  const { app, database, store, acme, globex, alice } = await givenTwoOrganizations(t)
  const fields = collectionClient(app, '/api/custom-fields/')
  const admin = acme.admin.headers
  const tier = { target_model: 'Opportunity', key: 'tier', label: 'Tier', field_type: 'dropdown', options: pairs('Gold', 'Silver') }
  const keysOf = (list: { definitions: { key: string }[] }) => list.definitions.map((d) => d.key)

  t.test('admins define fields: 201 with the definition, readable at once', async (t) => {
    const res = await fields.create(admin, tier)
    t.equal(res.statusCode, 201)
    t.same(res.json(), {
      id: res.json().id, target_model: 'Opportunity', key: 'tier', label: 'Tier', field_type: 'dropdown', options: pairs('Gold', 'Silver'),
      is_required: false, is_filterable: false, display_order: 0, is_active: true, created_by: acme.admin.profileId, created_at: res.json().created_at, updated_at: res.json().updated_at,
    })
    t.match(res.headers['x-event-position'], /^\d+-\d+$/)
    const seats = await fields.create(admin, { target_model: 'Opportunity', key: ' Seats ', label: 'Seats', field_type: 'number', is_required: true, display_order: '0' })
    t.match(seats.json(), { key: 'seats', options: [], is_required: true }, 'the key is trimmed and lower-cased')
    t.same(keysOf(await fields.list(alice.headers)), ['seats', 'tier'], 'every member reads, by target_model, display_order, label')
    t.match(await fields.detail(alice.headers, res.json().id), { key: 'tier' })
    // What the web app's settings page sends (custom-fields.js buildBody).
    const web = await fields.create(admin, { target_model: 'Lead', key: 'budget', label: 'Budget', field_type: 'textarea', is_required: false, is_filterable: true, display_order: 2, is_active: true })
    t.match(web.json(), { target_model: 'Lead', field_type: 'textarea', is_filterable: true, display_order: 2 })
    t.equal((await fields.create(admin, { target_model: 'Account', key: 'tier', label: 'Tier', field_type: 'text' })).statusCode, 201, 'the same key in another target model')
    t.equal((await fields.create(admin, { target_model: 'Case', key: 'severity', label: 'Severity', field_type: 'checkbox' })).statusCode, 201, "any of the original's target models")
    t.match(await fields.list(alice.headers, '?target_model=Account'), { definitions: [{ target_model: 'Account', field_type: 'text' }] })
    t.equal((await fields.list(alice.headers, '?target_model=Opportunity')).definitions.length, 2)
  })

  t.test("the list: records_missing_value and totals over the whole set; include_counts=false and active_only as the lead pages ask", async (t) => {
    const deal = await app.inject({ method: 'POST', url: '/api/opportunities/', headers: admin, payload: { name: 'Tiered', cf_tier: 'gold', cf_seats: 3 } })
    t.equal(deal.statusCode, 200, deal.body)
    t.equal((await app.inject({ method: 'POST', url: '/api/opportunities/', headers: admin, payload: { name: 'Plain', custom_fields: { seats: '4' } } })).statusCode, 200)
    const list = await fields.list(admin)
    const missing = Object.fromEntries(list.definitions.map((d: { target_model: string; key: string; records_missing_value: number }) => [`${d.target_model}.${d.key}`, d.records_missing_value]))
    t.same(missing, { 'Account.tier': 0, 'Case.severity': 0, 'Lead.budget': 0, 'Opportunity.seats': 0, 'Opportunity.tier': 1 }, 'records of Opportunity without the key; 0 where records carry no values')
    t.same(list.totals, { count: 5, active: 5, models_extended: 4, required_with_gaps: 0 })
    const tierId = list.definitions.find((d: { key: string; target_model: string }) => d.key === 'tier' && d.target_model === 'Opportunity').id
    t.equal((await fields.inject('PUT', `/api/custom-fields/${tierId}/`, admin, { is_required: true })).statusCode, 200)
    t.match((await fields.list(admin)).totals, { required_with_gaps: 1 }, 'a field made required with records that predate the rule')
    t.equal((await fields.inject('PUT', `/api/custom-fields/${tierId}/`, admin, { is_required: 'false' })).statusCode, 200)
    const lean = await fields.list(alice.headers, '?target_model=Lead&active_only=true&include_counts=false')
    t.same({ keys: keysOf(lean), totals: lean.totals, counted: 'records_missing_value' in lean.definitions[0] }, { keys: ['budget'], totals: null, counted: false })
    t.same((await fields.list(admin, '?target_model=Lead')).totals, (await fields.list(admin)).totals, 'the totals ignore the filters')
  })

  t.test('members may not write: 403', async (t) => {
    const existing = (await fields.list(admin)).definitions[0]
    t.equal((await fields.create(alice.headers, { key: 'x', label: 'X', field_type: 'text' })).statusCode, 403)
    t.equal((await fields.inject('PUT', `/api/custom-fields/${existing.id}/`, alice.headers, { label: 'Hijacked' })).statusCode, 403)
    t.equal((await fields.inject('DELETE', `/api/custom-fields/${existing.id}/`, alice.headers)).statusCode, 403)
  })

  t.test('keys are unique per organization and target model, case-insensitively, also when created concurrently', async (t) => {
    for (const key of ['tier', 'TIER', 'Tier ']) {
      const dup = await fields.create(admin, { key, label: 'Again', field_type: 'text' })
      t.equal(dup.statusCode, 400, key)
      t.same(dup.json(), { error: true, errors: { key: ['"tier" is already in use.'] } })
    }
    t.equal((await fields.create(globex.admin.headers, tier)).statusCode, 201, 'another organization may use the key')
    const racers = await Promise.all(Array.from({ length: 5 }, (_, i) => fields.create(admin, { key: 'region', label: `Region ${i}`, field_type: 'text' })))
    t.same(racers.map((r) => r.statusCode).sort(), [201, 400, 400, 400, 400])
    t.equal((await definitionsOf(database.db, acme.orgId, 'opportunities', { activeOnly: false })).filter((d) => d.key === 'region').length, 1)
  })

  t.test('bad input is a 400 naming the field', async (t) => {
    const errorsOf = async (payload: object) => (await fields.create(admin, payload)).json().errors
    t.match(await errorsOf({ key: '1st', label: 'X', field_type: 'text' }), { key: [String] })
    t.match(await errorsOf({ key: 'a-b', label: 'X', field_type: 'text' }), { key: [String] })
    t.match(await errorsOf({ key: `k${'x'.repeat(64)}`, label: 'X', field_type: 'text' }), { key: [String] })
    t.match(await errorsOf({ key: 'x', label: ' ', field_type: 'text' }), { label: [String] })
    t.match(await errorsOf({ key: 'x', label: 'X', field_type: 'color' }), { field_type: [String] })
    t.match(await errorsOf({ key: 'x', label: 'X' }), { field_type: ['This field is required.'] })
    t.match(await errorsOf({ key: 'x', label: 'X', field_type: 'text', target_model: 'Spaceship' }), { target_model: [String] })
    t.match(await errorsOf({ key: 'x', label: 'X', field_type: 'dropdown' }), { options: [/non-empty list/] })
    t.match(await errorsOf({ key: 'x', label: 'X', field_type: 'dropdown', options: [{ value: 'a', label: 'A' }, { value: 'a', label: 'Again' }] }), { options: [/Duplicate dropdown value/] })
    t.match(await errorsOf({ key: 'x', label: 'X', field_type: 'dropdown', options: [{ value: 'a', label: '' }] }), { options: [/non-empty value and label/] })
    t.match(await errorsOf({ key: 'x', label: 'X', field_type: 'number', options: [{ value: 'a', label: 'A' }] }), { options: [/only valid for dropdown/] })
    t.match(await errorsOf({ key: 'x', label: 'X', field_type: 'text', display_order: -1 }), { display_order: [String] })
    t.equal((await fields.create(admin, { key: 'x', label: 'X', field_type: 'text' })).statusCode, 201, 'a refused create left the key free')
  })

  t.test("deprecated aliases of today's clients: module, type (boolean, select), required, options as strings", async (t) => {
    const res = await fields.create(admin, { module: 'leads', key: 'tier', label: 'Tier', type: 'select', options: ['gold', 'silver'], required: true })
    t.equal(res.statusCode, 201, res.body)
    t.match(res.json(), { target_model: 'Lead', field_type: 'dropdown', options: [{ value: 'gold', label: 'gold' }, { value: 'silver', label: 'silver' }], is_required: true })
    t.match((await fields.create(admin, { module: 'leads', key: 'vip', label: 'VIP', type: 'boolean' })).json(), { field_type: 'checkbox' })
    t.match((await fields.create(admin, { key: 'x2', label: 'X', type: 'color' })).json(), { errors: { field_type: [String] } })
    t.equal((await fields.list(admin, '?module=leads')).definitions.length, 3)
  })

  t.test('PUT changes the fields given; key, target_model and field_type are immutable', async (t) => {
    const field = (await fields.create(admin, { key: 'stage_note', label: 'Note', field_type: 'dropdown', options: pairs('A') })).json()
    const put = (payload: object) => fields.inject('PUT', `/api/custom-fields/${field.id}/`, admin, payload)
    const res = await put({ label: 'Stage note', options: [{ value: 'a', label: 'Alpha' }, { value: '', label: 'B' }].slice(0, 1).concat(pairs('B')), is_required: true, is_filterable: true, display_order: 4 })
    t.equal(res.statusCode, 200, res.body)
    t.match(res.json(), { key: 'stage_note', label: 'Stage note', options: [{ value: 'a', label: 'Alpha' }, { value: 'b', label: 'B' }], is_required: true, is_filterable: true, display_order: 4 })
    t.match((await put({ label: 'Stage note' })).json(), { options: [{ value: 'a' }, { value: 'b' }], is_required: true, is_active: true }, 'omitted fields are unchanged')
    t.equal((await put({ key: 'stage_note', target_model: 'Opportunity', field_type: 'dropdown' })).statusCode, 200, 'echoing the immutable fields is fine')
    for (const [name, value] of [['key', 'other'], ['target_model', 'Lead'], ['field_type', 'text']] as const) {
      const refused = await put({ label: 'Stage note', [name]: value })
      t.equal(refused.statusCode, 400, name)
      t.match(refused.json(), { error: true, errors: { [name]: [/cannot be changed/] } })
    }
    t.match((await put({ options: [] })).json(), { errors: { options: [String] } })
    t.match(await fields.detail(admin, field.id), { key: 'stage_note', field_type: 'dropdown', options: [{ label: 'Alpha' }, { label: 'B' }] }, 'refused changes changed nothing')
  })

  t.test('DELETE deactivates (admins): listed still, left out of records; PUT {is_active: true} turns it back on', async (t) => {
    const field = (await fields.create(admin, { key: 'temp', label: 'Temp', field_type: 'checkbox' })).json()
    const deleted = await fields.inject('DELETE', `/api/custom-fields/${field.id}/`, admin)
    t.same(deleted.json(), { error: false, message: 'Custom field deactivated' })
    t.match(await fields.detail(admin, field.id), { is_active: false })
    t.match((await fields.list(admin)).definitions.find((d: { id: string }) => d.id === field.id), { is_active: false }, 'still listed, dimmed')
    t.notOk((await definitionsOf(database.db, acme.orgId, 'opportunities', { activeOnly: true })).some((d) => d.key === 'temp'), 'left out of records')
    t.equal((await fields.inject('DELETE', `/api/custom-fields/${field.id}/`, admin)).statusCode, 200, 'again: still deactivated')
    t.equal((await fields.create(admin, { key: 'temp', label: 'Temp again', field_type: 'text' })).statusCode, 400, 'the key stays taken')
    const on = await fields.inject('PUT', `/api/custom-fields/${field.id}/`, admin, { is_active: true })
    t.match({ status: on.statusCode, body: on.json() }, { status: 200, body: { is_active: true, label: 'Temp' } }, "the web app's turn-on body")
  })

  t.test("another organization's ids answer 404 and change nothing; malformed ids too", async (t) => {
    const foreign = (await fields.create(globex.admin.headers, { key: 'secret', label: 'Secret', field_type: 'text' })).json()
    for (const [method, payload] of [['GET', undefined], ['PUT', { label: 'Hijacked' }], ['DELETE', undefined]] as const) {
      t.equal((await fields.inject(method, `/api/custom-fields/${foreign.id}/`, admin, payload)).statusCode, 404, method)
    }
    t.match(await fields.detail(globex.admin.headers, foreign.id), { label: 'Secret', is_active: true })
    t.notOk((await fields.list(admin)).definitions.some((r: { key: string }) => r.key === 'secret'), "another organization's fields are not listed")
    t.equal((await fields.inject('GET', '/api/custom-fields/not-a-uuid/', admin)).statusCode, 404)
    t.equal((await fields.inject('PUT', '/api/custom-fields/not-a-uuid/', admin, { label: 'X' })).statusCode, 404)
  })

  t.test('the read model rebuilt from the log is identical, batched or one event at a time', async (t) => {
    const live = await rebuildEqualsLive(t, { db: database.db, store }, customFieldsProjector, { oneByOne: true })
    t.ok(live.custom_field_definitions!.length >= 8)
  })
})
