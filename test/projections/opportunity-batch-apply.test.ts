import { randomUUID } from 'node:crypto'
import t from 'tap'
import { sql } from 'kysely'
import type { Transaction } from 'kysely'
import type { RecordedEvent } from '../../src/eventstore/event-store.ts'
import { currentVersion } from '../../src/events/versions.ts'
import { useSchema } from '../../src/projections/kernel/apply.ts'
import { opportunitiesProjector } from '../../src/projections/opportunity/opportunities.ts'
import { stageChangesProjector } from '../../src/projections/opportunity/stage-changes.ts'
import { goalsProjector } from '../../src/projections/goal/goals.ts'
import type { Projector } from '../../src/projections/kernel/projector.ts'
import type { Database, Db } from '../../src/db/database.ts'
import { freshDatabase } from '../helpers/db.ts'
import { projectorNamed } from '../helpers/read-models.ts'

// Search's read model over the kinds the manifests declare (src/modules/search.ts).
const searchProjector = projectorNamed('search')

/**
 * The deal read models' (and search's) `applyBatch` folds a page's changes per deal (final rows, rollup deltas
 * summed per page, history rows multi-row): it must leave exactly the rows `apply` leaves one
 * event at a time. Both ways run over the same pages, each in its own schema, and every row of
 * every table is compared.
 */
const projectors: Projector[] = [opportunitiesProjector, stageChangesProjector, goalsProjector, searchProjector]

const org = randomUUID()
const actor = randomUUID()
const pipelineId = randomUUID()
const stage = (code: string, kind: string, expected_days: number | null, order: number) => ({ id: randomUUID(), code, label: code, order, kind, expected_days, warning_days: null, probability: null })
const stages = { lead: stage('LEAD', 'open', 3, 1), proposal: stage('PROPOSAL', 'open', 10, 2), negotiation: stage('NEGOTIATION', 'open', null, 3), won: stage('WON', 'won', null, 4), lost: stage('LOST', 'lost', null, 5) }
type StageOf = (typeof stages)[keyof typeof stages]
const placement = (s: StageOf) => ({ pipeline_id: pipelineId, stage: s.code, stage_id: s.id, stage_kind: s.kind })

let position = 0n
const revisions = new Map<string, bigint>()
function recorded(streamName: string, type: string, data: Record<string, unknown>): RecordedEvent {
  const revision = revisions.has(streamName) ? revisions.get(streamName)! + 1n : 0n
  revisions.set(streamName, revision)
  position += 1n
  return { id: randomUUID(), type, data, metadata: { actorId: actor, orgId: org }, schemaVersion: currentVersion(type), streamName, revision, position: { commit: position, prepare: position }, createdAt: new Date() }
}

const day = (n: number, hour = 9) => new Date(Date.UTC(2026, 10, n, hour, 30)).toISOString()
const deal = (id: string) => `opportunity-${id}`
const ids = Array.from({ length: 9 }, () => randomUUID())
const place = new Map<string, StageOf>()

function created(id: string, at: string, fields: Record<string, unknown> = {}): RecordedEvent {
  place.set(id, stages.lead)
  return recorded(deal(id), 'OpportunityCreated', {
    opportunity_id: id, org_id: org, name: `Deal ${id.slice(0, 6)}`, account: null, opportunity_type: null, currency: 'USD', amount: '1000.00', probability: 20, closed_on: null,
    lead_source: null, description: null, is_active: true, contacts: [], tags: [], teams: [], assigned_to: [], closed_by: null, custom_fields: {},
    ...placement(stages.lead), created_by: actor, kanban_order: 1, at, ...fields,
  })
}
const updated = (id: string, at: string, changes: Record<string, unknown>) =>
  recorded(deal(id), 'OpportunityUpdated', { changes: Object.fromEntries(Object.entries(changes).map(([key, to]) => [key, { from: null, to }])), at })
function moved(id: string, to: StageOf, at: string): RecordedEvent {
  const from = place.get(id)!
  place.set(id, to)
  return recorded(deal(id), 'OpportunityStageChanged', { from: placement(from), to: placement(to), by: actor, at })
}
const positioned = (id: string, kanban_order: number, at: string) => recorded(deal(id), 'OpportunityPositioned', { kanban_order, at })
const deleted = (id: string, at: string) => recorded(deal(id), 'OpportunityDeleted', { at })

