import { randomUUID } from 'node:crypto'
import t from 'tap'
import { opportunityStreams } from '../../src/commands/opportunity/opportunity.ts'
import { defaultPipelineId } from '../../src/commands/pipeline/pipeline.ts'
import { opportunitiesProjector } from '../../src/projections/opportunity/opportunities.ts'
import { FIXED_NOW, buildTestApp } from '../helpers/app.ts'
import { collectionClient } from '../helpers/fixtures.ts'
import type { Headers } from '../helpers/fixtures.ts'
import { givenOrganization } from '../helpers/identity.ts'
import { rebuildEqualsLive } from '../helpers/read-models.ts'

const BASE = '/api/opportunities/'
const DAY = 86_400_000

t.test('GET /api/opportunities/ and the board: filters, totals, visibility (§4.3, §2.3, §4.6)', async (t) => {
  let now = FIXED_NOW
  const { app, database, store, projections } = await buildTestApp(t, { clock: () => now })
  const acme = await givenOrganization(app, database.db, 'Acme')
  const globex = await givenOrganization(app, database.db, 'Globex')
  const alice = await acme.addMember('alice@acme.test')
  const bob = await acme.addMember('bob@acme.test')
  const admin = acme.admin.headers
  const { inject, create } = collectionClient(app, BASE)
  const id = async (headers: Headers, payload: object) => {
    const res = await create(headers, payload)
    t.equal(res.statusCode, 200, res.body)
    return res.json().id as string
  }
  const list = async (query = '', headers: Headers = admin) => (await inject('GET', `${BASE}${query}`, headers)).json()
  const names = async (query: string, headers: Headers = admin) => ((await list(query, headers)).opportunities as { name: string }[]).map((o) => o.name).sort()

  const account = (await inject('POST', '/api/accounts/', admin, { name: 'Initech' })).json().id as string
  const hot = (await inject('POST', '/api/tags/', admin, { name: 'hot' })).json().id as string
  const cold = (await inject('POST', '/api/tags/', admin, { name: 'cold' })).json().id as string
  await id(admin, { name: 'Alpha One', amount: 100, tags: [hot], assigned_to: [alice.profileId], lead_source: 'CALL', account })
  now = new Date(FIXED_NOW.getTime() + 2 * DAY)
  await id(admin, { name: 'Beta Two', stage: 'CLOSED_WON', amount: '1000', closed_on: '2026-11-01', currency: 'EUR', lead_source: 'EXISTING CUSTOMER', tags: [cold] })
  await id(admin, { name: 'Gamma', stage: 'CLOSED_LOST', closed_on: '2026-10-01' })
  await id(alice.headers, { name: 'Delta', stage: 'PROPOSAL', amount: '50.50', probability: 50 })
  await id(bob.headers, { name: 'Epsilon', stage: 'NEGOTIATION', amount: 10 })
  await id(globex.admin.headers, { name: 'Alpha Globex', amount: 999 })
  // A deal recorded before currencies were defaulted: it counts in the organization's default.
  const legacy = randomUUID()
  const appended = await store.appendToStream(opportunityStreams.stream(legacy), [{ type: 'OpportunityCreated', data: {
    opportunity_id: legacy, org_id: acme.orgId, name: 'Legacy', account: null, opportunity_type: null, currency: null, amount: '5.00', probability: 10, closed_on: null, lead_source: null, description: null, is_active: true,
    contacts: [], tags: [], teams: [], assigned_to: [], closed_by: null, pipeline_id: defaultPipelineId(acme.orgId), stage: 'PROSPECTING', stage_id: (await inject('GET', '/api/opportunities/pipelines/', admin)).json().pipelines[0].stages[0].id, stage_kind: 'open',
    created_by: acme.admin.profileId, kanban_order: 1, at: FIXED_NOW.toISOString(),
  } }])
  await projections.waitFor(appended.position, 5000)

  t.test('the envelope (§4.3) and the default newest-first page', async (t) => {
    const body = await list()
    t.same(Object.keys(body).sort(), ['accounts_list', 'contacts_list', 'currency', 'lead_source', 'offset', 'opportunities', 'opportunities_count', 'page_number', 'per_page', 'stage', 'tags', 'totals'])
    t.match(body, { opportunities_count: 6, offset: 0, per_page: 10, page_number: [1], accounts_list: [{ id: account, name: 'Initech' }], tags: [{ name: 'cold' }, { name: 'hot' }] })
    t.same(body.stage.map((p: string[]) => p[0]), ['PROSPECTING', 'QUALIFICATION', 'PROPOSAL', 'NEGOTIATION', 'CLOSED_WON', 'CLOSED_LOST'])
    const created = body.opportunities.map((o: { created_at: string }) => o.created_at)
    t.same(created, [...created].sort().reverse(), 'newest first')
    t.match(body.opportunities.find((o: { name: string }) => o.name === 'Epsilon'), { stage_label: 'Negotiation', stage_kind: 'open', line_items_total: '0', days_in_stage: 0, aging_status: 'green' })
    const page = await list('?limit=2&offset=2')
    t.match(page, { opportunities_count: 6, offset: 2, per_page: 2, page_number: [1, 2, 3] })
    t.equal(page.opportunities.length, 2)
    t.equal(page.totals.count, 6, 'totals cover the whole set, not the page')
  })

  t.test('totals (§2.3): numeric strings, null across currencies, by_currency by code, no currency counted as the default', async (t) => {
    const { totals } = await list()
    t.same(totals, {
      count: 6,
      amount_sum: null,
      weighted_sum: null,
      by_currency: [
        { currency: 'EUR', amount_sum: '1000.00', weighted_sum: '1000.00' },
        { currency: 'USD', amount_sum: '165.50', weighted_sum: '43.25' },
      ],
      stalled_count: 0,
    })
    t.same((await list('?stage=CLOSED_LOST')).totals, { count: 1, amount_sum: '0', weighted_sum: '0', by_currency: [{ currency: 'USD', amount_sum: '0', weighted_sum: '0' }], stalled_count: 0 }, 'nothing priced sums to "0"')
    t.match((await list('?open=true')).totals, { count: 4, amount_sum: '165.50', weighted_sum: '43.25' }, 'one currency: the sums')
    t.same((await list('?name=nothing-matches')).totals, { count: 0, amount_sum: '0', weighted_sum: '0', by_currency: [], stalled_count: 0 })
  })

  t.test('the rollups (admin view, unfiltered or open=true) agree with a scan of the same set', async (t) => {
    const scanned = 'created_at__gte=2000-01-01'
    for (const at of [FIXED_NOW, new Date(FIXED_NOW.getTime() + 30 * DAY)]) {
      now = at
      for (const rolledUp of ['', 'open=true']) {
        const [rolled, scan] = [await list(`?${rolledUp}`), await list(`?${rolledUp}&${scanned}`)]
        t.same(rolled.totals, scan.totals, `totals of "${rolledUp}" at ${at.toISOString()}`)
        t.equal(rolled.opportunities_count, scan.opportunities_count)
        const board = async (query: string) => (await inject('GET', `${BASE}kanban/?${query}`, admin)).json().columns.map((c: { item_count: number }) => c.item_count)
        t.same(await board(rolledUp), await board(`${rolledUp}&${scanned}`), 'board counts')
      }
    }
    t.ok((await list('?open=true')).totals.stalled_count > 0, 'the later instant has stalled deals to count')
    now = FIXED_NOW
  })

  t.test('edits, moves and deletes move the rollups by what they changed: still equal to a scan', async (t) => {
    // An organization of its own: the other subtests count Acme's deals.
    const own = (await givenOrganization(app, database.db, 'Initrode')).admin.headers
    const scanned = 'created_at__gte=2000-01-01'
    const agree = async (what: string) => {
      for (const rolledUp of ['', 'open=true']) {
        const [rolled, scan] = [await list(`?${rolledUp}`, own), await list(`?${rolledUp}&${scanned}`, own)]
        t.same(rolled.totals, scan.totals, `${what}: totals of "${rolledUp}"`)
      }
    }
    const a = await id(own, { name: 'Rollup A', amount: '100.10', probability: 30, currency: 'USD', stage: 'PROSPECTING' })
    const b = await id(own, { name: 'Rollup B', amount: '7.25', probability: 55, currency: 'EUR', stage: 'PROPOSAL' })
    const c = await id(own, { name: 'Rollup C', stage: 'QUALIFICATION' })
    const patch = async (deal: string, payload: object) => t.equal((await inject('PATCH', `${BASE}${deal}/`, own, payload)).statusCode, 200)
    const move = async (deal: string, column: string) => t.equal((await inject('PATCH', `${BASE}${deal}/move/`, own, { column_id: column })).statusCode, 200)
    await patch(a, { amount: '250.05' })
    await agree('amount changed within its stage')
    await patch(a, { description: 'nothing the rollups count' })
    await patch(b, { probability: 10, currency: 'USD' })
    await agree('a no-op edit, then probability and currency')
    await move(a, 'NEGOTIATION')
    await move(c, 'PROPOSAL')
    await move(b, 'CLOSED_WON')
    await agree('moves between open stages and into a won one')
    await patch(c, { amount: '12.00' })
    await move(b, 'PROSPECTING')
    await agree('a priced deal, and a won one reopened')
    t.equal((await inject('DELETE', `${BASE}${a}/`, own)).statusCode, 200)
    await agree('a deletion')
    t.match((await list('', own)).totals, { count: 2 }, 'B and C left')
  })

  t.test('visibility: non-admins see deals they created or are assigned to, in rows, counts and totals', async (t) => {
    t.same(await names('', alice.headers), ['Alpha One', 'Delta'])
    t.match((await list('', alice.headers)).totals, { count: 2, amount_sum: '150.50' })
    t.same(await names('', bob.headers), ['Epsilon'])
    t.same(await names('', globex.admin.headers), ['Alpha Globex'])
  })

  t.test('every filter, positive and negative', async (t) => {
    const cases: [string, string[]][] = [
      ['?name=ALPHA', ['Alpha One']],
      ['?search=ta', ['Beta Two', 'Delta']],
      ['?search=initech', []],
      [`?account=${account}`, ['Alpha One']],
      ['?account=not-a-uuid', []],
      [`?account=${randomUUID()}`, []],
      ['?stage=CLOSED', ['Beta Two', 'Gamma']],
      ['?stage=closed', []],
      ['?stage=PROPOSAL', ['Delta']],
      ['?lead_source=CUSTOMER', ['Beta Two']],
      ['?lead_source=call', []],
      [`?tags=${hot}`, ['Alpha One']],
      [`?tags=${hot}&tags=${cold}`, ['Alpha One', 'Beta Two']],
      ['?tags=', ['Alpha One', 'Beta Two', 'Delta', 'Epsilon', 'Gamma', 'Legacy']],
      ['?tags=nope', []],
      [`?assigned_to=${alice.profileId}`, ['Alpha One']],
      [`?assigned_to=${bob.profileId}`, []],
      ['?created_at__gte=2026-11-23', ['Beta Two', 'Delta', 'Epsilon', 'Gamma']],
      ['?created_at__lte=2026-11-22', ['Alpha One', 'Legacy']],
      ['?created_at__gte=yesterday', []],
      ['?closed_on__gte=2026-10-15', ['Beta Two']],
      ['?closed_on__lte=2026-10-15', ['Gamma']],
      ['?closed_on__lte=2026-13-45', []],
      ['?amount__gte=50.5', ['Alpha One', 'Beta Two', 'Delta']],
      ['?amount__lte=10', ['Epsilon', 'Legacy']],
      ['?amount__gte=lots', []],
      ['?amount__gte=10&amount__lte=100&stage=PRO', ['Alpha One', 'Delta']],
      ['?open=true', ['Alpha One', 'Delta', 'Epsilon', 'Legacy']],
      ['?open=false', ['Alpha One', 'Beta Two', 'Delta', 'Epsilon', 'Gamma', 'Legacy']],
      [`?pipeline=${defaultPipelineId(acme.orgId)}`, ['Alpha One', 'Beta Two', 'Delta', 'Epsilon', 'Gamma', 'Legacy']],
      [`?pipeline=${defaultPipelineId(globex.orgId)}`, []],
      ['?cf_region=EMEA', []],
      ['?rotten=true', []],
    ]
    for (const [query, expected] of cases) t.same(await names(query), expected, query)
  })

  t.test('aging and rotten=true follow the clock (§3.2)', async (t) => {
    now = new Date(FIXED_NOW.getTime() + 18 * DAY)
    t.teardown(() => void (now = FIXED_NOW))
    // Delta and Epsilon entered their stages 16 days ago (expected 10: red from 15); Alpha and Legacy 18 days (expected 14: red from 21).
    t.same(await names('?rotten=true'), ['Delta', 'Epsilon'])
    const body = await list('?open=true')
    t.equal(body.totals.stalled_count, 2)
    // The unfiltered list counts from the stall-day rollups, a filter by a scan: both agree on every day around the thresholds, hour by hour.
    for (let hours = 12 * 24; hours <= 24 * 24; hours += 7) {
      now = new Date(FIXED_NOW.getTime() + hours * 3_600_000)
      const [rollup, scan] = await Promise.all([list(''), list('?created_at__gte=2000-01-01')])
      t.equal(rollup.totals.stalled_count, scan.totals.stalled_count, `after ${hours} h: ${scan.totals.stalled_count}`)
    }
    // A stage's new expected_days moves its deals' stall days, in the rollups as in the rows.
    now = new Date(FIXED_NOW.getTime() + 8 * DAY)
    const [pipeline] = (await inject('GET', '/api/opportunities/pipelines/', admin)).json().pipelines
    for (const stage of pipeline.stages.filter((s: { kind: string }) => s.kind === 'open')) t.equal((await inject('PATCH', `/api/opportunities/stages/${stage.id}/`, admin, { expected_days: 2, warning_days: null })).statusCode, 200)
    const [rollup, scan] = await Promise.all([list(''), list('?created_at__gte=2000-01-01')])
    t.equal(rollup.totals.stalled_count, 4, 'every open deal is red once its stage expects 2 days')
    t.equal(scan.totals.stalled_count, 4)
    const byName = Object.fromEntries(body.opportunities.map((o: { name: string; days_in_stage: number; aging_status: string }) => [o.name, [o.days_in_stage, o.aging_status]]))
    t.same(byName, { 'Alpha One': [18, 'yellow'], Legacy: [18, 'yellow'], Delta: [16, 'red'], Epsilon: [16, 'red'] })
  })

  t.test('the board: one column per stage, the same filters and visibility', async (t) => {
    const board = (await inject('GET', `${BASE}kanban/`, admin)).json()
    t.match(board, { mode: 'status', pipeline: { id: defaultPipelineId(acme.orgId), is_default: true }, total_items: 6 })
    t.same(board.columns.map((c: { id: string; item_count: number }) => [c.id, c.item_count]), [['PROSPECTING', 2], ['QUALIFICATION', 0], ['PROPOSAL', 1], ['NEGOTIATION', 1], ['CLOSED_WON', 1], ['CLOSED_LOST', 1]])
    t.same(Object.keys(board.columns[0]).sort(), ['color', 'expected_days', 'id', 'is_status_column', 'item_count', 'items', 'kind', 'name', 'order', 'stage_type', 'warning_days', 'wip_limit'])
    t.same(Object.keys(board.columns[0].items[0]).sort(), ['account', 'aging_status', 'amount', 'assigned_to', 'can_move', 'closed_on', 'created_at', 'currency', 'days_in_stage', 'id', 'kanban_order', 'line_items', 'name', 'next_activity', 'opportunity_amount', 'pipeline', 'probability', 'stage', 'stage_changed_at', 'stage_kind', 'stage_label', 'tags', 'updated_at'])
    const filtered = (await inject('GET', `${BASE}kanban/?tags=${hot}`, admin)).json()
    t.equal(filtered.total_items, 1, 'a filter narrows the board as it narrows the list')
    const aliceBoard = (await inject('GET', `${BASE}kanban/`, alice.headers)).json()
    t.same(aliceBoard.columns.flatMap((c: { items: { name: string }[] }) => c.items.map((i) => i.name)).sort(), ['Alpha One', 'Delta'])
    t.equal((await inject('GET', `${BASE}kanban/?pipeline=${defaultPipelineId(globex.orgId)}`, admin)).statusCode, 404, "another organization's pipeline")
    t.equal((await inject('GET', `${BASE}kanban/?pipeline=nope`, admin)).statusCode, 404)
  })

  t.test('the board shows at most 100 cards per column, by kanban order, with the full item_count', async (t) => {
    const pipeline = (await inject('POST', '/api/opportunities/pipelines/', admin, { name: 'Busy' })).json()
    const ids: string[] = []
    for (let i = 0; i < 103; i++) ids.push(await id(admin, { name: `Busy ${i}`, pipeline: pipeline.id }))
    await inject('PATCH', `${BASE}${ids[50]}/move/`, admin, { column_id: 'PROSPECTING', kanban_order: -1 })
    await inject('PATCH', `${BASE}${ids[0]}/move/`, admin, { column_id: 'PROSPECTING', above_id: ids[102] })
    const board = (await inject('GET', `${BASE}kanban/?pipeline=${pipeline.id}`, admin)).json()
    const first = board.columns[0]
    t.equal(first.item_count, 103)
    t.equal(first.items.length, 100)
    t.equal(first.items[0].id, ids[50], 'a card moved to the top comes first')
    const orders = first.items.map((c: { kanban_order: number }) => c.kanban_order)
    t.same(orders, [...orders].sort((a: number, b: number) => a - b), 'cards in kanban order')
    const all = (await list(`?pipeline=${pipeline.id}&limit=200`)).opportunities.length
    t.equal(all, 103)
  })

  t.test('the deals read model rebuilt from the log is identical', async (t) => {
    const live = await rebuildEqualsLive(t, { db: database.db, store }, opportunitiesProjector, { tables: ['opportunities'] })
    t.ok(live.opportunities!.length > 100)
  })
})
