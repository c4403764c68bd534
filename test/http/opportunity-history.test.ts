import { randomUUID } from 'node:crypto'
import t from 'tap'
import { opportunityAsOf } from '../../src/http/opportunities/opportunity-history-views.ts'
import { opportunitiesOf } from '../../src/http/opportunities/opportunity-views.ts'
import { FIXED_NOW } from '../helpers/app.ts'
import { givenHistoryCast } from '../helpers/history.ts'

const BASE = '/api/opportunities/'
const DAY = 86_400_000
const later = (days: number) => new Date(FIXED_NOW.getTime() + days * DAY)

t.test('history, stage intervals and as-of of a deal; history of a pipeline (issue 8)', async (t) => {
  const { database, store, acme, globex, alice, bob, carol, admin, ok, get, hot, cold, aliceRef, bobRef, setNow } = await givenHistoryCast(t, BASE)

  // The deal's life: created by Alice (assigned to Bob), edited, moved through a stage later removed, commented on.
  const id = (await ok('POST', BASE, alice.headers, { name: 'Deal', tags: [hot], assigned_to: [bob.profileId], amount: 100 })).id as string
  const pipelineId = (await get(`${BASE}pipelines/`)).json().pipelines[0].id as string
  setNow(later(1))
  await ok('PATCH', `${BASE}${id}/`, alice.headers, { name: 'Deal 2', tags: [cold] })
  const demo = (await ok('POST', `${BASE}pipelines/${pipelineId}/stages/`, admin, { label: 'Demo', kind: 'open' })).stages.find((s: { code: string }) => s.code === 'DEMO')
  setNow(later(2))
  await ok('PATCH', `${BASE}${id}/`, bob.headers, { stage: 'DEMO' })
  const comment = (await ok('POST', `${BASE}${id}/`, bob.headers, { comment: 'hello' })).comments[0].id as string
  setNow(later(5))
  await ok('PATCH', `${BASE}${id}/move/`, alice.headers, { column_id: 'PROPOSAL' })
  await ok('DELETE', `${BASE}comment/${comment}/`, admin)
  await ok('DELETE', `${BASE}stages/${demo.id}/`, admin)
  const proposal = (await get(`${BASE}pipelines/${pipelineId}/`)).json().stages.find((s: { code: string }) => s.code === 'PROPOSAL')
  await ok('PATCH', `${BASE}stages/${proposal.id}/`, admin, { label: 'Offer' })
  setNow(later(7.5))

  t.test('every event of the deal, oldest first, with who and what changed', async (t) => {
    const res = await get(`${BASE}${id}/history/`, bob.headers)
    t.equal(res.statusCode, 200, res.body)
    const page = res.json()
    t.match(page, { count: 7, offset: 0, limit: 50 })
    t.same(page.results.map((e: { type: string }) => e.type), ['OpportunityCreated', 'OpportunityUpdated', 'OpportunityStageChanged', 'OpportunityCommentAdded', 'OpportunityStageChanged', 'OpportunityPositioned', 'OpportunityCommentDeleted'])
    const [created, updated, toDemo, commented, toProposal, positioned, uncommented] = page.results
    t.match(created, { revision: 0, position: /^\d+-\d+$/, at: FIXED_NOW.toISOString(), actor: aliceRef, subject: null, changes: { name: { from: null, to: 'Deal' }, tags: { added: [hot], removed: [] }, assigned_to: { added: [bob.profileId], removed: [] }, amount: { from: null, to: '100.00' }, stage: { from: null, to: 'PROSPECTING' }, pipeline: { from: null, to: pipelineId } } })
    t.same(updated.changes, { name: { from: 'Deal', to: 'Deal 2' }, tags: { added: [cold], removed: [hot] } }, 'relations as added and removed ids')
    t.match(updated, { at: later(1).toISOString(), actor: aliceRef })
    t.match(toDemo, { actor: bobRef, changes: { stage: { from: 'PROSPECTING', to: 'DEMO' } } })
    t.match(commented, { actor: bobRef, subject: { kind: 'comment', id: comment }, changes: { comment: { from: null, to: 'hello' } } })
    t.match(toProposal, { actor: aliceRef, changes: { stage: { from: 'DEMO', to: 'PROPOSAL' } } })
    t.match(positioned, { actor: aliceRef, changes: { kanban_order: { from: Number, to: Number } } }, 'a board move places the card too')
    t.match(uncommented, { actor: { id: acme.admin.profileId, name: acme.admin.email }, changes: { comment: { from: 'hello', to: null } } })
    t.ok(page.results.every((e: { position: string }, i: number, all: { position: string }[]) => i === 0 || e.position !== all[i - 1]!.position), 'positions differ')
  })

  t.test('order=desc, limit and offset', async (t) => {
    const desc = (await get(`${BASE}${id}/history/?order=desc&limit=2&offset=1`)).json()
    t.match(desc, { count: 7, offset: 1, limit: 2 })
    t.same(desc.results.map((e: { revision: number }) => e.revision), [5, 4])
    t.same((await get(`${BASE}${id}/history/?limit=0`)).json().results, [])
    t.equal((await get(`${BASE}${id}/history/?order=sideways`)).statusCode, 400)
  })

  t.test('the detail\'s access rule: 403 for other members, 404 for another organization', async (t) => {
    t.equal((await get(`${BASE}${id}/history/`, carol.headers)).statusCode, 403)
    t.equal((await get(`${BASE}${id}/stage-intervals/`, carol.headers)).statusCode, 403)
    for (const url of [`${BASE}${id}/history/`, `${BASE}${id}/stage-intervals/`, `${BASE}${randomUUID()}/history/`, `${BASE}not-a-uuid/history/`]) {
      t.equal((await get(url, globex.admin.headers)).statusCode, 404, url)
    }
    t.equal((await get(`${BASE}${randomUUID()}/stage-intervals/`)).statusCode, 404)
  })

  t.test('the stage ledger: one row per stay, current labels, whole days to the exit or now', async (t) => {
    const res = await get(`${BASE}${id}/stage-intervals/`, alice.headers)
    t.equal(res.statusCode, 200, res.body)
    t.same(res.json(), {
      count: 3,
      results: [
        { stage: 'PROSPECTING', stage_id: res.json().results[0].stage_id, label: 'Prospecting', kind: 'open', pipeline_id: pipelineId, entered_at: FIXED_NOW.toISOString(), exited_at: later(2).toISOString(), days: 2, entered_by: aliceRef, exited_by: bobRef },
        { stage: 'DEMO', stage_id: demo.id, label: null, kind: 'open', pipeline_id: pipelineId, entered_at: later(2).toISOString(), exited_at: later(5).toISOString(), days: 3, entered_by: bobRef, exited_by: aliceRef },
        { stage: 'PROPOSAL', stage_id: proposal.id, label: 'Offer', kind: 'open', pipeline_id: pipelineId, entered_at: later(5).toISOString(), exited_at: null, days: 2, entered_by: aliceRef, exited_by: null },
      ],
    }, 'a removed stage has no label')
    setNow(later(9))
    t.equal((await get(`${BASE}${id}/stage-intervals/`)).json().results[2].days, 4, 'the open stay follows the clock')
    setNow(later(7.5))
  })

  t.test('as of an instant: the deal folded up to it, as the detail would show it', async (t) => {
    const deps = { db: database.db, store }
    t.equal(await opportunityAsOf(deps, acme.orgId, id, new Date(FIXED_NOW.getTime() - 1)), undefined, 'before it existed')
    t.equal(await opportunityAsOf(deps, globex.orgId, id, later(3)), undefined, 'another organization')
    const row = (await opportunityAsOf(deps, acme.orgId, id, later(1.5)))!
    t.match(row, { name: 'Deal 2', stage: 'PROSPECTING', stage_label: 'Prospecting', tags: [cold], revision: '1' })
    const [obj] = await opportunitiesOf({ db: database.db }, { id: acme.orgId, name: 'Acme' }, [row], later(1.5))
    t.match(obj, { id, name: 'Deal 2', stage: 'PROSPECTING', tags: [{ id: cold, name: 'cold' }], assigned_to: [{ id: bob.profileId }], created_by: { id: alice.profileId }, days_in_stage: 1, created_at: FIXED_NOW.toISOString() })
    t.match(await opportunityAsOf(deps, acme.orgId, id, later(3)), { stage: 'DEMO', stage_label: null })
  })

  t.test('a deleted deal keeps its history, for admins only', async (t) => {
    setNow(later(8))
    await ok('DELETE', `${BASE}${id}/`, alice.headers)
    const res = await get(`${BASE}${id}/history/?order=desc&limit=1`)
    t.equal(res.statusCode, 200, res.body)
    t.match(res.json(), { count: 8, results: [{ type: 'OpportunityDeleted', actor: aliceRef, at: later(8).toISOString(), changes: {} }] })
    t.equal((await get(`${BASE}${id}/history/`, alice.headers)).statusCode, 404, 'its creator no longer sees it, like the detail')
    t.equal((await get(`${BASE}${id}/stage-intervals/`)).statusCode, 404, 'the ledger follows the detail: 404')
    t.equal(await opportunityAsOf({ db: database.db, store }, acme.orgId, id, later(9)), undefined, 'as of after the deletion: missing')
  })

  t.test('a pipeline\'s history: members read it; another organization 404', async (t) => {
    const res = await get(`${BASE}pipelines/${pipelineId}/history/`, carol.headers)
    t.equal(res.statusCode, 200, res.body)
    const types = res.json().results.map((e: { type: string }) => e.type)
    t.same(types, ['PipelineCreated', 'StageAdded', 'StageLocked', 'StageRemoved', 'StageUpdated'])
    const [created, added, , removed, relabelled] = res.json().results
    t.match(created, { actor: aliceRef, changes: { name: { from: null, to: 'Default pipeline' }, is_default: { to: true }, stages: { removed: [] } } }, 'the default pipeline is made on the first deal')
    t.equal(created.changes.stages.added.length, 6)
    t.ok(created.changes.stages.added.includes(proposal.id))
    t.match(added, { actor: { id: acme.admin.profileId }, subject: { kind: 'stage', id: demo.id, name: 'DEMO' }, changes: { label: { from: null, to: 'Demo' }, kind: { from: null, to: 'open' } } })
    t.match(removed, { subject: { kind: 'stage', id: demo.id, name: 'DEMO' }, changes: { label: { from: 'Demo', to: null } } })
    t.same(relabelled.changes, { label: { from: 'Proposal', to: 'Offer' } })
    t.equal((await get(`${BASE}pipelines/${pipelineId}/history/?order=desc&limit=1`, carol.headers)).json().results[0].type, 'StageUpdated')
    t.equal((await get(`${BASE}pipelines/${pipelineId}/history/`, globex.admin.headers)).statusCode, 404)
    t.equal((await get(`${BASE}pipelines/${randomUUID()}/history/`)).statusCode, 404)
  })

  t.test('a deleted pipeline keeps its history, for admins only', async (t) => {
    const other = (await ok('POST', `${BASE}pipelines/`, admin, { name: 'Side' })).id as string
    await ok('DELETE', `${BASE}pipelines/${other}/`, admin)
    const res = await get(`${BASE}pipelines/${other}/history/?order=desc&limit=1`)
    t.match({ status: res.statusCode, body: res.json() }, { status: 200, body: { results: [{ type: 'PipelineDeleted' }] } })
    t.equal((await get(`${BASE}pipelines/${other}/history/`, carol.headers)).statusCode, 404)
  })
})
