import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import t from 'tap'
import { opportunityStreams } from '../../src/commands/opportunity/opportunity.ts'
import { collectionClient, givenTwoOrganizations } from '../helpers/fixtures.ts'
import type { Headers } from '../helpers/fixtures.ts'

const BASE = '/api/opportunities/'
const won = { stage: 'CLOSED_WON', amount: 500, closed_on: '2026-11-20' }

t.test('deals: create, detail, PUT, PATCH, delete (§4.4)', async (t) => {
  const { app, database, store, acme, globex, alice, bob } = await givenTwoOrganizations(t)
  const admin = acme.admin.headers
  const deals = collectionClient(app, BASE)
  const { inject } = deals
  const createOk = async (headers: Headers, payload: object) => {
    const res = await deals.create(headers, payload)
    t.equal(res.statusCode, 200, `created: ${res.body}`)
    return res.json().id as string
  }
  const obj = async (headers: Headers, id: string) => (await deals.detail(headers, id)).opportunity_obj
  const acmeAccount = (await deals.inject('POST', '/api/accounts/', admin, { name: 'Acme Corp' })).json().id as string
  const globexAccount = (await deals.inject('POST', '/api/accounts/', globex.admin.headers, { name: 'Globex Corp' })).json().id as string
  const acmeTag = (await deals.inject('POST', '/api/tags/', admin, { name: 'hot' })).json().id as string
  const globexTag = (await deals.inject('POST', '/api/tags/', globex.admin.headers, { name: 'hot' })).json().id as string
  const acmeContact = (await deals.inject('POST', '/api/contacts/', admin, { first_name: 'Carla' })).json().id as string
  const globexContact = (await deals.inject('POST', '/api/contacts/', globex.admin.headers, { first_name: 'Gil' })).json().id as string
  const acmeTeam = (await deals.inject('POST', '/api/teams/', admin, { name: 'Sales', users: [] })).json().id as string
  const globexTeam = (await deals.inject('POST', '/api/teams/', globex.admin.headers, { name: 'Sales', users: [] })).json().id as string

  t.test('create answers {error, message, id}; the detail shows every field and the defaults', async (t) => {
    const res = await deals.create(alice.headers, { name: 'Big deal', account: acmeAccount, tags: [acmeTag], contacts: [acmeContact], teams: [acmeTeam], assigned_to: [bob.profileId], amount: '1200.5', id: randomUUID(), created_by: bob.profileId, closed_by: bob.profileId })
    t.equal(res.statusCode, 200)
    t.match(res.json(), { error: false, message: String, id: /^[0-9a-f-]{36}$/ })
    const detail = await deals.detail(alice.headers, res.json().id)
    t.match(detail.opportunity_obj, {
      id: res.json().id,
      name: 'Big deal',
      account: { id: acmeAccount, name: 'Acme Corp' },
      stage: 'PROSPECTING',
      stage_label: 'Prospecting',
      stage_kind: 'open',
      currency: 'USD',
      amount: '1200.50',
      probability: 10,
      closed_on: null,
      is_active: true,
      contacts: [{ id: acmeContact, first_name: 'Carla' }],
      tags: [{ id: acmeTag, name: 'hot' }],
      teams: [{ id: acmeTeam, name: 'Sales' }],
      assigned_to: [{ id: bob.profileId }],
      created_by: { id: alice.profileId },
      closed_by: null,
      org: { id: acme.orgId, name: 'Acme' },
      created_on_arrow: 'just now',
      amount_source: 'MANUAL',
      days_in_stage: 0,
      aging_status: 'green',
      line_items: [],
      line_items_total: '0',
      custom_fields: {},
    }, 'client-sent id, created_by and closed_by are ignored')
    t.equal(detail.opportunity_obj.stage_changed_at, detail.opportunity_obj.created_at)
    t.same(detail.stage.map((pair: string[]) => pair[0]), ['PROSPECTING', 'QUALIFICATION', 'PROPOSAL', 'NEGOTIATION', 'CLOSED_WON', 'CLOSED_LOST'])
    t.match(detail, { comments: [], attachments: [], comment_permission: true, custom_field_definitions: [], users_mention: [{ user__email: 'alice@acme.test' }] })
    t.ok(detail.lead_source.some((p: string[]) => p[0] === 'EXISTING CUSTOMER'))
    t.ok(detail.currency.some((p: string[]) => p[0] === 'EUR'))
    const res2 = await inject('GET', `${BASE}${res.json().id}/`, alice.headers)
    t.match(res2.headers.etag, /^"\d+"$/)
  })

  t.test('validation: 400 in the error-flag shape naming the field', async (t) => {
    const bad = async (payload: object, field: string) => {
      const res = await deals.create(admin, payload)
      t.equal(res.statusCode, 400, `${JSON.stringify(payload)} → 400`)
      t.ok(res.json().error === true && field in res.json().errors, `names ${field}: ${res.body}`)
    }
    await bad({}, 'name')
    await bad({ name: '  ' }, 'name')
    await bad({ name: 'W1', stage: 'CLOSED_WON' }, 'closed_on')
    await bad({ name: 'W2', stage: 'CLOSED_WON', closed_on: '2026-11-20' }, 'amount')
    await bad({ name: 'W3', ...won, amount: 0 }, 'amount')
    await bad({ name: 'L1', stage: 'CLOSED_LOST' }, 'closed_on')
    await bad({ name: 'S1', stage: 'closed_won' }, 'stage')
    await bad({ name: 'A1', amount: -1 }, 'amount')
    await bad({ name: 'A2', amount: '12.345' }, 'amount')
    await bad({ name: 'P1', probability: 101 }, 'probability')
    await bad({ name: 'P2', probability: 1.5 }, 'probability')
    await bad({ name: 'C1', currency: 'XXXX' }, 'currency')
    await bad({ name: 'D1', closed_on: '20-11-2026' }, 'closed_on')
    await bad({ name: 'E1', opportunity_type: 'NEW' }, 'opportunity_type')
    await bad({ name: 'E2', lead_source: 'call' }, 'lead_source')
    await bad({ name: 'R1', account: globexAccount }, 'account')
    await bad({ name: 'R2', tags: [globexTag] }, 'tags')
    await bad({ name: 'R3', contacts: [globexContact] }, 'contacts')
    await bad({ name: 'R4', teams: [globexTeam] }, 'teams')
    await bad({ name: 'R5', assigned_to: [globex.admin.profileId] }, 'assigned_to')
    await bad({ name: 'R6', tags: ['not-a-uuid'] }, 'tags')
    await bad({ name: 'R7', pipeline: randomUUID() }, 'pipeline')
    const id = await createOk(admin, { name: 'Won deal', ...won })
    t.match(await obj(admin, id), { stage: 'CLOSED_WON', stage_kind: 'won', probability: 100, closed_by: { id: acme.admin.profileId }, currency: 'USD' })
  })

  t.test('names are unique per organization, case-insensitively; a deleted deal frees its name', async (t) => {
    const id = await createOk(admin, { name: 'Unique Co' })
    t.match((await deals.create(alice.headers, { name: 'UNIQUE co' })).json(), { error: true, errors: { name: [String] } })
    await createOk(globex.admin.headers, { name: 'Unique Co' })
    const other = await createOk(admin, { name: 'Other Co' })
    t.equal((await inject('PATCH', `${BASE}${other}/`, admin, { name: 'unique CO' })).statusCode, 400, 'a rename to a taken name')
    t.equal((await inject('DELETE', `${BASE}${id}/`, admin)).statusCode, 200)
    t.equal((await inject('PATCH', `${BASE}${other}/`, admin, { name: 'unique CO' })).statusCode, 200, 'the name is free after the delete')
  })

  t.test('404: missing, other organization, non-uuid ids', async (t) => {
    const id = await createOk(admin, { name: 'Mine' })
    for (const [method, url] of [['GET', `${BASE}${id}/`], ['PATCH', `${BASE}${id}/`], ['PUT', `${BASE}${id}/`], ['DELETE', `${BASE}${id}/`], ['PATCH', `${BASE}${id}/move/`]] as const) {
      const body = url.endsWith('/move/') ? { column_id: 'PROPOSAL' } : method === 'PUT' || method === 'PATCH' ? { name: 'x' } : undefined
      const res = await inject(method, url, globex.admin.headers, body)
      t.equal(res.statusCode, 404, `${method} ${url} from another org`)
      t.match(res.json(), { error: true, errors: String })
    }
    t.equal((await inject('GET', `${BASE}${randomUUID()}/`, admin)).statusCode, 404)
    t.equal((await inject('GET', `${BASE}12345/`, admin)).statusCode, 404)
    t.equal((await inject('GET', `${BASE}${id.toUpperCase()}/`, admin)).statusCode, 200, 'an uppercase uuid resolves')
    t.match(await obj(admin, id), { name: 'Mine' }, 'nothing changed')
  })

  t.test('403: detail, PUT, PATCH and move need admin, creator or assignee; DELETE admin, superuser or creator', async (t) => {
    const id = await createOk(alice.headers, { name: 'Alice deal', assigned_to: [bob.profileId] })
    const carol = await acme.addMember('carol@acme.test')
    for (const [method, url, payload] of [['GET', `${BASE}${id}/`], ['PUT', `${BASE}${id}/`, { name: 'x' }], ['PATCH', `${BASE}${id}/`, { name: 'x' }], ['PATCH', `${BASE}${id}/move/`, { column_id: 'PROPOSAL' }], ['DELETE', `${BASE}${id}/`]] as const) {
      const res = await inject(method, url, carol.headers, payload)
      t.equal(res.statusCode, 403, `${method} ${url} by a stranger`)
      t.match(res.json(), { error: true, errors: String })
    }
    t.equal((await inject('PATCH', `${BASE}${id}/`, bob.headers, { description: 'by the assignee' })).statusCode, 200)
    t.equal((await inject('PATCH', `${BASE}${id}/move/`, bob.headers, { column_id: 'PROPOSAL' })).statusCode, 200)
    t.equal((await inject('DELETE', `${BASE}${id}/`, bob.headers)).statusCode, 403, 'an assignee may not delete')
    await sql`UPDATE users SET is_superuser = true WHERE id = ${carol.userId}`.execute(database.db)
    t.equal((await inject('DELETE', `${BASE}${id}/`, carol.headers)).statusCode, 200, 'a superuser may')
    t.equal((await inject('GET', `${BASE}${id}/`, admin)).statusCode, 404, 'a deleted deal is gone')
    const mine = await createOk(alice.headers, { name: 'Alice deal 2' })
    t.match((await inject('DELETE', `${BASE}${mine}/`, alice.headers)).json(), { error: false, message: String }, 'the creator may')
  })

  t.test('PUT replaces, PATCH merges; relation lists replace the previous set', async (t) => {
    const id = await createOk(admin, { name: 'Edit me', tags: [acmeTag], assigned_to: [alice.profileId], description: 'd', lead_source: 'CALL' })
    t.equal((await inject('PATCH', `${BASE}${id}/`, admin, { description: 'changed' })).statusCode, 200)
    t.match(await obj(admin, id), { description: 'changed', tags: [{ id: acmeTag }], assigned_to: [{ id: alice.profileId }], lead_source: 'CALL' })
    t.equal((await inject('PATCH', `${BASE}${id}/`, admin, { assigned_to: [bob.profileId] })).statusCode, 200)
    t.match(await obj(admin, id), { assigned_to: [{ id: bob.profileId }], tags: [{ id: acmeTag }] })
    const res = await inject('PUT', `${BASE}${id}/`, admin, { name: 'Edit me' })
    t.same(res.json(), { error: false, message: 'Opportunity updated' })
    t.match(await obj(admin, id), { description: null, tags: [], assigned_to: [], lead_source: null, stage: 'PROSPECTING', currency: 'USD' })
  })

  t.test('stage changes by PATCH: closed_by, probability, back to open', async (t) => {
    const id = await createOk(admin, { name: 'Stages', probability: 10, assigned_to: [alice.profileId] })
    t.match((await inject('PATCH', `${BASE}${id}/`, alice.headers, { stage: 'CLOSED_WON' })).json(), { error: true, errors: { amount: [String], closed_on: [String] } })
    t.equal((await inject('PATCH', `${BASE}${id}/`, alice.headers, won)).statusCode, 200)
    t.match(await obj(admin, id), { stage: 'CLOSED_WON', probability: 10, closed_by: { id: alice.profileId }, aging_status: null }, 'probability 10 is kept; closed_by is the caller')
    t.equal((await inject('PATCH', `${BASE}${id}/`, admin, { stage: 'PROPOSAL' })).statusCode, 200)
    t.match(await obj(admin, id), { stage: 'PROPOSAL', closed_by: null })
    const events = await store.readStream(opportunityStreams.stream(id))
    t.same(events.map((e) => e.type), ['OpportunityCreated', 'OpportunityUpdated', 'OpportunityStageChanged', 'OpportunityUpdated', 'OpportunityStageChanged'])
    t.match(events[2]!.data, { from: { stage: 'PROSPECTING', stage_kind: 'open' }, to: { stage: 'CLOSED_WON', stage_kind: 'won' }, by: alice.profileId })
    t.match(events[1]!.metadata, { actorId: alice.profileId, orgId: acme.orgId })
  })

  t.test('pipeline changes (§2.1): need a stage of the new pipeline', async (t) => {
    const other = (await inject('POST', '/api/opportunities/pipelines/', admin, { name: 'Renewals' })).json()
    const id = await createOk(admin, { name: 'Mover' })
    t.match((await inject('PATCH', `${BASE}${id}/`, admin, { pipeline: other.id })).json(), { errors: { stage: [String] } })
    t.equal((await inject('PATCH', `${BASE}${id}/`, admin, { pipeline: other.id, stage: 'PROPOSAL' })).statusCode, 200)
    t.match(await obj(admin, id), { pipeline: other.id, stage: 'PROPOSAL' })
    const globexPipeline = (await inject('POST', '/api/opportunities/pipelines/', globex.admin.headers, { name: 'Theirs' })).json()
    t.match((await inject('PATCH', `${BASE}${id}/`, admin, { pipeline: globexPipeline.id, stage: 'PROPOSAL' })).json(), { error: true, errors: { pipeline: [String] } })
  })

  t.test('If-Match: 412 once the deal changed; without it last writer wins', async (t) => {
    const id = await createOk(admin, { name: 'Etag' })
    const etag = (await inject('GET', `${BASE}${id}/`, admin)).headers.etag as string
    t.equal((await inject('PATCH', `${BASE}${id}/`, { ...admin, 'if-match': etag }, { description: 'first' })).statusCode, 200)
    const stale = await inject('PATCH', `${BASE}${id}/`, { ...admin, 'if-match': etag }, { description: 'second' })
    t.equal(stale.statusCode, 412)
    t.match(stale.json(), { error: true })
    t.equal((await inject('PATCH', `${BASE}${id}/move/`, { ...admin, 'if-match': etag }, { column_id: 'PROPOSAL' })).statusCode, 412)
    t.match(await obj(admin, id), { description: 'first', stage: 'PROSPECTING' })
    const fresh = (await inject('GET', `${BASE}${id}/`, admin)).headers.etag as string
    t.equal((await inject('PUT', `${BASE}${id}/`, { ...admin, 'if-match': fresh }, { name: 'Etag' })).statusCode, 200)
  })
})

