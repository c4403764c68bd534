import { setTimeout } from 'node:timers/promises'
import t from 'tap'
import { fold } from '../../src/commands/decider.ts'
import { opportunityDecider, opportunityStreams } from '../../src/commands/opportunity/opportunity.ts'
import type { OpportunityEvent } from '../../src/commands/opportunity/opportunity.ts'
import { pipelineDecider, pipelineStreams } from '../../src/commands/pipeline/pipeline.ts'
import type { PipelineEvent } from '../../src/commands/pipeline/pipeline.ts'
import type { EventStore } from '../../src/eventstore/event-store.ts'
import { collectionClient, givenTwoOrganizations } from '../helpers/fixtures.ts'

const BASE = '/api/opportunities/'
const P = '/api/opportunities/pipelines/'

async function folded<E extends { type: string; data: unknown }>(store: EventStore, stream: string): Promise<E[]> {
  return (await store.readStream(stream)).map((e) => ({ type: e.type, data: e.data }) as E)
}

t.test('deals under concurrency', async (t) => {
  const { app, store, acme } = await givenTwoOrganizations(t)
  const admin = acme.admin.headers
  const { inject, create, detail } = collectionClient(app, BASE)
  const newDeal = async (payload: object) => {
    const res = await create(admin, payload)
    t.equal(res.statusCode, 200, res.body)
    return res.json().id as string
  }

  t.test('ten concurrent creates of "Acme" and "ACME": exactly one succeeds, the rest 400 on name', async (t) => {
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => create(admin, { name: i % 2 ? 'Acme' : 'ACME' })))
    t.equal(results.filter((r) => r.statusCode === 200).length, 1, 'one winner')
    for (const loser of results.filter((r) => r.statusCode !== 200)) t.match({ status: loser.statusCode, body: loser.json() }, { status: 400, body: { error: true, errors: { name: [String] } } })
  })

  t.test('two simultaneous moves of one deal end as one of them applied last, both in the history', async (t) => {
    for (let round = 0; round < 5; round++) {
      const id = await newDeal({ name: `Race ${round}` })
      const moves = await Promise.all(['QUALIFICATION', 'NEGOTIATION'].map((column_id) => inject('PATCH', `${BASE}${id}/move/`, admin, { column_id })))
      t.same(moves.map((m) => m.statusCode), [200, 200])
      const events = await folded<OpportunityEvent>(store, opportunityStreams.stream(id))
      const changes = events.filter((e) => e.type === 'OpportunityStageChanged')
      t.equal(changes.length, 2, 'both stage changes are recorded')
      const last = changes.at(-1)!.data as { to: { stage: string } }
      t.equal(fold(opportunityDecider, events).placement?.stage, last.to.stage)
      t.equal((await detail(admin, id)).opportunity_obj.stage, last.to.stage, 'the read model agrees with the last event')
    }
  })

  t.test('deals block stage removal, kind changes and pipeline deletion (§4.5)', async (t) => {
    const pipeline = (await inject('POST', P, admin, { name: 'Blocked' })).json()
    const stage = (code: string) => pipeline.stages.find((s: { code: string }) => s.code === code)
    const id = await newDeal({ name: 'Blocker', pipeline: pipeline.id, stage: 'PROPOSAL' })
    const removal = await inject('DELETE', `/api/opportunities/stages/${stage('PROPOSAL').id}/`, admin)
    t.match({ status: removal.statusCode, body: removal.json() }, { status: 400, body: { error: true, errors: { stage: [/deals/] } } })
    t.match((await inject('PATCH', `/api/opportunities/stages/${stage('PROPOSAL').id}/`, admin, { kind: 'lost' })).json(), { error: true, errors: { kind: [/deals/] } })
    t.match((await inject('DELETE', `${P}${pipeline.id}/`, admin)).json(), { error: true, errors: { pipeline: [/deals/] } })
    const second = (await create(admin, { name: 'After refusal', pipeline: pipeline.id, stage: 'PROPOSAL' })).json().id as string
    t.ok(second, 'a refusal unlocks the stage: deals may enter again')
    const after = (await inject('GET', `${P}${pipeline.id}/`, admin)).json()
    t.same(after.stages.map((s: { code: string }) => s.code), pipeline.stages.map((s: { code: string }) => s.code), 'nothing removed')
    for (const deal of [id, second]) t.equal((await inject('DELETE', `${BASE}${deal}/`, admin)).statusCode, 200)
    t.equal((await inject('DELETE', `/api/opportunities/stages/${stage('PROPOSAL').id}/`, admin)).statusCode, 204, 'removable once empty')
    t.equal((await inject('DELETE', `${P}${pipeline.id}/`, admin)).statusCode, 204, 'deletable once empty')
  })

  t.test('a deal moved into a stage while it is being removed never ends in a removed stage', async (t) => {
    const pipeline = (await inject('POST', P, admin, { name: 'Racy' })).json()
    let removedWhileEmpty = 0
    let refusedWithDeal = 0
    for (let round = 0; round < 12; round++) {
      const added = (await inject('POST', `${P}${pipeline.id}/stages/`, admin, { label: `Temp ${round}`, kind: 'open' })).json()
      const target = added.stages.at(-1) as { id: string; code: string }
      const id = await newDeal({ name: `Racer ${round}`, pipeline: pipeline.id })
      // Staggered starts so both orders (and the overlap) occur across rounds.
      const removeAfter = (round % 4) * 3
      const [moved, removed] = await Promise.all([
        inject('PATCH', `${BASE}${id}/move/`, admin, { column_id: target.code }),
        setTimeout(removeAfter).then(() => inject('DELETE', `/api/opportunities/stages/${target.id}/`, admin)),
      ])
      const state = fold(pipelineDecider, await folded<PipelineEvent>(store, pipelineStreams.stream(pipeline.id)))
      const deal = fold(opportunityDecider, await folded<OpportunityEvent>(store, opportunityStreams.stream(id)))
      const live = state.stages.some((s) => s.id === deal.placement!.stage_id)
      t.ok(live, `round ${round}: the deal is in a live stage (move ${moved.statusCode}, delete ${removed.statusCode})`)
      t.same(state.lockedStageIds, [], 'no stage is left locked')
      if (removed.statusCode === 204) {
        removedWhileEmpty++
        t.equal(moved.statusCode, 400, 'the move was refused')
      } else {
        refusedWithDeal++
        t.equal(removed.statusCode, 400)
        t.equal(moved.statusCode, 200)
        t.equal(deal.placement!.stage_id, target.id)
        t.equal((await inject('PATCH', `${BASE}${id}/move/`, admin, { column_id: 'PROSPECTING' })).statusCode, 200)
        t.equal((await inject('DELETE', `/api/opportunities/stages/${target.id}/`, admin)).statusCode, 204, 'removable once empty')
      }
    }
    t.comment(`removed first: ${removedWhileEmpty}, moved first: ${refusedWithDeal}`)
  })
})
