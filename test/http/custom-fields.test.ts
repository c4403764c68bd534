import t from 'tap'
import { customFieldsProjector, definitionsOf } from '../../src/projections/custom-fields.ts'
import { rebuildProjection } from '../../src/projections/rebuild.ts'
import { collectionClient, givenTwoOrganizations } from '../helpers/fixtures.ts'

t.test('/api/custom-fields/', async (t) => {
  const { app, database, store, acme, globex, alice } = await givenTwoOrganizations(t)
  const fields = collectionClient(app, '/api/custom-fields/')
  const admin = acme.admin.headers
  const tier = { key: 'tier', label: 'Tier', type: 'select', options: ['Gold', 'Silver'] }

  t.test('admins define fields: 201 with the definition, readable at once', async (t) => {
    const res = await fields.create(admin, tier)
    t.equal(res.statusCode, 201)
    t.match(res.json(), { module: 'opportunities', key: 'tier', label: 'Tier', type: 'select', options: ['Gold', 'Silver'], required: false, is_active: true, created_by: acme.admin.profileId })
    t.match(res.headers['x-event-position'], /^\d+-\d+$/)
    const seats = await fields.create(admin, { module: 'opportunities', key: ' Seats ', label: 'Seats', type: 'number', required: true })
    t.match(seats.json(), { key: 'seats', options: [], required: true }, 'the key is trimmed and lower-cased')
    t.match(await fields.list(alice.headers), { count: 2, results: [{ key: 'tier' }, { key: 'seats' }] }, 'every member reads, in creation order')
    t.match(await fields.detail(alice.headers, res.json().id), { key: 'tier' })
    t.equal((await fields.create(admin, { module: 'accounts', key: 'tier', label: 'Tier', type: 'text' })).statusCode, 201, 'the same key in another module')
    t.match(await fields.list(alice.headers, '?module=accounts'), { count: 1, results: [{ module: 'accounts', type: 'text' }] })
    t.equal((await fields.list(alice.headers, '?module=opportunities')).count, 2)
  })

  t.test('members may not write: 403', async (t) => {
    const existing = (await fields.list(admin)).results[0]
    t.equal((await fields.create(alice.headers, { key: 'x', label: 'X', type: 'text' })).statusCode, 403)
    t.equal((await fields.inject('PUT', `/api/custom-fields/${existing.id}/`, alice.headers, { label: 'Hijacked' })).statusCode, 403)
    t.equal((await fields.inject('DELETE', `/api/custom-fields/${existing.id}/`, alice.headers)).statusCode, 403)
  })

  t.test('keys are unique per organization and module, case-insensitively, also when created concurrently', async (t) => {
    for (const key of ['tier', 'TIER', 'Tier ']) {
      const dup = await fields.create(admin, { key, label: 'Again', type: 'text' })
      t.equal(dup.statusCode, 400, key)
      t.same(dup.json(), { error: true, errors: { key: ['"tier" is already in use.'] } })
    }
    t.equal((await fields.create(globex.admin.headers, tier)).statusCode, 201, 'another organization may use the key')
    const racers = await Promise.all(Array.from({ length: 5 }, (_, i) => fields.create(admin, { key: 'region', label: `Region ${i}`, type: 'text' })))
    t.same(racers.map((r) => r.statusCode).sort(), [201, 400, 400, 400, 400])
    t.equal((await definitionsOf(database.db, acme.orgId, 'opportunities', { activeOnly: false })).filter((d) => d.key === 'region').length, 1)
  })

  t.test('bad input is a 400 naming the field', async (t) => {
    const errorsOf = async (payload: object) => (await fields.create(admin, payload)).json().errors
    t.match(await errorsOf({ key: '1st', label: 'X', type: 'text' }), { key: [String] })
    t.match(await errorsOf({ key: 'a-b', label: 'X', type: 'text' }), { key: [String] })
    t.match(await errorsOf({ key: `k${'x'.repeat(50)}`, label: 'X', type: 'text' }), { key: [String] })
    t.match(await errorsOf({ key: 'x', label: ' ', type: 'text' }), { label: [String] })
    t.match(await errorsOf({ key: 'x', label: 'X', type: 'color' }), { type: [String] })
    t.match(await errorsOf({ key: 'x', label: 'X', type: 'text', module: 'cases' }), { module: [String] })
    t.match(await errorsOf({ key: 'x', label: 'X', type: 'select' }), { options: [/at least one/] })
    t.match(await errorsOf({ key: 'x', label: 'X', type: 'select', options: ['A', 'A'] }), { options: [/distinct/] })
    t.match(await errorsOf({ key: 'x', label: 'X', type: 'number', options: ['A'] }), { options: [/Only select/] })
    t.equal((await fields.create(admin, { key: 'x', label: 'X', type: 'text' })).statusCode, 201, 'a refused create left the key free')
  })

  t.test('PUT changes label, options, required and is_active; key, module and type are immutable', async (t) => {
    const field = (await fields.create(admin, { key: 'stage_note', label: 'Note', type: 'select', options: ['A'] })).json()
    const put = (payload: object) => fields.inject('PUT', `/api/custom-fields/${field.id}/`, admin, payload)
    const res = await put({ label: 'Stage note', options: ['A', 'B'], required: true, is_active: false })
    t.equal(res.statusCode, 200)
    t.match(res.json(), { key: 'stage_note', label: 'Stage note', options: ['A', 'B'], required: true, is_active: false })
    t.match((await put({ label: 'Stage note' })).json(), { options: ['A', 'B'], required: true, is_active: false }, 'omitted fields are unchanged')
    t.equal((await put({ label: 'Stage note', key: 'stage_note', module: 'opportunities', type: 'select' })).statusCode, 200, 'echoing the immutable fields is fine')
    for (const [name, value] of [['key', 'other'], ['module', 'leads'], ['type', 'text']] as const) {
      const refused = await put({ label: 'Stage note', [name]: value })
      t.equal(refused.statusCode, 400, name)
      t.match(refused.json(), { error: true, errors: { [name]: [/cannot be changed/] } })
    }
    t.match((await put({ label: 'Stage note', options: [] })).json(), { errors: { options: [String] } })
    t.match(await fields.detail(admin, field.id), { key: 'stage_note', type: 'select', options: ['A', 'B'] }, 'refused changes changed nothing')
    t.same(
      (await definitionsOf(database.db, acme.orgId, 'opportunities', { activeOnly: true })).map((d) => d.key),
      ['tier', 'seats', 'region', 'x'],
      'an inactive definition is left out of activeOnly',
    )
  })

  t.test('DELETE is soft, admin-only, hides the field and frees its key', async (t) => {
    const field = (await fields.create(admin, { key: 'temp', label: 'Temp', type: 'boolean' })).json()
    const deleted = await fields.inject('DELETE', `/api/custom-fields/${field.id}/`, admin)
    t.same(deleted.json(), { error: false, message: 'Custom field deleted' })
    t.equal((await fields.inject('GET', `/api/custom-fields/${field.id}/`, admin)).statusCode, 404)
    t.equal((await fields.inject('DELETE', `/api/custom-fields/${field.id}/`, admin)).statusCode, 404)
    t.notOk((await fields.list(admin, '?limit=100')).results.some((r: { id: string }) => r.id === field.id), 'hidden from the list')
    const row = await database.db.selectFrom('custom_field_definitions' as any).selectAll().where('id', '=', field.id).executeTakeFirst()
    t.match(row, { is_deleted: true, is_active: false }, 'the row is kept')
    t.equal((await fields.create(admin, { key: 'temp', label: 'Temp again', type: 'text' })).statusCode, 201, 'the key is free again')
  })

  t.test("another organization's ids answer 404 and change nothing; malformed ids too", async (t) => {
    const foreign = (await fields.create(globex.admin.headers, { key: 'secret', label: 'Secret', type: 'text' })).json()
    for (const [method, payload] of [['GET', undefined], ['PUT', { label: 'Hijacked' }], ['DELETE', undefined]] as const) {
      t.equal((await fields.inject(method, `/api/custom-fields/${foreign.id}/`, admin, payload)).statusCode, 404, method)
    }
    t.match(await fields.detail(globex.admin.headers, foreign.id), { label: 'Secret' })
    t.notOk((await fields.list(admin, '?limit=100')).results.some((r: { key: string }) => r.key === 'secret'), "another organization's fields are not listed")
    t.equal((await fields.inject('GET', '/api/custom-fields/not-a-uuid/', admin)).statusCode, 404)
    t.equal((await fields.inject('PUT', '/api/custom-fields/not-a-uuid/', admin, { label: 'X' })).statusCode, 404)
  })

  t.test('the read model rebuilt from the log is identical, batched or one event at a time', async (t) => {
    const rows = () => database.db.selectFrom('custom_field_definitions' as any).selectAll().orderBy('id').execute()
    const before = await rows()
    t.ok(before.length >= 8)
    for (const projector of [customFieldsProjector, { ...customFieldsProjector, applyBatch: undefined }]) {
      await rebuildProjection(database.db, store, projector)
      t.same(await rows(), before, projector.applyBatch ? 'batched' : 'one by one')
    }
  })
})