t.test('board moves (§4.7)', async (t) => {
  const { app, acme, alice } = await givenTwoOrganizations(t)
  const admin = acme.admin.headers
  const { inject, create, detail } = collectionClient(app, BASE)
  const newDeal = async (payload: object) => (await create(admin, payload)).json().id as string
  const moveTo = (id: string, body: object, headers: Headers = admin) => inject('PATCH', `${BASE}${id}/move/`, headers, body)

  t.test('answers the card; into lost fills closed_on with today and closed_by; into won without amount is 400', async (t) => {
    const id = await newDeal({ name: 'Card', assigned_to: [alice.profileId] })
    const res = await moveTo(id, { column_id: 'CLOSED_LOST' }, alice.headers)
    t.equal(res.statusCode, 200)
    t.match(res.json(), { error: false, message: String, opportunity: { id, stage: 'CLOSED_LOST', stage_kind: 'lost', closed_on: '2026-11-22', can_move: true, aging_status: null } })
    t.match((await detail(admin, id)).opportunity_obj, { closed_by: { id: alice.profileId } })
    t.equal((await moveTo(id, { column_id: 'PROSPECTING' })).statusCode, 200)
    t.match((await detail(admin, id)).opportunity_obj, { closed_by: null, closed_on: '2026-11-22' })
    const noAmount = await moveTo(id, { column_id: 'CLOSED_WON' })
    t.equal(noAmount.statusCode, 400)
    t.match(noAmount.json(), { error: true, errors: { amount: [String] } })
    for (const column of ['closed_won', 'NOPE', '']) t.equal((await moveTo(id, { column_id: column })).statusCode, 400, `column_id "${column}"`)
    t.equal((await moveTo(id, {})).statusCode, 400, 'column_id is required')
  })

  t.test('placement: kanban_order wins, above_id, below_id, the end of the column', async (t) => {
    const [a, b, c] = [await newDeal({ name: 'A' }), await newDeal({ name: 'B' }), await newDeal({ name: 'C' })]
    t.equal((await moveTo(a, { column_id: 'PROPOSAL', kanban_order: 100 })).json().opportunity.kanban_order, 100)
    t.equal((await moveTo(b, { column_id: 'PROPOSAL' })).json().opportunity.kanban_order, 1100, 'no hint: the end of the column')
    t.equal((await moveTo(c, { column_id: 'PROPOSAL', above_id: a })).json().opportunity.kanban_order, 600, 'right below A, midway to B')
    t.equal((await moveTo(c, { column_id: 'PROPOSAL', below_id: a })).json().opportunity.kanban_order, -900, 'right above A, the first card')
    t.equal((await moveTo(c, { column_id: 'PROPOSAL', above_id: b })).json().opportunity.kanban_order, 2100, 'below the last card')
    t.equal((await moveTo(c, { column_id: 'PROPOSAL', above_id: randomUUID() })).statusCode, 400, 'a neighbour that is not in the column')
  })
})

