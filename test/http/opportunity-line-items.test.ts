import { randomUUID } from 'node:crypto'
import t from 'tap'
import { collectionClient, givenTwoOrganizations } from '../helpers/fixtures.ts'

const BASE = '/api/opportunities/'

t.test('line items: /api/opportunities/{opportunity_id}/line-items/ (§4.8; where-the-spec-is-silent.md)', async (t) => {
  const { app, acme, globex, alice } = await givenTwoOrganizations(t)
  const admin = acme.admin.headers
  const { inject, create, detail } = collectionClient(app, BASE)
  const deal = (await create(alice.headers, { name: 'Seats', amount: 10 })).json().id as string
  const items = `${BASE}${deal}/line-items/`

  const first = await inject('POST', items, alice.headers, { name: 'Seat licence', quantity: 3, unit_price: '19.99', discount_type: 'percentage', discount_value: 10 })
  t.equal(first.statusCode, 201, first.body)
  t.match(first.json(), { name: 'Seat licence', quantity: '3.00', unit_price: '19.99', discount_type: 'percentage', discount_value: '10.00', discount_amount: '6.00', total: '53.97' })
  const second = (await inject('POST', items, admin, { name: 'Onboarding', quantity: '1', unit_price: 100 })).json()

  t.test('the deal amount is the total; the detail and the list show them', async (t) => {
    const body = (await detail(admin, deal)).opportunity_obj
    t.match(body, { amount: '153.97', amount_source: 'CALCULATED', line_items_total: '153.97', line_items: [{ name: 'Seat licence' }, { name: 'Onboarding' }] })
    t.match((await inject('GET', items, alice.headers)).json(), { line_items_total: '153.97', amount_source: 'CALCULATED', line_items: [{ total: '53.97' }, { total: '100.00' }] })
    const row = (await inject('GET', `${BASE}?name=Seats`, admin)).json().opportunities[0]
    t.match(row, { amount: '153.97', line_items_total: '153.97' })
    const card = (await inject('GET', `${BASE}kanban/`, admin)).json().columns[0].items.find((c: { id: string }) => c.id === deal)
    t.same(Object.keys(card.line_items[0]).sort(), ['discount_type', 'discount_value', 'id', 'name', 'quantity', 'unit_price'], 'cards carry plain rows')
  })

  t.test('while they exist they own the amount: another amount or null is 400, the same one passes', async (t) => {
    t.match((await inject('PATCH', `${BASE}${deal}/`, alice.headers, { amount: 99 })).json(), { error: true, errors: { amount: [String] } })
    t.match((await inject('PATCH', `${BASE}${deal}/`, alice.headers, { amount: null })).json(), { error: true, errors: { amount: [String] } })
    t.equal((await inject('PATCH', `${BASE}${deal}/`, alice.headers, { amount: '153.97', description: 'echo' })).statusCode, 200)
    t.equal((await inject('PUT', `${BASE}${deal}/`, alice.headers, { name: 'Seats' })).statusCode, 200, 'a PUT leaving the amount out keeps the total')
    t.match((await detail(admin, deal)).opportunity_obj, { amount: '153.97' })
  })

  t.test('PUT replaces an item and the amount follows; DELETE of the last returns the deal to MANUAL', async (t) => {
    const put = await inject('PUT', `${items}${second.id}/`, alice.headers, { name: 'Onboarding', quantity: 2, unit_price: 100 })
    t.match(put.json(), { quantity: '2.00', total: '200.00', description: null })
    t.match((await detail(admin, deal)).opportunity_obj, { amount: '253.97' })
    t.equal((await inject('DELETE', `${items}${second.id}/`, alice.headers)).statusCode, 200)
    t.match((await detail(admin, deal)).opportunity_obj, { amount: '53.97', amount_source: 'CALCULATED' })
    t.equal((await inject('DELETE', `${items}${first.json().id}/`, alice.headers)).statusCode, 200)
    t.match((await detail(admin, deal)).opportunity_obj, { amount: '53.97', amount_source: 'MANUAL', line_items: [], line_items_total: '0' })
    t.equal((await inject('PATCH', `${BASE}${deal}/`, alice.headers, { amount: 70 })).statusCode, 200, 'MANUAL again: the client sets it')
  })

  t.test('access and bad input', async (t) => {
    const carol = await acme.addMember('carol@acme.test')
    t.equal((await inject('GET', items, carol.headers)).statusCode, 403)
    t.equal((await inject('POST', items, carol.headers, { name: 'x', quantity: 1, unit_price: 1 })).statusCode, 403)
    t.equal((await inject('GET', items, globex.admin.headers)).statusCode, 404)
    t.equal((await inject('GET', `${BASE}${randomUUID()}/line-items/`, admin)).statusCode, 404)
    t.equal((await inject('GET', `${items}${randomUUID()}/`, admin)).statusCode, 404)
    t.equal((await inject('GET', `${BASE}not-a-uuid/line-items/`, admin)).statusCode, 404)
    for (const body of [{ name: '', quantity: 1, unit_price: 1 }, { name: 'x', quantity: 0, unit_price: 1 }, { name: 'x', quantity: 1, unit_price: -1 }, { name: 'x', quantity: 1, unit_price: 1, discount_type: 'percentage', discount_value: 101 }, { name: 'x', quantity: 1, unit_price: 1, discount_type: 'BOGUS', discount_value: 1 }]) {
      const res = await inject('POST', items, alice.headers, body)
      t.match({ status: res.statusCode, body: res.json() }, { status: 400, body: { error: true } }, JSON.stringify(body))
    }
  })
})
