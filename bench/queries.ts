/**
 * Workload 5: reads at scale. BENCH_DEALS deals in one organization over 3 pipelines, seeded by
 * appending OpportunityCreated events straight to the store (one new stream per deal, appends in
 * parallel; no name claims, the read side does not need them), then the list, filtered list, board,
 * detail and the history of a 50-event deal queried over HTTP, by 1 and by 8 clients, once the
 * projections have applied every seeded event.
 */
import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import type { OpportunityEvent } from '../src/commands/opportunity/opportunity.ts'
import { opportunityStreams } from '../src/commands/opportunity/opportunity.ts'
import type { Position } from '../src/eventstore/event-store.ts'
import { maxPosition } from '../src/eventstore/event-store.ts'
import { listPipelines } from '../src/projections/pipeline/pipelines.ts'
import type { BenchApp } from './app.ts'
import { cannon } from './cannon.ts'
import type { Cell } from './measure.ts'
import { countLine, progress, reporting } from './progress.ts'

export const PARALLEL = 16
const QUERY_CLIENTS = [1, 8]
const HISTORY_EVENTS = 50
const DAY = 86_400_000

export type Seeding = { deals: number; appendSeconds: number; appendPerSec: number; totalSeconds: number; eventsPerSec: number; listed: number; filtered: number; onBoard: number }

/** Seeds `deals` deals as described above and waits until every projection has applied them. */
export async function seedDeals(bench: BenchApp, deals: number): Promise<{ ids: string[]; hotTag: string; appendSeconds: number; totalSeconds: number }> {
  await bench.call('POST', '/api/opportunities/pipelines/', { name: 'Enterprise' })
  await bench.call('POST', '/api/opportunities/pipelines/', { name: 'Partners' })
  const tags: string[] = []
  for (const name of ['hot', 'renewal', 'q4', 'strategic', 'churn-risk']) tags.push((await bench.call('POST', '/api/tags/', { name })).body.id)
  const pipelines = await listPipelines(bench.db, bench.orgId)
  const assignees = [bench.admin.profileId, bench.member.profileId]
  const now = Date.now()

  // Deal i: pipeline i % 3, stage (i / 3) % stages, USD or EUR, amounts 100..1,000,000, 0-2 tags, created over two years.
  const created = (i: number): OpportunityEvent & { type: 'OpportunityCreated' } => {
    const pipeline = pipelines[i % pipelines.length]!
    const stage = pipeline.stages[Math.floor(i / pipelines.length) % pipeline.stages.length]!
    const at = new Date(now - ((i * 7919) % (730 * DAY / 1000)) * 1000 - 1000).toISOString()
    const closed = stage.kind !== 'open'
    return {
      type: 'OpportunityCreated',
      data: {
        opportunity_id: '', org_id: bench.orgId, name: `Seeded deal ${i}`, account: null, opportunity_type: 'NEW_BUSINESS', currency: i % 4 === 0 ? 'EUR' : 'USD',
        amount: (100 + ((i * 104729) % 999_900)).toFixed(2), probability: stage.probability, closed_on: closed ? at.slice(0, 10) : null, lead_source: 'WEBSITE',
        description: 'Seeded by npm run bench.', is_active: true, contacts: [], tags: tags.slice(i % tags.length, (i % tags.length) + (i % 3)), teams: [], custom_fields: {},
        assigned_to: [assignees[i % 2]!], closed_by: closed ? bench.admin.profileId : null,
        pipeline_id: pipeline.id, stage: stage.code, stage_id: stage.id, stage_kind: stage.kind, created_by: bench.admin.profileId, kanban_order: Date.parse(at) + i / deals, at,
      },
    }
  }
  const ids: string[] = []
  let last: Position | undefined
  let next = 0
  const t0 = performance.now()
  progress(`seeding ${deals.toLocaleString('en-US')} deals`)
  const appending = Promise.all(
    Array.from({ length: PARALLEL }, async () => {
      for (let i = next++; i < deals; i = next++) {
        const id = randomUUID()
        const event = created(i)
        event.data.opportunity_id = id
        const result = await bench.store.appendToStream(opportunityStreams.stream(id), [{ ...event, metadata: { actorId: bench.admin.profileId, orgId: bench.orgId } }], { expectedRevision: 'no_stream' })
        last = last ? maxPosition(last, result.position) : result.position
        if (i % 97 === 0) ids.push(id)
      }
    }),
  )
  await reporting(5000, () => countLine('deals appended', Math.min(next, deals), deals, t0), appending)
  const appendSeconds = (performance.now() - t0) / 1000
  if (last) await bench.waitForProjections(last, 20 * 60_000)
  const totalSeconds = (performance.now() - t0) / 1000
  // Planner statistics and the visibility map for the freshly filled tables, as autovacuum gathers and
  // sets them within a minute or so in service (it vacuums after inserts too): without them the first
  // minutes after a bulk load are planned as if the tables were empty, and no index-only scan (the
  // filtered list's totals) can skip the heap.
  await sql`VACUUM (ANALYZE)`.execute(bench.db)
  return { ids, hotTag: tags[0]!, appendSeconds, totalSeconds }
}

export async function queryCells(bench: BenchApp, deals: number, seconds: number): Promise<{ cells: Cell[]; seeding: Seeding }> {
  const { ids, hotTag, appendSeconds, totalSeconds } = await seedDeals(bench, deals)
  const filteredPath = `/api/opportunities/?stage=PRO&amount__gte=1000&tags=${hotTag}`
  // What the queries below answer, so a filter matching nothing would show.
  const [listed, filtered, board] = await Promise.all(['/api/opportunities/', filteredPath, '/api/opportunities/kanban/'].map(async (path) => (await bench.call('GET', path)).body))
  const seeding = { deals, appendSeconds, appendPerSec: deals / appendSeconds, totalSeconds, eventsPerSec: deals / totalSeconds, listed: listed.opportunities_count, filtered: filtered.opportunities_count, onBoard: board.total_items }

  // A deal with 50 events (created, then 49 edits), among the 100k, for the history read.
  const storied = (await bench.call('POST', '/api/opportunities/', { name: 'Deal with a history', amount: '1000.00', currency: 'USD' })).body.id as string
  for (let i = 1; i < HISTORY_EVENTS; i++) await bench.call('PATCH', `/api/opportunities/${storied}/`, i % 2 ? { amount: `${1000 + i}.00` } : { description: `edit ${i}` })

  const cells: Cell[] = []
  // One client shows a request's own latency; eight show it queued behind others on the 2 cores.
  for (const clients of QUERY_CLIENTS) {
    const get = (workload: string, path: string) => cannon(bench, `${workload} @${deals}`, clients, seconds, { method: 'GET', path })
    cells.push(await get('GET list page 1 + totals', '/api/opportunities/'))
    cells.push(await get('GET list, 3 filters + totals', filteredPath))
    cells.push(await get('GET board (default pipeline)', '/api/opportunities/kanban/'))
    let n = 0
    cells.push(await cannon(bench, `GET detail @${deals}`, clients, seconds, { method: 'GET', setupRequest: (request) => ({ ...request, path: `/api/opportunities/${ids[++n % ids.length]}/` }) }))
    cells.push(await get(`GET history of a ${HISTORY_EVENTS}-event deal`, `/api/opportunities/${storied}/history/?limit=${HISTORY_EVENTS}`))
  }
  return { cells, seeding }
}