const [a, b, c, d, e, f, g, h, i] = ids as [string, string, string, string, string, string, string, string, string]
const firstPage = [
  recorded(`pipeline-${pipelineId}`, 'PipelineCreated', { pipeline_id: pipelineId, org_id: org, name: 'Sales', is_default: true, stages: Object.values(stages), created_by: actor, at: day(1) }),
  created(a, day(1)), created(b, day(1)), created(c, day(2), { amount: null }), created(d, day(2), { currency: null, probability: null }), created(e, day(3)),
]
/** Edits, moves, a close and a reopen, deletions, a deal moved out and back, creations and a pipeline change breaking the runs: several events per deal. */
const secondPage = [
  updated(a, day(4), { amount: '2500.50', probability: 55 }),
  moved(a, stages.proposal, day(4, 10)),
  positioned(a, 0.5, day(4, 10)),
  moved(b, stages.proposal, day(4, 11)),
  moved(b, stages.lead, day(5)),
  updated(c, day(5), { amount: '10.01', currency: 'EUR', name: 'Renamed' }),
  updated(a, day(5), { closed_on: '2026-11-05', closed_by: actor }),
  moved(a, stages.won, day(5, 12)),
  created(f, day(5, 13)),
  moved(f, stages.negotiation, day(5, 14)),
  deleted(d, day(6)),
  recorded(deal(e), 'OpportunityCommentAdded', { comment_id: randomUUID(), comment: 'A note', by: actor, at: day(6) }),
  moved(e, stages.proposal, day(6, 10)),
  recorded(`pipeline-${pipelineId}`, 'StageUpdated', { stage_id: stages.proposal.id, expected_days: 1, at: day(6, 11) }),
  moved(a, stages.proposal, day(7)),
  updated(a, day(7), { closed_on: null, closed_by: null, tags: [randomUUID()], custom_fields: { budget: 3 } }),
  updated(e, day(7), { amount: null, probability: 90 }),
  created(g, day(7, 12), { amount: '0.00' }),
  moved(g, stages.lost, day(7, 13)),
  moved(c, stages.won, day(8)),
  deleted(c, day(8, 10)),
  moved(e, stages.lead, day(8, 11)),
]
/** A page of two creates (a busy moment): a run shorter than BATCH_FROM, which creations alone still apply together. */
const thirdPage = [created(h, day(9)), created(i, day(9, 10), { amount: '7.25' })]

async function inSchema(db: Db, schema: string, work: (trx: Transaction<Database>) => Promise<void>): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await useSchema(trx, schema)
    await work(trx)
  })
}

const MOVED = ['opportunities', 'deal_totals', 'deal_stall_days', 'stage_changes', 'stage_change_deals', 'goal_deals', 'search_documents_deal']

async function rowsOf(db: Db, schema: string, table: string): Promise<string[]> {
  const { rows } = await sql<{ row: string }>`SELECT t::text AS row FROM ${sql.table(`${schema}.${table}`)} t`.execute(db)
  return rows.map((r) => r.row).sort()
}

t.test('a page applied as a batch leaves the rows applied one event at a time leaves', async (t) => {
  const { db } = await freshDatabase(t)
  for (const schema of ['one_by_one', 'batched']) {
    await sql`CREATE SCHEMA ${sql.id(schema)}`.execute(db)
    for (const projector of projectors) await inSchema(db, schema, (trx) => projector.createTables(trx))
  }
  const pages = [firstPage, secondPage, secondPage, thirdPage, thirdPage]
  for (const projector of projectors) {
    const own = (page: RecordedEvent[]) => page.filter((event) => projector.eventTypes.includes(event.type))
    for (const page of pages) {
      await inSchema(db, 'one_by_one', async (trx) => {
        for (const event of own(page)) await projector.apply(trx, event)
      })
      await inSchema(db, 'batched', (trx) => projector.applyBatch!(trx, own(page)))
    }
  }
  for (const projector of projectors) {
    for (const table of projector.tables) {
      const [one, batched] = [await rowsOf(db, 'one_by_one', table), await rowsOf(db, 'batched', table)]
      if (MOVED.includes(table)) t.ok(one.length > 1, `${table} has rows`)
      t.same(batched, one, `${table}: the same rows both ways`)
    }
  }
})
