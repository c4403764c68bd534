import t from 'tap'
import { FIXED_NOW } from '../helpers/app.ts'
import { collectionClient, givenTwoOrganizations, succeeding } from '../helpers/fixtures.ts'
import type { Headers } from '../helpers/fixtures.ts'

const BASE = '/api/opportunities/'
const DAY = 86_400_000
const later = (days: number) => new Date(FIXED_NOW.getTime() + days * DAY)
const BUDGET = 14

type Column = { id: string; name: string; item_count: number; items: { id: string; name: string; amount: string | null; kanban_order: number; assigned_to: { id: string }[]; line_items: { name: string }[] }[] }

t.test('the deal board as it stood at an instant (issue 17 point 1)', async (t) => {
  let now = FIXED_NOW
  const { app, acme, globex, alice, bob } = await givenTwoOrganizations(t, { clock: () => now, env: { AS_OF_EVENT_BUDGET: String(BUDGET) } })
  const admin = acme.admin.headers
  const { inject } = collectionClient(app, BASE)
  const ok = succeeding(t, app)
  const board = async (query: string, headers: Headers = admin) => {
    const res = await inject('GET', `${BASE}kanban/?${query}`, headers)
    t.equal(res.statusCode, 200, res.body)
    return res.json() as { columns: Column[]; total_items: number }
  }
  const where = (columns: Column[]) => Object.fromEntries(columns.flatMap((c) => c.items.map((i) => [i.name, c.id])))

  // Before the instant: four deals. After it: one moved, one renamed and repriced, one deleted, one reassigned, one created, a stage added.
  const moved = (await ok('POST', BASE, admin, { name: 'Moved', amount: 100 })).id as string
  const edited = (await ok('POST', BASE, alice.headers, { name: 'Edited', amount: 200, assigned_to: [bob.profileId] })).id as string
  const deleted = (await ok('POST', BASE, admin, { name: 'Deleted' })).id as string
  const priced = (await ok('POST', BASE, admin, { name: 'Priced' })).id as string
  await ok('POST', `${BASE}${priced}/line-items/`, admin, { name: 'Seat', quantity: '2', unit_price: '10.00' })
  const instant = later(1)
  now = later(2)
  await ok('PATCH', `${BASE}${moved}/move/`, admin, { column_id: 'NEGOTIATION' })
  await ok('PATCH', `${BASE}${edited}/`, alice.headers, { name: 'Edited later', amount: 250, assigned_to: [] })
  await ok('DELETE', `${BASE}${deleted}/`, admin)
  await ok('DELETE', `${BASE}${priced}/line-items/${(await inject('GET', `${BASE}${priced}/`, admin)).json().opportunity_obj.line_items[0].id}/`, admin)
  await ok('POST', BASE, admin, { name: 'Newer' })
  const pipelineId = (await inject('GET', `${BASE}pipelines/`, admin)).json().pipelines[0].id as string
  await ok('POST', `${BASE}pipelines/${pipelineId}/stages/`, admin, { label: 'Demo', kind: 'open' })
  now = later(3)

  t.test('each deal where it stood, with the fields it had then', async (t) => {
    const then = await board(`as_of=${instant.toISOString()}`)
    t.same(where(then.columns), { Moved: 'PROSPECTING', Edited: 'PROSPECTING', Deleted: 'PROSPECTING', Priced: 'PROSPECTING' }, 'the later deal is absent, the deleted one present')
    t.equal(then.total_items, 4)
    t.notOk(then.columns.some((c) => c.id === 'DEMO'), 'the columns of the pipeline then')
    const cards = then.columns.flatMap((c) => c.items)
    t.match(cards.find((c) => c.id === edited), { amount: '200.00', assigned_to: [{ id: bob.profileId }] })
    t.same(cards.find((c) => c.id === priced)!.line_items.map((i) => i.name), ['Seat'], 'line items then')

    const today = await board('')
    t.same(where(today.columns), { Moved: 'NEGOTIATION', 'Edited later': 'PROSPECTING', Priced: 'PROSPECTING', Newer: 'PROSPECTING' })
    t.ok(today.columns.some((c) => c.id === 'DEMO'))
  })

  t.test('before anything existed: the empty board; at now: today\'s board exactly', async (t) => {
    t.equal((await board(`as_of=${later(-1).toISOString()}`)).total_items, 0)
    t.same(await board(`as_of=${now.toISOString()}`), await board(''), 'replaying everything gives the read model')
  })

  t.test('filters and visibility judge the deal as it was', async (t) => {
    t.same(where((await board(`as_of=${instant.toISOString()}&search=Edited`)).columns), { Edited: 'PROSPECTING' })
    t.same(where((await board(`as_of=${instant.toISOString()}&amount__gte=150`)).columns), { Edited: 'PROSPECTING' }, 'the amount then')
    t.same(where((await board(`search=Edited&amount__gte=150`)).columns), { 'Edited later': 'PROSPECTING' })
    t.same(where((await board(`as_of=${instant.toISOString()}`, bob.headers)).columns), { Edited: 'PROSPECTING' }, 'Bob was assigned then')
    t.same(where((await board('', bob.headers)).columns), {}, 'and is not now')
    t.equal((await board(`as_of=${instant.toISOString()}`, globex.admin.headers)).total_items, 0, 'another organization sees none of it')
  })

  t.test('a malformed instant is 400; past the event budget 400, never part of a board', async (t) => {
    const bad = await inject('GET', `${BASE}kanban/?as_of=yesterday`, admin)
    t.equal(bad.statusCode, 400)
    for (let i = 0; i < BUDGET; i++) await ok('POST', BASE, admin, { name: `Bulk ${i}` })
    const over = await inject('GET', `${BASE}kanban/?as_of=${later(4).toISOString()}`, admin)
    t.equal(over.statusCode, 400, over.body)
    t.match(over.json(), { error: true, errors: { as_of: [/more than 14 events/] } })
  })
})
