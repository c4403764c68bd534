import t from 'tap'
import { givenTwoOrganizations, succeeding } from '../helpers/fixtures.ts'

/**
 * The live board's cards are written as JSON by PostgreSQL (src/projections/opportunity/card-json.ts). In tests
 * the route also builds the board the object way and fails unless both give the same bytes; these
 * boards reach the corners where the two could differ: kanban orders PostgreSQL would print in
 * another notation, text needing escapes, an account, tags (one deleted), line items, a closed deal,
 * and viewers for whom can_move differs.
 */
t.test('the live board written by PostgreSQL is the bytes the serializer writes', async (t) => {
  const { app, acme, alice, bob } = await givenTwoOrganizations(t)
  const call = succeeding(t, app)
  const admin = acme.admin.headers
  const account = (await call('POST', '/api/accounts/', admin, { name: 'Ünïcode "quoted" \\ account' })).id as string
  const [kept, dropped] = [(await call('POST', '/api/tags/', admin, { name: 'tab\there' })).id as string, (await call('POST', '/api/tags/', admin, { name: 'gone' })).id as string]
  const orders = [1e-7, 0.00001, 0.0001, 0.1 + 0.2, 1e20, 1e21, -0.5, 123456789012345.67, 1234567890123456.8, 0]
  const ids: string[] = []
  for (const [i, order] of orders.entries()) {
    const deal = await call('POST', '/api/opportunities/', admin, { name: `Deal ${i} "line\nbreak" ✓`, amount: '12.50', account, tags: [kept, dropped], assigned_to: [alice.profileId, acme.admin.profileId] })
    await call('PATCH', `/api/opportunities/${deal.id}/move/`, admin, { column_id: 'PROSPECTING', kanban_order: order })
    ids.push(deal.id)
  }
  await call('POST', `/api/opportunities/${ids[0]}/line-items/`, admin, { name: 'Seat', quantity: 3, unit_price: '19.99', discount_type: 'percentage', discount_value: 10 })
  await call('POST', `/api/opportunities/${ids[0]}/line-items/`, admin, { name: 'Setup', quantity: 1, unit_price: 100 })
  await call('POST', '/api/opportunities/', bob.headers, { name: 'Won by Bob', amount: 5, stage: 'CLOSED_WON', closed_on: '2026-01-02' })
  await call('DELETE', `/api/tags/${dropped}/`, admin)

  for (const [who, headers] of [['admin', admin], ['alice (assignee)', alice.headers], ['bob (creator of one)', bob.headers]] as const) {
    const res = await app.inject({ method: 'GET', url: '/api/opportunities/kanban/', headers })
    t.equal(res.statusCode, 200, `${who}: ${res.body.slice(0, 300)}`)
    t.match(res.headers['content-type'], /^application\/json; charset=utf-8$/)
  }
  const board = (await app.inject({ method: 'GET', url: '/api/opportunities/kanban/', headers: admin })).json()
  const cards = board.columns.find((c: { id: string }) => c.id === 'PROSPECTING').items
  t.same(cards.map((c: { kanban_order: number }) => c.kanban_order), [...orders].sort((a, b) => a - b), 'kanban orders as numbers, in order')
  const first = cards.find((c: { id: string }) => c.id === ids[0])
  t.match(first, { account: { id: account }, tags: [{ id: kept, name: 'tab\there' }, { id: dropped }], line_items: [{ name: 'Seat', quantity: '3.00' }, { name: 'Setup' }], aging_status: 'green', days_in_stage: 0 })
  const aliceBoard = (await app.inject({ method: 'GET', url: '/api/opportunities/kanban/', headers: bob.headers })).json()
  t.same(aliceBoard.columns.flatMap((c: { items: { can_move: boolean }[] }) => c.items.map((i) => i.can_move)), [true], 'bob sees his own deal only, movable')
})