t.test('a board move answers the card the board then shows (built from the move, not read again)', async (t) => {
  // Time passes between the writes, so a stage change's time shows in the card (stage_changed_at, days_in_stage).
  let now = new Date('2026-11-02T09:00:00Z')
  const { app, acme, alice } = await givenTwoOrganizations(t, { clock: () => now })
  const admin = acme.admin.headers
  const { inject, create } = collectionClient(app, BASE)
  const newDeal = async (payload: object) => (await create(admin, payload)).json().id as string
  const board = async (id: string) => (await inject('GET', `${BASE}kanban/`, admin)).json().columns.flatMap((c: { items: { id: string }[] }) => c.items).find((c: { id: string }) => c.id === id)
  const id = await newDeal({ name: 'Shown', amount: 1250.5, probability: 30, assigned_to: [alice.profileId] })
  const withItems = await newDeal({ name: 'Itemised' })
  t.equal((await inject('POST', `${BASE}${withItems}/line-items/`, admin, { name: 'Seat', quantity: 3, unit_price: '19.99' })).statusCode, 201)
  for (const [deal, body] of [[id, { column_id: 'PROPOSAL' }], [id, { column_id: 'CLOSED_WON' }], [id, { column_id: 'CLOSED_WON', kanban_order: 7 }], [withItems, { column_id: 'NEGOTIATION' }]] as const) {
    now = new Date(now.getTime() + 3 * 86_400_000)
    const answer = (await inject('PATCH', `${BASE}${deal}/move/`, admin, body)).json().opportunity
    t.same(answer, await board(deal), `${answer.name} into ${body.column_id}`)
  }
})

