import { sql } from 'kysely'
import t from 'tap'
import { leadPipelines } from '../../src/commands/pipeline/kinds.ts'
import { leadsProjector } from '../../src/projections/lead/leads.ts'
import { givenTwoOrganizations } from '../helpers/fixtures.ts'
import type { Headers } from '../helpers/fixtures.ts'
import { rebuildEqualsLive } from '../helpers/read-models.ts'

type Card = { id: string; first_name: string; pipeline: string | null; stage: string | null; stage_label: string | null; stage_kind: string | null; kanban_order: number; stage_changed_at: string | null; can_move: boolean; status: string }
type Column = { id: string; name: string; order: number; kind: string; item_count: number; items: Card[] }
type Board = { mode: string; pipeline: { id: string; name: string; is_default: boolean } | null; columns: Column[]; total_items: number }

const K = '/api/leads/kanban/'

t.test('the lead board: GET /api/leads/kanban/ and PATCH /api/leads/{id}/move/', async (t) => {
  const { app, database, store, acme, globex, alice, bob } = await givenTwoOrganizations(t)
  const admin = acme.admin.headers
  type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE'
  const call = (method: Method, url: string, payload?: object, headers: Headers = admin) => app.inject({ method, url, headers, ...(payload && { payload }) })
  const board = async (query = '', headers: Headers = admin) => {
    const res = await call('GET', `${K}${query}`, undefined, headers)
    t.equal(res.statusCode, 200, res.body)
    return res.json() as Board
  }
  const column = (b: Board, id: string) => b.columns.find((c) => c.id === id)!
  const names = (b: Board, id: string) => column(b, id).items.map((c) => c.first_name)
  const create = async (payload: object, headers: Headers = admin) => (await call('POST', '/api/leads/', payload, headers)).json().id as string
  const move = (id: string, body: object, headers: Headers = admin) => call('PATCH', `/api/leads/${id}/move/`, body, headers)

  const ann = await create({ first_name: 'Ann', city: 'Austin', assigned_to: [alice.profileId] })
  const ben = await create({ first_name: 'Ben', city: 'Boston', status: 'in process' })
  const cid = await create({ first_name: 'Cid', city: 'Austin' }, bob.headers)
  await create({ first_name: 'Ext' }, globex.admin.headers)
  // Creation times a minute apart, so the unplaced order (creation time) is deterministic.
  for (const [i, id] of [ann, ben, cid].entries()) await sql`UPDATE leads SET kanban_order = ${1_000_000 + i * 60_000} WHERE id = ${id}`.execute(database.db)

  t.test('the default board: a column per stage; leads never moved wait in its first open stage', async (t) => {
    const b = await board()
    t.match(b, { mode: 'pipeline', pipeline: { id: leadPipelines.defaultId(acme.orgId), name: 'Default lead pipeline', is_default: true }, total_items: 3 })
    t.same(b.columns.map((c) => [c.id, c.name, c.order, c.kind, c.item_count]), [['NEW', 'New', 1, 'open', 3], ['CONTACTED', 'Contacted', 2, 'open', 0], ['QUALIFIED', 'Qualified', 3, 'open', 0], ['CONVERTED', 'Converted', 4, 'won', 0], ['DISQUALIFIED', 'Disqualified', 5, 'lost', 0]])
    t.match(column(b, 'NEW'), { color: null, stage_type: 'open', is_status_column: true, wip_limit: null, expected_days: null })
    t.same(names(b, 'NEW'), ['Ann', 'Ben', 'Cid'], 'by kanban order')
    t.match(column(b, 'NEW').items[0], { pipeline: b.pipeline!.id, stage: 'NEW', stage_label: 'New', stage_kind: 'open', stage_changed_at: null, days_in_stage: 0, aging_status: 'green', can_move: true, city: 'Austin' })
    t.match((await call('GET', `/api/leads/${ann}/`)).json().lead_obj, { pipeline: null, stage: null, stage_changed_at: null }, 'not placed until moved')
  })

  t.test('move: into another stage, then placed by above_id, below_id, kanban_order', async (t) => {
    const res = await move(ann, { column_id: 'CONTACTED' })
    t.equal(res.statusCode, 200, res.body)
    t.match(res.json(), { error: false, message: 'Lead moved', lead: { id: ann, stage: 'CONTACTED', stage_label: 'Contacted', stage_kind: 'open', can_move: true } })
    t.ok(res.json().lead.stage_changed_at)
    t.match((await call('GET', `/api/leads/${ann}/`)).json().lead_obj, { pipeline: leadPipelines.defaultId(acme.orgId), stage: 'CONTACTED' })
    t.equal((await move(ben, { column_id: 'CONTACTED' })).statusCode, 200)
    t.same(names(await board(), 'CONTACTED'), ['Ann', 'Ben'], 'a card entering a column goes last')
    t.equal((await move(cid, { column_id: 'CONTACTED', above_id: ann })).statusCode, 200)
    t.same(names(await board(), 'CONTACTED'), ['Ann', 'Cid', 'Ben'], 'above_id: right below that card')
    t.equal((await move(ben, { column_id: 'CONTACTED', below_id: ann })).statusCode, 200)
    t.same(names(await board(), 'CONTACTED'), ['Ben', 'Ann', 'Cid'], 'below_id: right above that card')
    t.equal((await move(cid, { column_id: 'CONTACTED', kanban_order: -5 })).statusCode, 200)
    t.same(names(await board(), 'CONTACTED'), ['Cid', 'Ben', 'Ann'], 'kanban_order wins')
    t.same(names(await board(), 'NEW'), [])
    const won = await move(cid, { column_id: 'CONVERTED' })
    t.match(won.json(), { lead: { stage: 'CONVERTED', stage_kind: 'won', status: 'assigned', aging_status: null } }, 'a won stage does not convert the lead')
  })

  t.test('move: refusals', async (t) => {
    t.match((await move(ann, { column_id: 'PROSPECTING' })).json(), { error: true, errors: { column_id: [String] } })
    t.equal((await move(ann, {})).statusCode, 400)
    t.match((await move(ann, { column_id: 'NEW', above_id: cid })).json(), { error: true, errors: { above_id: [String] } }, 'above_id must be a card of the target column')
    t.match((await move(ann, { column_id: 'NEW', pipeline: leadPipelines.defaultId(globex.orgId) })).json(), { error: true, errors: { pipeline: [String] } }, "another organization's pipeline in the body")
    t.equal((await move(ben, { column_id: 'NEW' }, bob.headers)).statusCode, 403, 'neither creator nor assignee')
    t.equal((await move(ann, { column_id: 'NEW' }, alice.headers)).statusCode, 200, 'an assignee may')
    t.equal((await move(ann, { column_id: 'NEW' }, globex.admin.headers)).statusCode, 404, 'another organization')
    t.equal((await call('PATCH', '/api/leads/not-a-uuid/move/', { column_id: 'NEW' })).statusCode, 404)
  })

  t.test('another pipeline: moved into by naming it; its board shows only its leads', async (t) => {
    const other = (await call('POST', '/api/leads/pipelines/', { name: 'Partners' })).json() as { id: string }
    t.equal((await move(ben, { pipeline: other.id, column_id: 'QUALIFIED' })).statusCode, 200)
    const b = await board(`?pipeline=${other.id}`)
    t.match(b, { pipeline: { id: other.id, name: 'Partners', is_default: false }, total_items: 1 })
    t.same(names(b, 'QUALIFIED'), ['Ben'])
    t.notOk(column(await board(), 'CONTACTED').items.some((c) => c.first_name === 'Ben'), 'gone from the default board')
    t.equal((await move(ben, { column_id: 'NEW' })).statusCode, 200, 'later moves stay in its pipeline')
    t.same(names(await board(`?pipeline=${other.id}`), 'NEW'), ['Ben'])
    t.equal((await call('GET', `${K}?pipeline=${leadPipelines.defaultId(globex.orgId)}`)).statusCode, 404, "another organization's pipeline")
    t.equal((await call('GET', `${K}?pipeline=nope`)).statusCode, 404)
    t.equal((await call('GET', `${K}?pipeline=${(await call('GET', '/api/opportunities/pipelines/')).json().pipelines[0].id}`)).statusCode, 404, 'a deal pipeline is no lead board')
  })

  t.test('filters and visibility narrow the board as the list', async (t) => {
    const all = await board()
    t.equal(all.total_items, 2)
    t.equal((await board('?city=austin')).total_items, 2)
    t.equal((await board('?city=boston')).total_items, 0)
    t.equal((await board('?search=ann')).total_items, 1)
    t.equal((await board('?status=closed')).total_items, 0)
    t.equal((await board(`?assigned_to=${alice.profileId}`)).total_items, 1)
    t.equal((await board('?cf_nope=1')).total_items, 0, 'an unknown custom field matches nothing')
    const bobs = await board('', bob.headers)
    t.same(bobs.columns.flatMap((c) => c.items.map((i) => i.first_name)), ['Cid'], 'a member sees what they created or are assigned to')
    t.same((await board('', globex.admin.headers)).columns.flatMap((c) => c.items.map((i) => i.first_name)), ['Ext'])
  })

  t.test('mode=status: a column per lead status', async (t) => {
    const b = await board('?mode=status')
    t.match(b, { mode: 'status', pipeline: null, total_items: 3 })
    t.same(b.columns.map((c) => [c.id, c.kind, c.item_count]), [['assigned', 'open', 2], ['in process', 'open', 1], ['converted', 'won', 0], ['recycled', 'open', 0], ['closed', 'lost', 0]])
    t.match(column(b, 'in process').items[0], { first_name: 'Ben', stage: 'NEW', stage_label: 'New' })
    const defaultOnly = await board(`?mode=status&pipeline=${leadPipelines.defaultId(acme.orgId)}`)
    t.equal(defaultOnly.total_items, 2, "with a pipeline: only that board's leads")
    t.equal((await call('GET', `${K}?mode=sideways`)).statusCode, 400)
  })

  t.test('the leads read model rebuilt from the log gives the same board', async (t) => {
    // The creation-time orders set by hand above are not in the log: no rows compared, only the board's columns, cards and stages.
    const shape = (b: Board) => b.columns.map((c) => [c.id, c.item_count, c.items.map((i) => [i.id, i.stage, i.stage_changed_at])])
    await rebuildEqualsLive(t, { db: database.db, store }, leadsProjector, { tables: [], answers: async () => [shape(await board()), shape(await board('?mode=status'))] })
  })
})
