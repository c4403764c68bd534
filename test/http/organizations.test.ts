import { randomUUID } from 'node:crypto'
import t from 'tap'
import { buildTestApp } from '../helpers/app.ts'
import { givenOrganization } from '../helpers/identity.ts'

t.test('organizations', async (t) => {
  const { app, database } = await buildTestApp(t)
  const db = database.db
  const acme = await givenOrganization(app, db, 'Acme')
  const globex = await givenOrganization(app, db, 'Globex')
  const alice = await acme.addMember('alice@acme.test')
  const orgRow = (id: string) => db.selectFrom('organizations').selectAll().where('id', '=', id).executeTakeFirstOrThrow()

  const pat = (await app.inject({ method: 'POST', url: '/api/profile/tokens/', headers: acme.admin.headers, payload: { name: 'script' } })).json().token as string
  const apiKey = (await app.inject({ method: 'POST', url: '/api/org/api-key/', headers: acme.admin.headers })).json().api_key as string

  t.test('POST /api/org/', async (t) => {
    t.test('a signed-in user creates an organization and becomes its admin', async (t) => {
      const res = await app.inject({ method: 'POST', url: '/api/org/', headers: alice.headers, payload: { name: '  Alice Labs ', default_currency: 'eur' } })
      t.equal(res.statusCode, 200)
      const body = res.json()
      t.match(body, { error: false, message: String, org: { id: String, name: 'Alice Labs', default_currency: 'EUR', timezone: 'UTC', is_active: true } })
      const profile = await db.selectFrom('profiles').selectAll().where('org_id', '=', body.org.id).execute()
      t.match(profile, [{ user_id: alice.userId, role: 'ADMIN', is_active: true }])
      const inNewOrg = { authorization: `Bearer ${app.jwt.sign({ sub: alice.userId, org_id: body.org.id, typ: 'access' })}` }
      t.equal((await app.inject({ url: '/api/users/', headers: inNewOrg })).statusCode, 200, 'a token for the new organization acts there as admin')
      t.equal((await app.inject({ url: '/api/users/', headers: alice.headers })).statusCode, 403, 'the old token still acts in the old organization')
    })

    t.test('with the time zone the phone app sends', async (t) => {
      const res = await app.inject({ method: 'POST', url: '/api/org/', headers: alice.headers, payload: { name: 'Alice Tokyo', timezone: 'Asia/Tokyo' } })
      t.equal(res.statusCode, 200, res.body)
      t.match(res.json().org, { name: 'Alice Tokyo', timezone: 'Asia/Tokyo' })
    })

    t.test('invalid fields are 400 naming the field', async (t) => {
      const res = await app.inject({ method: 'POST', url: '/api/org/', headers: alice.headers, payload: { name: '   ', default_currency: 'XYZ', timezone: 'Mars/Olympus' } })
      t.equal(res.statusCode, 400)
      t.match(res.json(), { error: true, errors: { name: [String], default_currency: [String], timezone: [String] } })
    })

    t.test('needs an interactive sign-in', async (t) => {
      const res = await app.inject({ method: 'POST', url: '/api/org/', headers: { authorization: `Bearer ${pat}` }, payload: { name: 'Via PAT' } })
      t.equal(res.statusCode, 403)
      t.equal((await app.inject({ method: 'POST', url: '/api/org/', headers: { token: apiKey }, payload: { name: 'Via key' } })).statusCode, 403)
      t.equal(await db.selectFrom('organizations').select('id').where('name', 'in', ['Via PAT', 'Via key']).executeTakeFirst(), undefined)
    })
  })

  t.test('GET /api/org/', async (t) => {
    const res = await app.inject({ url: '/api/org/', headers: { ...alice.headers, org: globex.orgId } })
    t.equal(res.statusCode, 200)
    const list = res.json().profile_org_list
    t.same(list.map((m: { org: { name: string }; role: string; is_current: boolean }) => [m.org.name, m.role, m.is_current]), [['Acme', 'USER', true], ['Alice Labs', 'ADMIN', false], ['Alice Tokyo', 'ADMIN', false]])
    t.equal(list[0].id, alice.profileId)
    t.equal((await app.inject({ url: '/api/org/', headers: { token: apiKey } })).statusCode, 403, 'the API key belongs to no user')
  })

  t.test('GET /api/org/{id}/', async (t) => {
    const res = await app.inject({ url: `/api/org/${acme.orgId}/`, headers: alice.headers })
    t.equal(res.statusCode, 200)
    t.match(res.json(), { error: false, org: { id: acme.orgId, name: 'Acme', default_currency: 'USD', timezone: 'UTC', is_active: true } })
    t.equal((await app.inject({ url: `/api/org/${acme.orgId.toUpperCase()}/`, headers: alice.headers })).statusCode, 200, 'an upper-case uuid is the same id')
    const foreign = await app.inject({ url: `/api/org/${globex.orgId}/`, headers: acme.admin.headers })
    t.equal(foreign.statusCode, 404)
    t.same(foreign.json(), (await app.inject({ url: `/api/org/${randomUUID()}/`, headers: acme.admin.headers })).json(), 'exactly like a missing id')
    const aliceLabs = (await app.inject({ url: '/api/org/', headers: alice.headers })).json().profile_org_list[1].org.id
    t.equal((await app.inject({ url: `/api/org/${aliceLabs}/`, headers: alice.headers })).statusCode, 404, 'even an organization of the same user, when not current')
    t.equal((await app.inject({ url: '/api/org/nope/', headers: alice.headers })).statusCode, 404)
  })

  t.test('PUT and PATCH /api/org/{id}/', async (t) => {
    t.test('an admin changes name, currency and time zone', async (t) => {
      const res = await app.inject({ method: 'PATCH', url: `/api/org/${acme.orgId}/`, headers: acme.admin.headers, payload: { name: 'Acme Corp', default_currency: 'GBP', timezone: 'Europe/London', is_active: true } })
      t.equal(res.statusCode, 200)
      t.match(res.json(), { error: false, message: String, org: { id: acme.orgId, name: 'Acme Corp', default_currency: 'GBP', timezone: 'Europe/London', is_active: true } })
      const put = await app.inject({ method: 'PUT', url: `/api/org/${acme.orgId}/`, headers: acme.admin.headers, payload: { timezone: 'Asia/Kolkata' } })
      t.equal(put.statusCode, 200, 'an IANA alias is accepted')
      t.match(await orgRow(acme.orgId), { name: 'Acme Corp', default_currency: 'GBP', timezone: 'Asia/Kolkata' }, 'PUT changes only the fields sent')
    })

    t.test('invalid values are 400 naming the field', async (t) => {
      const res = await app.inject({ method: 'PATCH', url: `/api/org/${acme.orgId}/`, headers: acme.admin.headers, payload: { name: '', default_currency: 'DOLLARS', timezone: 'Mars/Olympus', is_active: 'yes' } })
      t.equal(res.statusCode, 400)
      t.match(res.json(), { error: true, errors: { name: [String], default_currency: [String], timezone: [String], is_active: [String] } })
      const lower = await app.inject({ method: 'PATCH', url: `/api/org/${acme.orgId}/`, headers: acme.admin.headers, payload: { timezone: 'europe/paris' } })
      t.equal(lower.statusCode, 400, 'time zones are spelled as IANA spells them')
    })

    t.test('deactivating the current organization is refused', async (t) => {
      const res = await app.inject({ method: 'PATCH', url: `/api/org/${acme.orgId}/`, headers: acme.admin.headers, payload: { is_active: false } })
      t.equal(res.statusCode, 400)
      t.match(res.json(), { error: true, errors: { is_active: [String] } })
      t.equal((await orgRow(acme.orgId)).is_active, true)
    })

    t.test('non-admins get 403; another organization is 404 and unchanged', async (t) => {
      t.equal((await app.inject({ method: 'PATCH', url: `/api/org/${acme.orgId}/`, headers: alice.headers, payload: { name: 'Mine' } })).statusCode, 403)
      t.equal((await app.inject({ method: 'PUT', url: `/api/org/${globex.orgId}/`, headers: acme.admin.headers, payload: { name: 'Taken over' } })).statusCode, 404)
      t.equal((await orgRow(globex.orgId)).name, 'Globex')
      t.equal((await orgRow(acme.orgId)).name, 'Acme Corp')
    })
  })

  t.test('GET and PATCH /api/org/settings/', async (t) => {
    const activeMembers = (await db.selectFrom('profiles').select('id').where('org_id', '=', acme.orgId).where('is_active', '=', true).execute()).length
    const expected = {
      id: acme.orgId, name: 'Acme Corp', default_currency: 'GBP', timezone: 'Asia/Kolkata',
      company_name: '', logo: null, logo_url: null, address_line: '', city: '', state: '', postcode: '', country: '', phone: '', email: '', website: '', tax_id: '',
      default_country: null, currency_symbol: '£', csat_enabled: true, auto_close_children_on_parent_close: false, vertical: '', terminology: {},
      member_count: activeMembers, created_at: (await orgRow(acme.orgId)).created_at.toISOString(),
    }
    for (const headers of [alice.headers, { authorization: `Bearer ${pat}` }, { token: pat }, { token: apiKey }]) {
      const res = await app.inject({ url: '/api/org/settings/', headers: { ...headers, org: globex.orgId } })
      t.equal(res.statusCode, 200)
      t.same(res.json(), expected, 'members, PATs and the API key read the settings of their own organization')
    }
    t.equal((await app.inject({ method: 'PATCH', url: '/api/org/settings/', headers: alice.headers, payload: { name: 'x' } })).statusCode, 403, 'non-admins cannot change them')
    t.equal((await app.inject({ method: 'PATCH', url: '/api/org/settings/', headers: { token: apiKey }, payload: { name: 'x' } })).statusCode, 403, 'nor can the read-only API key')
    const bad = await app.inject({ method: 'PATCH', url: '/api/org/settings/', headers: acme.admin.headers, payload: { timezone: 'Nowhere' } })
    t.equal(bad.statusCode, 400)
    t.match(bad.json(), { error: true, errors: { timezone: [String] } })
    const readOnly = await app.inject({ method: 'PATCH', url: '/api/org/settings/', headers: acme.admin.headers, payload: { default_currency: 'JPY', is_active: false, member_count: 99 } })
    t.equal(readOnly.statusCode, 400, 'what is not a setting is refused, not silently dropped')
    t.same(Object.keys(readOnly.json().errors).sort(), ['is_active', 'member_count'])
    t.notMatch(await orgRow(acme.orgId), { default_currency: 'JPY' }, 'and nothing of that body was stored')
    const res = await app.inject({ method: 'PATCH', url: '/api/org/settings/', headers: { ...acme.admin.headers, org: globex.orgId }, payload: { default_currency: 'JPY', timezone: 'UTC' } })
    t.equal(res.statusCode, 200)
    t.same(res.json(), { ...expected, default_currency: 'JPY', currency_symbol: '¥', timezone: 'UTC' })
    t.match(await orgRow(acme.orgId), { default_currency: 'JPY', is_active: true }, 'is_active is not a setting')
    t.match(await orgRow(globex.orgId), { default_currency: 'USD', timezone: 'UTC' })
  })

  t.test("the web app's organization form (issue 22): company profile, default country, switches", async (t) => {
    // What the edit form sends: every field, trimmed, blanks included; the switches as booleans.
    const form = {
      name: 'Acme Corp', company_name: 'Acme Corporation Ltd', address_line: '1 Main St', city: 'Springfield', state: 'IL', postcode: '62701', country: 'us', phone: '+1 555 0100',
      email: 'billing@acme.test', website: 'https://acme.test', tax_id: 'US-123', default_currency: 'EUR', default_country: 'US', timezone: 'Europe/Paris', csat_enabled: false, auto_close_children_on_parent_close: true,
    }
    const res = await app.inject({ method: 'PATCH', url: '/api/org/settings/', headers: acme.admin.headers, payload: form })
    t.equal(res.statusCode, 200, res.body)
    t.match(res.json(), { ...form, country: 'US', currency_symbol: '€' })
    t.match((await app.inject({ url: '/api/org/settings/', headers: alice.headers })).json(), { company_name: 'Acme Corporation Ltd', csat_enabled: false, auto_close_children_on_parent_close: true })
    const cleared = await app.inject({ method: 'PATCH', url: '/api/org/settings/', headers: acme.admin.headers, payload: { company_name: '', country: '', website: '', email: '', phone: '', default_country: '' } })
    t.equal(cleared.statusCode, 200, cleared.body)
    t.match(cleared.json(), { company_name: '', country: '', website: '', email: '', phone: '', default_country: null, city: 'Springfield' }, 'blank clears; the rest is kept')
    for (const [field, value] of [['email', 'not-an-email'], ['website', 'acme'], ['country', 'USA'], ['default_country', '1'], ['postcode', 'x'.repeat(21)], ['csat_enabled', 'maybe']] as const) {
      const refused = await app.inject({ method: 'PATCH', url: '/api/org/settings/', headers: acme.admin.headers, payload: { [field]: value } })
      t.equal(refused.statusCode, 400, `${field}: ${refused.body}`)
      t.ok(field in (refused.json().errors ?? {}), `names ${field}`)
    }
    t.equal((await app.inject({ method: 'PATCH', url: '/api/org/settings/', headers: acme.admin.headers, payload: { timezone: 'Asia/Kolkata', default_currency: 'GBP' } })).statusCode, 200)
  })

  t.test('GET /api/org/timezones/', async (t) => {
    const res = await app.inject({ url: '/api/org/timezones/', headers: alice.headers })
    t.equal(res.statusCode, 200)
    const zones: { name: string; offset_minutes: number; offset: string; label: string }[] = res.json().timezones
    const names = zones.map((zone) => zone.name)
    t.ok(names.includes('UTC') && names.includes('Europe/Paris') && names.includes('America/New_York'))
    t.same(names, [...names].sort(), 'sorted by name')
    t.notOk(names.some((name) => name.startsWith('US/') || name.startsWith('Etc/') || name === 'EST'), 'no legacy or bare names, as the original')
    t.same(zones.find((zone) => zone.name === 'UTC'), { name: 'UTC', offset_minutes: 0, offset: '+00:00', label: 'UTC (UTC)' })
    const kolkata = zones.find((zone) => zone.name === 'Asia/Kolkata' || zone.name === 'Asia/Calcutta')
    t.match(kolkata, { offset_minutes: 330, offset: '+05:30', label: /\(UTC\+05:30\)$/ })
    t.match(zones.find((zone) => zone.name === 'America/New_York'), { offset_minutes: -300, offset: '-05:00', label: 'America/New York (UTC-05:00)' }, 'the offset now (the test clock is in November: standard time)')
  })
})
