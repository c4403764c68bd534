import t from 'tap'
import { leadPipelines } from '../../src/commands/pipeline/kinds.ts'
import { leadPipelinesProjector } from '../../src/projections/pipeline/pipelines.ts'
import { givenTwoOrganizations } from '../helpers/fixtures.ts'
import { rebuildEqualsLive } from '../helpers/read-models.ts'

type StageBody = { id: string; code: string; label: string; order: number; kind: string; expected_days: number | null; warning_days: number | null; probability: number | null }
type PipelineBody = { id: string; name: string; is_default: boolean; stages: StageBody[] }

const P = '/api/leads/pipelines/'
const S = '/api/leads/stages/'
const SEEDED = ['NEW', 'CONTACTED', 'QUALIFIED', 'CONVERTED', 'DISQUALIFIED']

t.test('/api/leads/pipelines/ and /api/leads/stages/', async (t) => {
  const { app, database, store, acme, globex, alice } = await givenTwoOrganizations(t)
  const admin = acme.admin.headers
  type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE'
  const call = (method: Method, url: string, payload?: object, headers: Record<string, string> = admin) => app.inject({ method, url, headers, ...(payload && { payload }) })
  const codes = (p: PipelineBody) => p.stages.map((s) => s.code)
  const stage = (p: PipelineBody, code: string) => p.stages.find((s) => s.code === code)!
  const newPipeline = async (name: string) => (await call('POST', P, { name })).json() as PipelineBody
  const newLead = async (first_name: string) => (await call('POST', '/api/leads/', { first_name })).json().id as string

  t.test('the default lead pipeline is created on first use, seeded with the lead stages', async (t) => {
    const first = await Promise.all([admin, alice.headers, admin].map((h) => call('GET', P, undefined, h)))
    t.same(first.map((r) => r.statusCode), [200, 200, 200])
    t.same((await store.readStream(leadPipelines.streams.stream(leadPipelines.defaultId(acme.orgId)))).map((e) => e.type), ['PipelineCreated'], 'once, in its own stream category')
    const [pipeline] = first[0]!.json().pipelines as PipelineBody[]
    t.match(pipeline, { id: leadPipelines.defaultId(acme.orgId), name: 'Default lead pipeline', is_default: true })
    t.same(pipeline!.stages.map(({ id: _id, ...s }) => s), [
      { code: 'NEW', label: 'New', order: 1, kind: 'open', expected_days: null, warning_days: null, probability: null },
      { code: 'CONTACTED', label: 'Contacted', order: 2, kind: 'open', expected_days: null, warning_days: null, probability: null },
      { code: 'QUALIFIED', label: 'Qualified', order: 3, kind: 'open', expected_days: null, warning_days: null, probability: null },
      { code: 'CONVERTED', label: 'Converted', order: 4, kind: 'won', expected_days: null, warning_days: null, probability: 100 },
      { code: 'DISQUALIFIED', label: 'Disqualified', order: 5, kind: 'lost', expected_days: null, warning_days: null, probability: 0 },
    ])
  })

  t.test('deal and lead pipelines never mix', async (t) => {
    const leadDefault = leadPipelines.defaultId(acme.orgId)
    const deals = (await call('GET', '/api/opportunities/pipelines/')).json().pipelines as PipelineBody[]
    t.same(deals.map((p) => p.name), ['Default pipeline'], 'the deal list has no lead pipeline')
    t.equal((await call('GET', `/api/opportunities/pipelines/${leadDefault}/`)).statusCode, 404)
    t.equal((await call('GET', `${P}${deals[0]!.id}/`)).statusCode, 404, 'nor the lead routes a deal pipeline')
    t.equal((await call('DELETE', `/api/opportunities/stages/${(await call('GET', `${P}${leadDefault}/`)).json().stages[0].id}/`)).statusCode, 404)
    const deal = await call('POST', '/api/opportunities/', { name: 'Sneaky', pipeline: leadDefault })
    t.equal(deal.statusCode, 400, 'a deal cannot enter a lead pipeline')
  })

  t.test('POST, GET one, PUT renames (PATCH is not a route here), DELETE', async (t) => {
    const created = await call('POST', P, { name: ' Inbound ' })
    t.equal(created.statusCode, 201)
    const p = created.json() as PipelineBody
    t.match(p, { name: 'Inbound', is_default: false })
    t.same(codes(p), SEEDED)
    t.match((await call('GET', `${P}${p.id}/`, undefined, alice.headers)).json(), { id: p.id, name: 'Inbound' }, 'members read')
    const renamed = await call('PUT', `${P}${p.id}/`, { name: 'Outbound' })
    t.equal(renamed.statusCode, 200)
    t.match(renamed.json(), { id: p.id, name: 'Outbound' })
    t.not((await call('PATCH', `${P}${p.id}/`, { name: 'X' })).statusCode, 200)
    t.same((await call('GET', P)).json().pipelines.map((x: PipelineBody) => x.name), ['Default lead pipeline', 'Outbound'])
    t.equal((await call('DELETE', `${P}${p.id}/`)).statusCode, 204)
    t.equal((await call('GET', `${P}${p.id}/`)).statusCode, 404)
    const refused = await call('DELETE', `${P}${leadPipelines.defaultId(acme.orgId)}/`)
    t.equal(refused.statusCode, 400)
    t.match(refused.json(), { error: true, errors: { pipeline: [String] } })
  })

  t.test('stages: add, PUT, reorder, remove, with the §4.5 400 rules', async (t) => {
    const p = await newPipeline('Stages')
    const added = await call('POST', `${P}${p.id}/stages/`, { label: 'Nurturing', kind: 'open', expected_days: 30 })
    t.equal(added.statusCode, 201)
    t.same(codes(added.json()), [...SEEDED, 'NURTURING'], 'appended last')
    const nurturing = stage(added.json(), 'NURTURING')
    t.match((await call('PUT', `${S}${nurturing.id}/`, { label: 'Nurture', warning_days: 20 })).json(), { stages: [{}, {}, {}, {}, {}, { code: 'NURTURING', label: 'Nurture', expected_days: 30, warning_days: 20 }] })
    t.match((await call('POST', `${P}${p.id}/stages/`, { label: 'new', kind: 'open' })).json(), { error: true, errors: { label: [String] } }, 'a label taken, case-insensitively')
    t.match((await call('POST', `${P}${p.id}/stages/`, { label: 'Late', kind: 'open', expected_days: 0 })).json(), { error: true, errors: { expected_days: [String] } })
    t.match((await call('POST', `${P}${p.id}/stages/`, { label: 'Late', kind: 'sideways' })).json(), { error: true, errors: { kind: [String] } })
    t.match((await call('DELETE', `${S}${stage(p, 'CONVERTED').id}/`)).json(), { error: true, errors: { stage: [String] } }, 'the last won stage stays')
    t.match((await call('PUT', `${S}${stage(p, 'DISQUALIFIED').id}/`, { kind: 'open' })).json(), { error: true, errors: { kind: [String] } }, 'the last lost stage keeps its kind')
    const ids = [nurturing.id, ...p.stages.map((s) => s.id)]
    const reordered = await call('POST', `${P}${p.id}/stages/reorder/`, { stage_ids: ids })
    t.equal(reordered.statusCode, 200)
    t.same(codes(reordered.json()), ['NURTURING', ...SEEDED])
    t.match((await call('POST', `${P}${p.id}/stages/reorder/`, { stage_ids: ids.slice(1) })).json(), { error: true, errors: { stage_ids: [String] } })
    t.equal((await call('DELETE', `${S}${nurturing.id}/`)).statusCode, 204)
    t.same(codes((await call('GET', `${P}${p.id}/`)).json()), SEEDED)
  })

  t.test('a stage or pipeline with leads in it is not removed, nor its kind changed (counted writes)', async (t) => {
    const p = await newPipeline('Busy')
    const lead = await newLead('Ann')
    t.equal((await call('PATCH', `/api/leads/${lead}/move/`, { pipeline: p.id, column_id: 'CONTACTED' })).statusCode, 200)
    const contacted = stage(p, 'CONTACTED')
    const removal = await call('DELETE', `${S}${contacted.id}/`)
    t.equal(removal.statusCode, 400)
    t.match(removal.json(), { error: true, errors: { stage: ['Expected no leads in the stage; 1 still is in it'] } })
    t.match((await call('PUT', `${S}${contacted.id}/`, { kind: 'lost' })).json(), { error: true, errors: { kind: [String] } })
    t.match((await call('DELETE', `${P}${p.id}/`)).json(), { error: true, errors: { pipeline: [String] } })
    t.equal((await call('PATCH', `/api/leads/${lead}/move/`, { column_id: 'NEW' })).statusCode, 200, 'the stage was unlocked after each refusal: the lead moves on')
    t.equal((await call('DELETE', `${S}${contacted.id}/`)).statusCode, 204, 'now empty: removed')
    await call('DELETE', `/api/leads/${lead}/`)
    t.equal((await call('DELETE', `${P}${p.id}/`)).statusCode, 204, 'a deleted lead does not count')
  })

  t.test('writes are admin-only; another organization gets 404; malformed bodies 400', async (t) => {
    const p = await newPipeline('Guarded')
    const member = alice.headers
    for (const [method, url, body] of [['POST', P, { name: 'X' }], ['PUT', `${P}${p.id}/`, { name: 'X' }], ['DELETE', `${P}${p.id}/`], ['POST', `${P}${p.id}/stages/`, { label: 'X', kind: 'open' }], ['POST', `${P}${p.id}/stages/reorder/`, { stage_ids: p.stages.map((s) => s.id) }], ['PUT', `${S}${p.stages[0]!.id}/`, { label: 'X' }], ['DELETE', `${S}${p.stages[0]!.id}/`]] as const) {
      const res = await call(method, url, body, member)
      t.equal(res.statusCode, 403, `${method} ${url} by a member`)
      t.match(res.json(), { error: true })
    }
    const other = globex.admin.headers
    for (const [method, url, body] of [['GET', `${P}${p.id}/`], ['PUT', `${P}${p.id}/`, { name: 'X' }], ['DELETE', `${P}${p.id}/`], ['POST', `${P}${p.id}/stages/`, { label: 'X', kind: 'open' }], ['PUT', `${S}${p.stages[0]!.id}/`, { label: 'X' }], ['DELETE', `${S}${p.stages[0]!.id}/`]] as const) {
      t.equal((await call(method, url, body, other)).statusCode, 404, `${method} ${url} from another organization`)
    }
    t.equal((await call('GET', `${P}not-a-uuid/`)).statusCode, 404)
    t.match((await call('POST', P, { name: ' ' })).json(), { error: true, errors: { name: [String] } })
    t.same((await call('GET', P, undefined, other)).json().pipelines.map((x: PipelineBody) => x.name), ['Default lead pipeline'], "the other organization sees only its own")
  })

  t.test('the lead pipelines read model rebuilt from the log is identical', async (t) => {
    const live = await rebuildEqualsLive(t, { db: database.db, store }, leadPipelinesProjector, { tables: ['lead_pipelines', 'lead_pipeline_stages'] })
    t.ok(live.lead_pipelines!.length >= 3)
  })
})
