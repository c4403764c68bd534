import { randomUUID } from 'node:crypto'
import t from 'tap'
import { defaultPipelineId, pipelineStreams } from '../../src/commands/pipeline/pipeline.ts'
import { pipelinesProjector } from '../../src/projections/pipeline/pipelines.ts'
import { buildTestApp } from '../helpers/app.ts'
import { givenOrganization } from '../helpers/identity.ts'
import { rebuildEqualsLive } from '../helpers/read-models.ts'

type StageBody = { id: string; code: string; label: string; order: number; kind: string; expected_days: number | null; warning_days: number | null; probability: number | null }
type PipelineBody = { id: string; name: string; is_default: boolean; stages: StageBody[] }

const SEEDED = ['PROSPECTING', 'QUALIFICATION', 'PROPOSAL', 'NEGOTIATION', 'CLOSED_WON', 'CLOSED_LOST']

t.test('/api/opportunities/pipelines/', async (t) => {
  const { app, database, store } = await buildTestApp(t)
  const acme = await givenOrganization(app, database.db, 'Acme')
  const globex = await givenOrganization(app, database.db, 'Globex')
  const alice = await acme.addMember('alice@acme.test')
  const admin = acme.admin.headers
  type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE'
  const call = (method: Method, url: string, payload?: object, headers: object = admin) => app.inject({ method, url, headers: headers as Record<string, string>, ...(payload && { payload }) })
  const P = '/api/opportunities/pipelines/'
  const S = '/api/opportunities/stages/'
  const codes = (p: PipelineBody) => p.stages.map((s) => s.code)
  const stage = (p: PipelineBody, code: string) => p.stages.find((s) => s.code === code)!
  const newPipeline = async (name: string) => (await call('POST', P, { name })).json() as PipelineBody

  t.test('the default pipeline is created once on first use, also under 5 concurrent first requests', async (t) => {
    const first = await Promise.all([alice.headers, admin, alice.headers, admin, alice.headers].map((h) => call('GET', P, undefined, h)))
    t.same(first.map((r) => r.statusCode), [200, 200, 200, 200, 200])
    for (const res of first) t.equal(res.json().pipelines.length, 1, 'every racer sees the one default pipeline')
    const events = await store.readStream(pipelineStreams.stream(defaultPipelineId(acme.orgId)))
    t.same(events.map((e) => e.type), ['PipelineCreated'], 'one creation in the log')
    const [pipeline] = first[0]!.json().pipelines as PipelineBody[]
    t.match(pipeline, { id: defaultPipelineId(acme.orgId), is_default: true })
    t.same(pipeline!.stages.map(({ id: _id, ...s }) => s), [
      { code: 'PROSPECTING', label: 'Prospecting', order: 1, kind: 'open', expected_days: 14, warning_days: null, probability: 10 },
      { code: 'QUALIFICATION', label: 'Qualification', order: 2, kind: 'open', expected_days: 14, warning_days: null, probability: 25 },
      { code: 'PROPOSAL', label: 'Proposal', order: 3, kind: 'open', expected_days: 10, warning_days: null, probability: 50 },
      { code: 'NEGOTIATION', label: 'Negotiation', order: 4, kind: 'open', expected_days: 10, warning_days: null, probability: 75 },
      { code: 'CLOSED_WON', label: 'Closed Won', order: 5, kind: 'won', expected_days: null, warning_days: null, probability: 100 },
      { code: 'CLOSED_LOST', label: 'Closed Lost', order: 6, kind: 'lost', expected_days: null, warning_days: null, probability: 0 },
    ])
    t.same((await call('GET', P)).json(), first[0]!.json(), 'later reads create nothing')
  })

  t.test('POST creates a seeded pipeline (admins); GET lists the default first; GET one', async (t) => {
    const res = await call('POST', P, { name: ' Renewals ' })
    t.equal(res.statusCode, 201)
    t.match(res.json(), { name: 'Renewals', is_default: false })
    t.same(codes(res.json()), SEEDED, 'seeded with the six stages')
    t.match(res.headers['x-event-position'], /^\d+-\d+$/)
    const list = (await call('GET', P, undefined, alice.headers)).json().pipelines as PipelineBody[]
    t.same(list.map((p) => [p.name, p.is_default]), [['Default pipeline', true], ['Renewals', false]], 'members read the list, the default first')
    t.match((await call('GET', `${P}${res.json().id}/`, undefined, alice.headers)).json(), { id: res.json().id, name: 'Renewals' }, 'and one pipeline (read-your-writes)')
    t.match((await call('POST', P, { name: '  ' })).json(), { error: true, errors: { name: [String] } })
    t.match((await call('POST', P, {})).json(), { error: true, errors: { name: [String] } })
  })

  t.test('a new organization gets its default pipeline before the first POST of another', async (t) => {
    const initech = await givenOrganization(app, database.db, 'Initech')
    t.equal((await call('POST', P, { name: 'First' }, initech.admin.headers)).statusCode, 201)
    t.same((await call('GET', P, undefined, initech.admin.headers)).json().pipelines.map((p: PipelineBody) => [p.name, p.is_default]), [['Default pipeline', true], ['First', false]])
  })

  t.test('PATCH renames; DELETE removes, but never the default pipeline', async (t) => {
    const p = await newPipeline('Partners')
    const renamed = await call('PATCH', `${P}${p.id}/`, { name: 'Channel' })
    t.equal(renamed.statusCode, 200)
    t.match(renamed.json(), { id: p.id, name: 'Channel', is_default: false })
    t.same(codes(renamed.json()), SEEDED)
    t.match((await call('PATCH', `${P}${p.id}/`, { name: '' })).json(), { error: true, errors: { name: [String] } })
    const del = await call('DELETE', `${P}${p.id}/`)
    t.equal(del.statusCode, 204)
    t.equal(del.body, '')
    t.equal((await call('GET', `${P}${p.id}/`)).statusCode, 404)
    t.notOk((await call('GET', P)).json().pipelines.some((x: PipelineBody) => x.id === p.id), 'gone from the list')
    t.equal((await call('DELETE', `${P}${p.id}/`)).statusCode, 404, 'deleting again: not found')
    t.equal((await call('DELETE', `${S}${p.stages[0]!.id}/`)).statusCode, 404, 'its stages are gone too')
    const refused = await call('DELETE', `${P}${defaultPipelineId(acme.orgId)}/`)
    t.equal(refused.statusCode, 400)
    t.match(refused.json(), { error: true, errors: { pipeline: [/default/] } })
    t.match((await call('GET', `${P}${defaultPipelineId(acme.orgId)}/`)).json(), { is_default: true }, 'the default stays')
  })

  t.test('POST stages/ appends a stage with a code derived from the label; labels are unique, case-insensitively', async (t) => {
    const p = await newPipeline('Stages')
    const res = await call('POST', `${P}${p.id}/stages/`, { label: ' Demo  booked! ', kind: 'open', expected_days: 5, warning_days: 3 })
    t.equal(res.statusCode, 201)
    t.same(codes(res.json()), [...SEEDED, 'DEMO_BOOKED'], 'appended last; the whole pipeline answers')
    t.match(stage(res.json(), 'DEMO_BOOKED'), { label: 'Demo  booked!', order: 7, kind: 'open', expected_days: 5, warning_days: 3, probability: null })
    const again = await call('POST', `${P}${p.id}/stages/`, { label: 'Demo booked', kind: 'open' })
    t.equal(again.statusCode, 201)
    t.equal(again.json().stages[7].code, 'DEMO_BOOKED_2', 'codes stay unique')
    t.match(stage(again.json(), 'DEMO_BOOKED_2'), { expected_days: null, warning_days: null }, 'thresholds default to null')
    const dup = await call('POST', `${P}${p.id}/stages/`, { label: 'closed won', kind: 'won' })
    t.equal(dup.statusCode, 400)
    t.match(dup.json(), { error: true, errors: { label: [String] } })
    t.match((await call('POST', `${P}${p.id}/stages/`, { label: 'Won twice', kind: 'won', expected_days: 3 })).json(), { error: true, errors: { expected_days: [String] } }, 'won stages have no thresholds')
    t.match((await call('POST', `${P}${p.id}/stages/`, { label: 'Y', kind: 'open', expected_days: 0 })).json(), { error: true, errors: { expected_days: [String] } })
    t.match((await call('POST', `${P}${p.id}/stages/`, { label: 'Y', kind: 'open', warning_days: 3651 })).json(), { error: true, errors: { warning_days: [String] } })
    t.match((await call('POST', `${P}${p.id}/stages/`, { label: 'Y', kind: 'open', expected_days: 2.5 })).json(), { error: true, errors: { expected_days: [String] } })
    t.match((await call('POST', `${P}${p.id}/stages/`, { label: 'Y', kind: 'maybe' })).json(), { error: true, errors: { kind: [String] } })
    t.match((await call('POST', `${P}${p.id}/stages/`, { label: '', kind: 'open' })).json(), { error: true, errors: { label: [String] } })
    t.same(codes((await call('GET', `${P}${p.id}/`)).json()), [...SEEDED, 'DEMO_BOOKED', 'DEMO_BOOKED_2'], 'refused writes changed nothing')
  })

  t.test('PATCH stages/{id}/: relabel keeps the code; thresholds; kind rules', async (t) => {
    const p = await newPipeline('Edits')
    const prospecting = stage(p, 'PROSPECTING')
    const relabel = await call('PATCH', `${S}${prospecting.id}/`, { label: 'Discovery', expected_days: 21, warning_days: 7 })
    t.equal(relabel.statusCode, 200)
    t.match(stage(relabel.json(), 'PROSPECTING'), { id: prospecting.id, label: 'Discovery', expected_days: 21, warning_days: 7 }, 'the code never changes')
    t.match((await call('PATCH', `${S}${prospecting.id}/`, { label: 'PROPOSAL' })).json(), { error: true, errors: { label: [String] } })
    t.match((await call('PATCH', `${S}${prospecting.id}/`, { expected_days: 3651 })).json(), { error: true, errors: { expected_days: [String] } })
    t.match((await call('PATCH', `${S}${prospecting.id}/`, { warning_days: 0 })).json(), { error: true, errors: { warning_days: [String] } })
    t.match(stage((await call('PATCH', `${S}${prospecting.id}/`, { warning_days: null })).json(), 'PROSPECTING'), { warning_days: null, expected_days: 21 })
    const won = stage(p, 'CLOSED_WON')
    t.match((await call('PATCH', `${S}${won.id}/`, { expected_days: 5 })).json(), { error: true, errors: { expected_days: [String] } }, 'always null for won')
    const lastWon = await call('PATCH', `${S}${won.id}/`, { kind: 'open' })
    t.equal(lastWon.statusCode, 400)
    t.match(lastWon.json(), { error: true, errors: { kind: [/last/] } }, 'the last won stage cannot change kind')
    const intoLost = await call('PATCH', `${S}${prospecting.id}/`, { kind: 'lost' })
    t.equal(intoLost.statusCode, 200)
    t.match(stage(intoLost.json(), 'PROSPECTING'), { kind: 'lost', expected_days: null, warning_days: null, probability: 0 }, 'into lost: thresholds cleared')
    t.match((await call('PATCH', `${S}${prospecting.id}/`, { kind: 'won', expected_days: 4 })).json(), { error: true, errors: { expected_days: [String] } })
    t.equal((await call('PATCH', `${S}${stage(p, 'CLOSED_LOST').id}/`, { kind: 'open', expected_days: 9 })).statusCode, 200, 'not the last lost any more: may become open')
    t.match(stage((await call('GET', `${P}${p.id}/`)).json(), 'CLOSED_LOST'), { kind: 'open', expected_days: 9, probability: null })
  })

  t.test('DELETE stages/{id}/ (204), never the last stage of a kind', async (t) => {
    const p = await newPipeline('Removals')
    const del = await call('DELETE', `${S}${stage(p, 'QUALIFICATION').id}/`)
    t.equal(del.statusCode, 204)
    const after = (await call('GET', `${P}${p.id}/`)).json() as PipelineBody
    t.same(after.stages.map((s) => [s.code, s.order]), [['PROSPECTING', 1], ['PROPOSAL', 2], ['NEGOTIATION', 3], ['CLOSED_WON', 4], ['CLOSED_LOST', 5]], 'the rest renumbered')
    for (const code of ['CLOSED_WON', 'CLOSED_LOST']) {
      const res = await call('DELETE', `${S}${stage(p, code).id}/`)
      t.equal(res.statusCode, 400, `the last ${code}`)
      t.match(res.json(), { error: true, errors: { stage: [/last/] } })
    }
    for (const code of ['PROSPECTING', 'PROPOSAL']) t.equal((await call('DELETE', `${S}${stage(p, code).id}/`)).statusCode, 204)
    t.match((await call('DELETE', `${S}${stage(p, 'NEGOTIATION').id}/`)).json(), { error: true, errors: { stage: [/open/] } }, 'the last open stage')
    t.same(codes((await call('GET', `${P}${p.id}/`)).json()), ['NEGOTIATION', 'CLOSED_WON', 'CLOSED_LOST'])
    t.equal((await call('DELETE', `${S}${stage(p, 'PROSPECTING').id}/`)).statusCode, 404, 'a removed stage is not found')
    const readd = await call('POST', `${P}${p.id}/stages/`, { label: 'Prospecting', kind: 'open' })
    t.match(stage(readd.json(), 'PROSPECTING'), { order: 4, probability: 10 }, "a removed stage's code is free again")
  })

  t.test('POST stages/reorder/ needs every stage exactly once', async (t) => {
    const p = await newPipeline('Order')
    const ids = p.stages.map((s) => s.id)
    const reversed = [...ids].reverse()
    const res = await call('POST', `${P}${p.id}/stages/reorder/`, { stage_ids: reversed })
    t.equal(res.statusCode, 200)
    t.same(res.json().stages.map((s: StageBody) => [s.id, s.order]), reversed.map((id, i) => [id, i + 1]))
    const other = await newPipeline('Other')
    for (const [bad, why] of [
      [ids.slice(1), 'one missing'],
      [[...ids, ids[0]], 'a duplicate'],
      [[...ids.slice(1), ids[1]], 'a duplicate instead of one'],
      [[...ids.slice(1), other.stages[0]!.id], "another pipeline's stage"],
      [[...ids.slice(1), randomUUID()], 'an unknown id'],
      [[], 'none'],
    ] as const) {
      const refused = await call('POST', `${P}${p.id}/stages/reorder/`, { stage_ids: bad })
      t.equal(refused.statusCode, 400, why)
      t.match(refused.json(), { error: true, errors: { stage_ids: [String] } })
    }
    t.match((await call('POST', `${P}${p.id}/stages/reorder/`, { stage_ids: ['x'] })).json(), { error: true, errors: { 'stage_ids.0': [String] } })
    t.same((await call('GET', `${P}${p.id}/`)).json().stages.map((s: StageBody) => s.id), reversed, 'refused reorders changed nothing')
  })

  t.test('GET/PUT aging-config: the default pipeline open stages keyed by code', async (t) => {
    const config = await call('GET', '/api/opportunities/aging-config/', undefined, alice.headers)
    t.equal(config.statusCode, 200)
    t.same(config.json(), {
      PROSPECTING: { expected_days: 14, warning_days: null },
      QUALIFICATION: { expected_days: 14, warning_days: null },
      PROPOSAL: { expected_days: 10, warning_days: null },
      NEGOTIATION: { expected_days: 10, warning_days: null },
    })
    const put = await call('PUT', '/api/opportunities/aging-config/', { PROSPECTING: { expected_days: 7, warning_days: 5 }, PROPOSAL: { expected_days: null } })
    t.equal(put.statusCode, 200)
    t.same(put.json(), {
      PROSPECTING: { expected_days: 7, warning_days: 5 },
      QUALIFICATION: { expected_days: 14, warning_days: null },
      PROPOSAL: { expected_days: null, warning_days: null },
      NEGOTIATION: { expected_days: 10, warning_days: null },
    }, 'codes and fields left out keep their values')
    t.match(stage((await call('GET', `${P}${defaultPipelineId(acme.orgId)}/`)).json(), 'PROSPECTING'), { expected_days: 7, warning_days: 5 }, 'the stages themselves changed')
    t.equal((await call('PUT', '/api/opportunities/aging-config/', { PROSPECTING: { expected_days: 1 } }, alice.headers)).statusCode, 403, 'admins only')
    t.match((await call('PUT', '/api/opportunities/aging-config/', { PROSPECTING: { expected_days: 0 } })).json(), { error: true, errors: { 'PROSPECTING.expected_days': [String] } })
    t.match((await call('PUT', '/api/opportunities/aging-config/', { NEGOTIATION: { warning_days: 3651 } })).json(), { error: true, errors: { 'NEGOTIATION.warning_days': [String] } })
    t.match((await call('PUT', '/api/opportunities/aging-config/', { CLOSED_WON: { expected_days: 3 } })).json(), { error: true, errors: { 'CLOSED_WON.expected_days': [String] } })
    t.match((await call('PUT', '/api/opportunities/aging-config/', { NOPE: { expected_days: 3 } })).json(), { error: true, errors: { NOPE: [String] } })
    t.match((await call('PUT', '/api/opportunities/aging-config/', { PROSPECTING: { expected_days: 'x' } })).json(), { error: true, errors: { 'PROSPECTING.expected_days': [String] } })
    t.same((await call('GET', '/api/opportunities/aging-config/')).json(), put.json(), 'refused writes changed nothing')
    const globexConfig = (await call('GET', '/api/opportunities/aging-config/', undefined, globex.admin.headers)).json()
    t.same(globexConfig.PROSPECTING, { expected_days: 14, warning_days: null }, "another organization's default is its own")
  })

  t.test('non-admins may read but not write: 403, nothing changed', async (t) => {
    const p = await newPipeline('Guarded')
    const s = p.stages[0]!.id
    for (const [method, url, payload] of [
      ['POST', P, { name: 'Mine' }],
      ['PATCH', `${P}${p.id}/`, { name: 'Mine' }],
      ['DELETE', `${P}${p.id}/`, undefined],
      ['POST', `${P}${p.id}/stages/`, { label: 'Mine', kind: 'open' }],
      ['POST', `${P}${p.id}/stages/reorder/`, { stage_ids: [...p.stages.map((x) => x.id)].reverse() }],
      ['PATCH', `${S}${s}/`, { label: 'Mine' }],
      ['DELETE', `${S}${s}/`, undefined],
      ['PUT', '/api/opportunities/aging-config/', { PROSPECTING: { expected_days: 1 } }],
    ] as const) {
      t.equal((await call(method, url, payload, alice.headers)).statusCode, 403, `${method} ${url.replace(p.id, '<id>').replace(s, '<stage>')}`)
    }
    t.same((await call('GET', `${P}${p.id}/`, undefined, alice.headers)).json(), p, 'nothing changed')
    t.notOk((await call('GET', P, undefined, alice.headers)).json().pipelines.some((x: PipelineBody) => x.name === 'Mine'))
  })

  t.test("another organization's pipeline and stage ids answer 404 and change nothing", async (t) => {
    const foreign = (await call('POST', P, { name: 'Secret' }, globex.admin.headers)).json() as PipelineBody
    const s = foreign.stages[0]!.id
    for (const [method, url, payload] of [
      ['GET', `${P}${foreign.id}/`, undefined],
      ['PATCH', `${P}${foreign.id}/`, { name: 'Hijacked' }],
      ['DELETE', `${P}${foreign.id}/`, undefined],
      ['POST', `${P}${foreign.id}/stages/`, { label: 'Hijacked', kind: 'open' }],
      ['POST', `${P}${foreign.id}/stages/reorder/`, { stage_ids: [...foreign.stages.map((x) => x.id)].reverse() }],
      ['PATCH', `${S}${s}/`, { label: 'Hijacked' }],
      ['DELETE', `${S}${s}/`, undefined],
    ] as const) {
      t.equal((await call(method, url, payload)).statusCode, 404, `${method} ${url.replace(foreign.id, '<id>').replace(s, '<stage>')}`)
    }
    t.same((await call('GET', `${P}${foreign.id}/`, undefined, globex.admin.headers)).json(), foreign, 'nothing changed')
    t.equal((await call('GET', `${P}not-a-uuid/`)).statusCode, 404)
    t.equal((await call('PATCH', `${S}${randomUUID()}/`, { label: 'X' })).statusCode, 404)
  })

  t.test('the read model rebuilt from the log is identical', async (t) => {
    const live = await rebuildEqualsLive(t, { db: database.db, store }, pipelinesProjector, { tables: ['pipelines', 'pipeline_stages'] })
    t.ok(live.pipelines!.length >= 10)
    t.ok(live.pipeline_stages!.length >= 60)
  })
})
