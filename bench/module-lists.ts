/**
 * The lists of the modules that came after deals, at scale, beside the deal list in the same run
 * (issues 32 and 33 measure theirs as a ratio to it): BENCH_MODULE_RECORDS (default 100000) deals,
 * cases and invoices in one organization. Cases and invoices are seeded through their own pure
 * deciders (the events a create command would append, SLA instances included), so the seed follows
 * their event shapes as they change; each record is one new stream, appended in parallel, and the
 * cells start once every projection has applied them.
 */
import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import { caseStreams, decideCase, initialCaseState } from '../src/commands/case/case.ts'
import { CASE_PRIORITIES, CASE_STATUSES } from '../src/commands/case/fields.ts'
import { decideInvoice, initialInvoiceState, invoiceStreams } from '../src/commands/invoice/invoice.ts'
import type { Position } from '../src/eventstore/event-store.ts'
import { maxPosition } from '../src/eventstore/event-store.ts'
import type { BenchApp } from './app.ts'
import { cannon } from './cannon.ts'
import type { Cell } from './measure.ts'
import { countLine, progress, reporting } from './progress.ts'
import { PARALLEL, seedDeals } from './queries.ts'

const CLIENTS = [1, 8]
const DAY = 86_400_000

type Seeder = { kind: string; stream: (id: string) => string; eventsOf: (id: string, i: number) => { type: string; data: unknown }[] }

/** Appends `count` records of one kind, `PARALLEL` at a time; the position of the last append. */
async function seed(bench: BenchApp, count: number, seeder: Seeder): Promise<Position | undefined> {
  let last: Position | undefined
  let next = 0
  const t0 = performance.now()
  progress(`seeding ${count.toLocaleString('en-US')} ${seeder.kind}`)
  const metadata = { actorId: bench.admin.profileId, orgId: bench.orgId }
  const appending = Promise.all(
    Array.from({ length: PARALLEL }, async () => {
      for (let i = next++; i < count; i = next++) {
        const id = randomUUID()
        const events = seeder.eventsOf(id, i).map((event) => ({ ...event, metadata }))
        const result = await bench.store.appendToStream(seeder.stream(id), events as never, { expectedRevision: 'no_stream' })
        last = last ? maxPosition(last, result.position) : result.position
      }
    }),
  )
  await reporting(5000, () => countLine(`${seeder.kind} appended`, Math.min(next, count), count, t0), appending)
  return last
}

/** A created day over two years, spread by `i` (the same spread as the deal seed). */
const createdAt = (i: number, now: number) => new Date(now - ((i * 7919) % ((730 * DAY) / 1000)) * 1000 - 1000).toISOString()

function caseSeeder(bench: BenchApp, now: number): Seeder {
  const actor = { profileId: bench.admin.profileId, isAdmin: true, isSuperuser: false }
  const assignees = [bench.admin.profileId, bench.member.profileId]
  return {
    kind: 'cases',
    stream: caseStreams.stream,
    // Case i: status and priority cycling, one of two assignees; closed ones carry their date.
    eventsOf: (caseId, i) => {
      const status = CASE_STATUSES[i % CASE_STATUSES.length]!
      const at = createdAt(i, now)
      const input = { name: `Seeded case ${i}`, status, priority: CASE_PRIORITIES[i % CASE_PRIORITIES.length]!, assigned_to: [assignees[i % 2]!], description: 'Seeded by npm run bench.', closed_on: status === 'Closed' ? at.slice(0, 10) : null }
      return decideCase({ type: 'CreateCase', caseId, calendarVersion: 0, orgId: bench.orgId, actor, input, customFields: [], at }, initialCaseState())
    },
  }
}

function invoiceSeeder(bench: BenchApp, now: number): Seeder {
  const actor = { profileId: bench.admin.profileId, isAdmin: true, isSuperuser: false }
  return {
    kind: 'invoices',
    stream: invoiceStreams.stream,
    // Invoice i: two lines, USD or EUR, drafts (numbers are given at the first send).
    eventsOf: (invoiceId, i) => {
      const at = createdAt(i, now)
      const line = (n: number) => ({ id: randomUUID(), product: null, name: `Item ${n}`, description: '', quantity: String(1 + (i % 5)), unit_price: `${100 + ((i * 104729) % 9_900)}.${String(i % 100).padStart(2, '0')}`, discount_type: null, discount_value: '0', tax_rate: null, order: n })
      const input = { invoice_title: `Seeded invoice ${i}`, client_name: `Client ${i % 500}`, client_email: `client${i % 500}@example.test`, currency: i % 4 === 0 ? 'EUR' : 'USD', tax_rate: '10.00' }
      return decideInvoice({ type: 'CreateInvoice', invoiceId, input, lines: [line(0), line(1)], today: at.slice(0, 10), orgId: bench.orgId, actor, at }, initialInvoiceState())
    },
  }
}

export async function moduleListCells(bench: BenchApp, records: number, seconds: number): Promise<Cell[]> {
  const now = Date.now()
  await seedDeals(bench, records)
  const positions = [await seed(bench, records, caseSeeder(bench, now)), await seed(bench, records, invoiceSeeder(bench, now))]
  const last = positions.reduce<Position | undefined>((a, b) => (a && b ? maxPosition(a, b) : (a ?? b)), undefined)
  if (last) await bench.waitForProjections(last, 20 * 60_000)
  await sql`VACUUM (ANALYZE)`.execute(bench.db)

  const caseFilters = `/api/cases/?status=Assigned&priority=High&assigned_to=${bench.member.profileId}`
  const lists: [string, string][] = [
    ['GET deal list page 1 + totals', '/api/opportunities/'],
    ['GET case list page 1 + totals', '/api/cases/'],
    ['GET case list, 3 filters + totals', caseFilters],
    ['GET invoice list page 1 + totals', '/api/invoices/'],
  ]
  // What each list answers, so a filter matching nothing shows in the log.
  for (const [workload, path] of lists) progress(`${workload}: ${JSON.stringify((await bench.call('GET', path)).body).length} bytes`)
  const cells: Cell[] = []
  for (const clients of CLIENTS) {
    for (const [workload, path] of lists) cells.push(await cannon(bench, `${workload} @${records}`, clients, seconds, { method: 'GET', path }))
  }
  return cells
}
