import t from 'tap'
import { collectionClient, givenTwoOrganizations } from '../helpers/fixtures.ts'

const BASE = '/api/opportunities/'

t.test('custom fields on deals: writes, detail, filters (§2.1, §4.3, where-the-spec-is-silent.md)', async (t) => {
  const { app, acme, globex } = await givenTwoOrganizations(t)
  const admin = acme.admin.headers
  const { inject, create, detail } = collectionClient(app, BASE)
  const define = async (body: object, headers = admin) => {
    const res = await inject('POST', '/api/custom-fields/', headers, { target_model: 'Opportunity', ...body })
    t.equal(res.statusCode, 201, res.body)
    return res.json().id as string
  }
  await define({ key: 'tier', label: 'Tier', field_type: 'dropdown', options: [{ value: 'gold', label: 'Gold' }, { value: 'silver', label: 'Silver' }], is_required: true })
  await define({ key: 'score', label: 'Score', field_type: 'number' })
  await define({ key: 'renewal', label: 'Renewal', field_type: 'date' })
  const vip = await define({ key: 'vip', label: 'VIP', field_type: 'checkbox' })
  await define({ key: 'tier', label: 'Theirs', field_type: 'text' }, globex.admin.headers)
  const names = async (query: string) => ((await inject('GET', `${BASE}${query}`, admin)).json().opportunities as { name: string }[]).map((o) => o.name).sort()

  t.test('writes are checked against the definitions; unknown keys are dropped', async (t) => {
    const missing = await create(admin, { name: 'No tier' })
    t.match({ status: missing.statusCode, body: missing.json() }, { status: 400, body: { error: true, errors: { custom_fields: { tier: [String] } } } }, 'a required field')
    t.match((await create(admin, { name: 'Bad tier', cf_tier: 'bronze' })).json(), { errors: { custom_fields: { tier: [String] } } }, 'a select value outside its options')
    t.match((await create(admin, { name: 'Bad score', cf_tier: 'gold', cf_score: 'lots' })).json(), { errors: { custom_fields: { score: [String] } } })
    const res = await create(admin, { name: 'Gold deal', cf_tier: 'gold', cf_score: '12.5', cf_nope: 'dropped', custom_fields: { renewal: '2027-01-31' } })
    t.equal(res.statusCode, 200, res.body)
    const body = await detail(admin, res.json().id)
    t.same(body.opportunity_obj.custom_fields, { tier: 'gold', score: 12.5, renewal: '2027-01-31' })
    t.same(body.custom_field_definitions.map((d: { key: string }) => d.key).sort(), ['renewal', 'score', 'tier', 'vip'], "the organization's active definitions only")
  })

  t.test('PATCH merges, PUT replaces, a PATCH naming none keeps them', async (t) => {
    const id = (await create(admin, { name: 'Silver deal', cf_tier: 'silver', cf_score: 3 })).json().id as string
    t.equal((await inject('PATCH', `${BASE}${id}/`, admin, { cf_vip: 'true' })).statusCode, 200)
    t.same((await detail(admin, id)).opportunity_obj.custom_fields, { tier: 'silver', score: 3, vip: true })
    t.equal((await inject('PATCH', `${BASE}${id}/`, admin, { description: 'no custom values named' })).statusCode, 200)
    t.same((await detail(admin, id)).opportunity_obj.custom_fields, { tier: 'silver', score: 3, vip: true })
    t.equal((await inject('PUT', `${BASE}${id}/`, admin, { name: 'Silver deal', custom_fields: { tier: 'gold' } })).statusCode, 200)
    t.same((await detail(admin, id)).opportunity_obj.custom_fields, { tier: 'gold' })
    t.match((await inject('PUT', `${BASE}${id}/`, admin, { name: 'Silver deal' })).json(), { errors: { custom_fields: { tier: [String] } } }, 'a PUT must carry the required ones')
  })

  t.test('urlencoded bodies carry them as text', async (t) => {
    const res = await app.inject({ method: 'POST', url: BASE, headers: { ...admin, 'content-type': 'application/x-www-form-urlencoded' }, payload: 'name=Form+deal&cf_tier=silver&cf_vip=false&cf_score=7' })
    t.equal(res.statusCode, 200, res.body)
    t.same((await detail(admin, res.json().id)).opportunity_obj.custom_fields, { tier: 'silver', vip: false, score: 7 })
  })

  t.test('cf_<key>=value filters the list and the board by equality; unknown keys and malformed values match nothing', async (t) => {
    t.same(await names('?cf_tier=gold'), ['Gold deal', 'Silver deal'])
    t.same(await names('?cf_tier=silver'), ['Form deal'])
    t.same(await names('?cf_score=12.50'), ['Gold deal'], 'numbers compare as numbers')
    t.same(await names('?cf_vip=false'), ['Form deal'])
    t.same(await names('?cf_renewal=2027-01-31&cf_tier=gold'), ['Gold deal'])
    t.same(await names('?cf_tier='), ['Form deal', 'Gold deal', 'Silver deal'], 'blank: no filter')
    for (const query of ['?cf_nope=x', '?cf_score=abc', '?cf_renewal=tomorrow']) t.same(await names(query), [], query)
    const board = (await inject('GET', `${BASE}kanban/?cf_tier=gold`, admin)).json()
    t.equal(board.total_items, 2, 'the board narrows the same way')
    t.match((await inject('GET', `${BASE}?cf_tier=gold`, admin)).json().totals, { count: 2 })
  })

  t.test('an inactive definition hides its values and stops filtering', async (t) => {
    t.equal((await inject('PUT', `/api/custom-fields/${vip}/`, admin, { label: 'VIP', is_active: false })).statusCode, 200)
    const id = (await inject('GET', `${BASE}?name=form`, admin)).json().opportunities[0].id
    const body = await detail(admin, id)
    t.same(body.opportunity_obj.custom_fields, { tier: 'silver', score: 7 })
    t.notOk(body.custom_field_definitions.some((d: { key: string }) => d.key === 'vip'))
    t.same(await names('?cf_vip=false'), [])
  })
})
