/**
 * The lists of the modules that came after deals, and the cases' SLA analytics, at scale, beside the
 * deal list in the same run (issues 32 and 33 measure theirs as a ratio to it): BENCH_MODULE_RECORDS
 * (default 100000) deals, cases and invoices in one organization. Cases and invoices are seeded through their own pure
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
const DEAL_LIST = 'GET deal list page 1 + totals'
/** Issue 32's cells and issue 33's invoice list, each held to a p99 at 8 clients within 1.2× of the deal list's. */
const MODULE_CELLS = ['GET case list page 1 + totals', 'GET case list, 3 filters + totals', 'GET SLA analytics (service overview, 14 days)', 'GET invoice list page 1 + totals'] as const
const RATIO_TARGET = 1.2

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

/** Invoices bill an account's contact (both required): one of each, created through the API, billed by every seeded invoice. */
async function invoiceSeeder(bench: BenchApp, now: number): Promise<Seeder> {
  const actor = { profileId: bench.admin.profileId, isAdmin: true, isSuperuser: false }
  const account = (await bench.call('POST', '/api/accounts/', { name: 'Seeded client' })).body.id as string
  const contact = (await bench.call('POST', '/api/contacts/', { first_name: 'Seeded', email: 'billing@example.test', account })).body.id as string
  return {
    kind: 'invoices',
    stream: invoiceStreams.stream,
    // Invoice i: two lines, USD or EUR, drafts (numbers are given at the first send).
    eventsOf: (invoiceId, i) => {
      const at = createdAt(i, now)
      const line = (n: number) => ({ id: randomUUID(), product: null, name: `Item ${n}`, description: '', quantity: String(1 + (i % 5)), unit_price: `${100 + ((i * 104729) % 9_900)}.${String(i % 100).padStart(2, '0')}`, discount_type: null, discount_value: '0', tax_rate: null, order: n })
      const input = { invoice_title: `Seeded invoice ${i}`, account, contact, client_name: `Client ${i % 500}`, client_email: `client${i % 500}@example.test`, currency: i % 4 === 0 ? 'EUR' : 'USD', tax_rate: '10.00' }
      return decideInvoice({ type: 'CreateInvoice', invoiceId, input, lines: [line(0), line(1)], today: at.slice(0, 10), orgId: bench.orgId, actor, at }, initialInvoiceState())
    },
  }
}

export async function moduleListCells(bench: BenchApp, records: number, seconds: number): Promise<Cell[]> {
  const now = Date.now()
  // Before the seeding: a write waits for the read models, which the seeding keeps busy for minutes.
  const invoices = await invoiceSeeder(bench, now)
  await seedDeals(bench, records)
  const positions = [await seed(bench, records, caseSeeder(bench, now)), await seed(bench, records, invoices)]
  const last = positions.reduce<Position | undefined>((a, b) => (a && b ? maxPosition(a, b) : (a ?? b)), undefined)
  if (last) await bench.waitForProjections(last, 20 * 60_000)
  await sql`VACUUM (ANALYZE)`.execute(bench.db)

  const caseFilters = `/api/cases/?status=Assigned&priority=High&assigned_to=${bench.member.profileId}`
  // The SLA analytics as the web app's /tickets/analytics page loads them (its default window).
  const lists: [string, string][] = [
    [DEAL_LIST, '/api/opportunities/'],
    [MODULE_CELLS[0], '/api/cases/'],
    [MODULE_CELLS[1], caseFilters],
    [MODULE_CELLS[2], '/api/cases/analytics/service/'],
    [MODULE_CELLS[3], '/api/invoices/'],
  ]
  // What each list answers, so a filter matching nothing shows in the log.
  for (const [workload, path] of lists) progress(`${workload}: ${JSON.stringify((await bench.call('GET', path)).body).length} bytes`)
  const cells: Cell[] = []
  for (const clients of CLIENTS) {
    for (const [workload, path] of lists) cells.push(await cannon(bench, `${workload} @${records}`, clients, seconds, { method: 'GET', path }))
  }
  return cells
}

/** Each module cell's p99 at 8 clients over the deal list's in the same run, against 1.2× (issues 32 and 33). */
export function moduleTargets(cells: Cell[], records: number): string[] {
  const at8 = (workload: string) => cells.find((c) => c.workload === `${workload} @${records}` && c.clients === 8)
  const deals = at8(DEAL_LIST)
  if (!deals) return []
  const scale = records === 100_000 ? '' : ` (at ${records} records of each)`
  return MODULE_CELLS.flatMap((workload) => {
    const cell = at8(workload)
    if (!cell) return []
    const ratio = cell.p99Ms / deals.p99Ms
    const judged = `target ≤ ${RATIO_TARGET}×: ${ratio <= RATIO_TARGET ? 'met' : 'NOT met'}`
    return [`- ${workload}, 8 clients: p99 ${cell.p99Ms.toFixed(1)} ms vs the deal list's ${deals.p99Ms.toFixed(1)} ms = ${ratio.toFixed(2)}× (${judged})${scale}.`]
  })
}