t.test('GET /{id}/?as_of=: the deal as it stood at an instant, folded from its events', async (t) => {
  let now = new Date('2026-11-01T10:00:00Z')
  const { app, acme, globex } = await givenTwoOrganizations(t, { clock: () => now })
  const admin = acme.admin.headers
  const { inject, create } = collectionClient(app, BASE)
  const id = (await create(admin, { name: 'Time traveller', amount: 100 })).json().id as string
  now = new Date('2026-11-05T10:00:00Z')
  t.equal((await inject('PATCH', `${BASE}${id}/`, admin, { name: 'Renamed', stage: 'PROPOSAL', amount: 250 })).statusCode, 200)
  now = new Date('2026-11-10T10:00:00Z')
  const at = async (instant: string) => inject('GET', `${BASE}${id}/?as_of=${encodeURIComponent(instant)}`, admin)
  t.match((await at('2026-11-03T00:00:00Z')).json().opportunity_obj, { name: 'Time traveller', stage: 'PROSPECTING', amount: '100.00', days_in_stage: 1 })
  t.match((await at('2026-11-06T00:00:00+00:00')).json().opportunity_obj, { name: 'Renamed', stage: 'PROPOSAL', amount: '250.00' })
  t.match((await inject('GET', `${BASE}${id}/`, admin)).json().opportunity_obj, { name: 'Renamed', days_in_stage: 5 }, 'without as_of: now')
  t.equal((await at('2026-10-01T00:00:00Z')).statusCode, 404, 'before it existed')
  t.equal((await at('yesterday')).statusCode, 400)
  t.equal((await inject('GET', `${BASE}${id}/?as_of=2026-11-03T00:00:00Z`, globex.admin.headers)).statusCode, 404, 'another org')
})
