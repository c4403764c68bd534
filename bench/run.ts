/**
 * `npm run bench`: appends measured side by side, in one run, on one database server (DATABASE_URL
 * or the embedded cluster): the physical ceiling (plain INSERT + COMMIT), the peer (Emmett's
 * PostgreSQL event store, a devDependency used only here) and our PostgreSQL event store, each on
 * the same pool size. Prints a table and writes bench/results/<date>.json and .md.
 * BENCH_SECONDS (default 4) sets the duration of each cell; BENCH_KEEP_DATABASES=1 keeps the databases it seeds.
 *
 * Then, each on its own fresh database, the real app in this process over HTTP (autocannon):
 * deal commands end to end (bench/http.ts) and queries over BENCH_DEALS (default 100000) seeded
 * deals (bench/queries.ts), and global search over BENCH_SEARCH_RECORDS (default 100000) records of each
 * searched kind (bench/search.ts), and start-up (bench/startup.ts). The server runs compiled, as
 * production runs it (bench/app.ts compiles it first), with npm start's heap flags unless
 * BENCH_SERVER_FLAGS says otherwise. BENCH_ONLY=raw,peer,ours,sealing,sealing-rebuild,rebuild,http,two-processes,web-concurrency,queries,modules,search,startup,
 * projection-cpu,create-scaling runs only those. `modules`: the case and invoice lists and the cases' SLA analytics beside the deal list over
 * BENCH_MODULE_RECORDS (default 100000) of each (bench/module-lists.ts). The last two: issue 36's cells a 2-core machine can run, see
 * bench/projection-cpu.ts and bench/web-concurrency.ts; create-scaling is web-concurrency's creates alone. Progress goes to stderr: a line per cell as it finishes, and the seeding phases.
 */
import { randomUUID } from 'node:crypto'
import type pg from 'pg'
import { sql } from 'kysely'
import { STREAM_DOES_NOT_EXIST, isExpectedVersionConflictError } from '@event-driven-io/emmett'
import { getPostgreSQLEventStore } from '@event-driven-io/emmett-postgresql'
import { mkdirSync, writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { loadConfig } from '../src/config.ts'
import { createQuietPool } from '../src/db/database.ts'
import { createDb } from '../src/db/database.ts'
import { createDatabase, dropDatabase, withDatabase } from '../src/db/databases.ts'
import { startEmbeddedPostgres } from '../src/db/embedded-postgres.ts'
import { migrateToLatest } from '../src/db/migrate.ts'
import { WrongExpectedRevisionError } from '../src/eventstore/event-store.ts'
import { createPostgresEventStore } from '../src/eventstore/postgres.ts'
import type { EventStore } from '../src/eventstore/event-store.ts'
import { keyWrapping } from '../src/privacy/master-key.ts'
import { cataloguedPersonalSpecs } from '../src/privacy/personal-specs.ts'
import { sealingStore } from '../src/privacy/sealing-store.ts'
import { subjectKeys } from '../src/privacy/subject-keys.ts'
import { progressLine } from '../src/projections/kernel/progress-line.ts'
import { rebuildProjection } from '../src/projections/kernel/rebuild.ts'
import { tagsProjector } from '../src/projections/tag/tags.ts'
import { SERVER_FLAGS, compileBenchServer, startBenchApp } from './app.ts'
import { failures } from './cannon.ts'
import { withCpuCost } from './cpu-cost.ts'
import { httpCells } from './http.ts'
import { FOLLOWER, LEADER, twoProcessCells } from './two-processes.ts'
import { WEB_CONCURRENCY_CREATE, webConcurrencyCells } from './web-concurrency.ts'
import { PROJECTION_CPU, projectionCpuCells } from './projection-cpu.ts'
import { measure } from './measure.ts'
import { moduleListCells, moduleTargets } from './module-lists.ts'
import type { Cell } from './measure.ts'
import { progress } from './progress.ts'
import { PARALLEL, queryCells } from './queries.ts'
import type { Seeding } from './queries.ts'
import { searchCells } from './search.ts'
import { sealingRebuildMeasure, sealingRebuildNote } from './sealing-rebuild.ts'
import type { SealingRebuild } from './sealing-rebuild.ts'
import type { SearchResult } from './search.ts'
import { startupNote, startupRows } from './startup.ts'
import type { StartupRow } from './startup.ts'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 4)
const DEALS = Number(process.env.BENCH_DEALS ?? 100_000)
const SEARCH_RECORDS = Number(process.env.BENCH_SEARCH_RECORDS ?? 100_000)
const MODULE_RECORDS = Number(process.env.BENCH_MODULE_RECORDS ?? 100_000)
const ONLY = process.env.BENCH_ONLY?.split(',').map((w) => w.trim())
const runs = (workload: string) => !ONLY || ONLY.includes(workload)
const CLIENTS = [1, 8, 32]
const HOT_STREAMS = 100
const RAW = 'raw INSERT+COMMIT, 1 row'
const log = { info: progress, debug: () => {} }

// ~300 bytes of JSON, the size of a typical deal event.
const payload = (i: number) => ({
  opportunity_id: randomUUID(),
  name: `Renewal for Acme Corporation ${i}`,
  amount: '125000.00',
  currency: 'USD',
  stage: 'NEGOTIATION',
  probability: 75,
  closed_on: null,
  lead_source: 'EXISTING CUSTOMER',
  description: 'Multi-year renewal with expansion into two new regions.',
})
const metadata = { actorId: randomUUID(), orgId: randomUUID(), requestId: randomUUID() }

async function onCluster<T>(work: (server: string) => Promise<T>): Promise<T> {
  const cluster = process.env.DATABASE_URL ? undefined : await startEmbeddedPostgres(resolve('.data/bench'), 0, log, { owner: true })
  try {
    return await work(process.env.DATABASE_URL ?? cluster!.url)
  } finally {
    await cluster?.stop()
  }
}

async function onFreshDatabase<T>(server: string, work: (url: string) => Promise<T>): Promise<T> {
  const name = `bench_${Date.now()}`
  await createDatabase(server, name)
  try {
    return await work(withDatabase(server, name))
  } finally {
    // BENCH_KEEP_DATABASES=1 leaves the seeded database behind, to EXPLAIN a workload's queries on it.
    if (process.env.BENCH_KEEP_DATABASES === '1') console.error(`[bench] kept database ${name}`)
    else await dropDatabase(server, name)
  }
}

/** The app on its own database (the append cells' events are not deals), stopped before the database is dropped. */
const onBenchApp = <T>(server: string, work: (bench: Awaited<ReturnType<typeof startBenchApp>>) => Promise<T>) =>
  onBenchApps(server, async (start) => work(await start()))

/** Bench servers started on demand on one fresh database, all stopped (their logs kept) before it is dropped. */
const onBenchApps = <T>(server: string, work: (start: (options?: { applies?: boolean }) => ReturnType<typeof startBenchApp>) => Promise<T>) =>
  onFreshDatabase(server, async (url) => {
    const started: Awaited<ReturnType<typeof startBenchApp>>[] = []
    try {
      return await work(async (options) => {
        const bench = await startBenchApp(url, options)
        started.push(bench)
        return bench
      })
    } finally {
      for (const bench of started.reverse()) {
        await bench.stop()
        for (const [message, count] of bench.serverLog) serverLog.set(message, (serverLog.get(message) ?? 0) + count)
      }
    }
  })
const serverLog = new Map<string, number>()

/**
 * One side of the append comparison: its workloads, each a per-cell operation (a cell's clients
 * share what it closes over, as the hot-stream appender's known revisions), and how to let go.
 */
type Appender = { pool: pg.Pool; workloads: { name: string; eventsPerOp: number; op: () => (client: number, i: number) => Promise<void> }[]; close(): Promise<void> }

async function rawAppender(url: string): Promise<Appender> {
  const pool = createQuietPool(url, 34)
  await pool.query('CREATE TABLE raw_events (id bigserial PRIMARY KEY, stream text NOT NULL, data jsonb NOT NULL)')
  const row = JSON.stringify(payload(0))
  const rows10 = Array.from({ length: 10 }, () => row)
  return {
    pool,
    workloads: [
      { name: RAW, eventsPerOp: 1, op: () => () => pool.query({ name: 'raw1', text: 'INSERT INTO raw_events (stream, data) VALUES ($1, $2)', values: [randomUUID(), row] }).then(() => {}) },
      { name: 'raw INSERT+COMMIT, 10 rows', eventsPerOp: 10, op: () => () => pool.query({ name: 'raw10', text: 'INSERT INTO raw_events (stream, data) SELECT $1, d FROM unnest($2::jsonb[]) d', values: [randomUUID(), rows10] }).then(() => {}) },
    ],
    close: () => pool.end(),
  }
}

/**
 * The hot-stream workload: each client keeps the revision it last saw and, on a conflict, learns
 * the current one and retries, as a command would. Bounded, so a broken store cannot hang a cell.
 */
function hotStreamAppender<R>(append: (stream: string, expected: R | undefined, i: number) => Promise<R>, currentOnConflict: (error: unknown, stream: string) => Promise<R | undefined>) {
  const known = new Map<string, R>()
  return async (c: number, i: number) => {
    const stream = `hot-${(c * 7919 + i) % HOT_STREAMS}`
    for (let attempt = 0; attempt < 50; attempt++) {
      try {
        known.set(stream, await append(stream, known.get(stream), i))
        return
      } catch (error) {
        const current = await currentOnConflict(error, stream)
        if (current === undefined) throw error
        known.set(stream, current)
      }
    }
    throw new Error(`gave up on ${stream} after 50 conflicts`)
  }
}

async function peerAppender(url: string): Promise<Appender> {
  const pool = createQuietPool(url, 34)
  const peer = getPostgreSQLEventStore(url, { connectionOptions: { pooled: true, pool } })
  await peer.appendToStream(`warmup-${randomUUID()}`, [{ type: 'Warmup', data: {} }])
  return {
    pool,
    workloads: [
      { name: 'peer: 1 event, new stream', eventsPerOp: 1, op: () => (_c, i) => peer.appendToStream(`deal-${randomUUID()}`, [{ type: 'OpportunityCreated', data: payload(i), metadata }], { expectedStreamVersion: STREAM_DOES_NOT_EXIST }).then(() => {}) },
      {
        name: 'peer: 1 event, 100 hot streams',
        eventsPerOp: 1,
        op: () =>
          hotStreamAppender<bigint>(
            async (stream, expected, i) => (await peer.appendToStream(`peer-${stream}`, [{ type: 'OpportunityUpdated', data: payload(i), metadata }], { expectedStreamVersion: expected ?? STREAM_DOES_NOT_EXIST })).nextExpectedStreamVersion,
            // Emmett's conflict error does not carry the current version (-1, a TODO in its source): read it back.
            async (error, stream) => (isExpectedVersionConflictError(error) ? (await peer.readStream(`peer-${stream}`)).currentStreamVersion : undefined),
          ),
      },
    ],
    async close() {
      await peer.close()
      if (!pool.ended) await pool.end()
    },
  }
}

/** Our event store as the server opens it (runtime.ts): its pool of PG_POOL_SIZE, appends through the group committer. */
async function oursAppender(url: string): Promise<Appender> {
  const pool = createQuietPool(url, loadConfig({ DATABASE_URL: url }).config.pgPoolSize)
  const db = createDb(pool)
  await migrateToLatest(db)
  const store = createPostgresEventStore({ pool })
  return {
    pool,
    workloads: [
      { name: 'ours: 1 event, new stream', eventsPerOp: 1, op: () => (_c, i) => store.appendToStream(`deal-${randomUUID()}`, [{ type: 'OpportunityCreated', data: payload(i), metadata }], { expectedRevision: 'no_stream' }).then(() => {}) },
      {
        name: 'ours: 1 event, 100 hot streams',
        eventsPerOp: 1,
        op: () =>
          hotStreamAppender<bigint | 'no_stream'>(
            async (stream, expected, i) => (await store.appendToStream(stream, [{ type: 'OpportunityUpdated', data: payload(i), metadata }], { expectedRevision: expected ?? 'no_stream' })).nextExpectedRevision,
            async (error) => (error instanceof WrongExpectedRevisionError && error.actual !== 'unknown' ? error.actual : undefined),
          ),
      },
    ],
    async close() {
      await store.close()
      await db.destroy()
    },
  }
}

/**
 * The cost of sealing (issue 31; BENCH_ONLY=sealing): a contact's creation (a new person, so a new
 * data key, wrapped by the master key) through our store as the server opens it, sealing, and
 * through the same store without sealing, interleaved at each client count. Their ratio is the cost.
 */
async function sealingAppender(url: string): Promise<Appender> {
  const { config } = loadConfig({ DATABASE_URL: url })
  const pool = createQuietPool(url, config.pgPoolSize)
  const db = createDb(pool)
  await migrateToLatest(db)
  const plain = createPostgresEventStore({ pool })
  const sealed = sealingStore(plain, subjectKeys(db, keyWrapping(config.masterKeys), { inEventDatabase: true }), cataloguedPersonalSpecs)
  const orgId = randomUUID()
  const contact = (id: string, i: number) => ({ type: 'ContactCreated', data: { contact_id: id, org_id: orgId, first_name: `Ada ${i}`, last_name: 'Lovelace', email: `ada.${i}.${id}@example.test`, phone: '+44 20 7946 0000', address_line: '12 St James Square', city: 'London', at: new Date().toISOString() }, metadata })
  const create = (store: EventStore) => () => (_c: number, i: number) => {
    const id = randomUUID()
    return store.appendToStream(`contact-${id}`, [contact(id, i)], { expectedRevision: 'no_stream' }).then(() => {})
  }
  return {
    pool,
    workloads: [
      { name: 'contact create, plain', eventsPerOp: 1, op: create(plain) },
      { name: 'contact create, sealed', eventsPerOp: 1, op: create(sealed) },
    ],
    async close() {
      await plain.close()
      await db.destroy()
    },
  }
}

/**
 * The append cells, interleaved: at each client count the raw ceiling, the peer and ours run one
 * after the other, so a ratio compares cells seconds apart. (Run as blocks, all raw cells first,
 * a neighbour's load that came or went in the minute between made ours 0.55 of raw in one run
 * and 1.11 in the next.) The table lists them by workload.
 */
async function appendCells(url: string, sides: (() => Promise<Appender>)[]): Promise<Cell[]> {
  const appenders: Appender[] = []
  for (const open of sides) appenders.push(await open())
  const cells: Cell[] = []
  for (const clients of CLIENTS) {
    for (const { pool, workloads } of appenders) for (const w of workloads) cells.push(await withCpuCost(pool, [process.pid], () => measure(w.name, clients, SECONDS, w.eventsPerOp, w.op())))
  }
  for (const appender of appenders) await appender.close()
  const order = appenders.flatMap((a) => a.workloads.map((w) => w.name))
  return cells.sort((a, b) => order.indexOf(a.workload) - order.indexOf(b.workload) || a.clients - b.clients)
}

/**
 * Rebuild throughput: REBUILD_EVENTS tag events appended in bulk (one INSERT ... SELECT, as a
 * migration import would), then the tags projection replayed from position 0 into fresh tables.
 */
async function rebuildMeasure(url: string): Promise<{ events: number; ms: number; eventsPerSec: number; nodeUsPerEvent: number; backendsUsPerEvent: number; duringSwap: Awaited<ReturnType<typeof readsDuringRebuild>> }> {
  const count = Number(process.env.REBUILD_EVENTS ?? 100_000)
  const pool = createQuietPool(url, 4)
  const db = createDb(pool)
  await migrateToLatest(db)
  progress(`rebuild: appending ${count.toLocaleString('en-US')} tag events`)
  await pool.query(
    `INSERT INTO events (stream_name, stream_revision, event_id, event_type, schema_version, data, metadata)
     SELECT 'tag-' || id, 0, gen_random_uuid(), 'TagCreated', 1,
            jsonb_build_object('tag_id', id, 'org_id', $2::uuid, 'name', 'tag ' || n, 'color', null, 'created_by', null, 'at', '2026-11-22T09:00:00Z'), '{}'
     FROM (SELECT gen_random_uuid() AS id, n FROM generate_series(1, $1::int) n) s`,
    [count, randomUUID()],
  )
  const store = createPostgresEventStore({ pool })
  const result = await withCpuCost(pool, [process.pid], async () => {
    const rebuilt = await rebuildProjection(db, store, tagsProjector, 2000, { onProgress: progressLine((line) => progress(`rebuild: ${line.trimEnd()}`), 5000) })
    return { ...rebuilt, ops: rebuilt.events }
  })
  const duringSwap = await readsDuringRebuild(db, () => rebuildProjection(db, store, tagsProjector, 2000))
  await store.close()
  await db.destroy()
  // NaN (an empty cell) when /proc does not show the database's backends.
  const nodeUsPerEvent = result.nodeCpuUsPerOp ?? Number.NaN
  return { events: result.events, ms: result.ms, eventsPerSec: result.events / (result.ms / 1000), nodeUsPerEvent, backendsUsPerEvent: (result.cpuUsPerOp ?? Number.NaN) - nodeUsPerEvent, duringSwap }
}

/**
 * Blue-green reads: one client queries the live tags table back to back while `rebuild` builds the
 * new tables beside it and swaps them in; its latencies, failures and whether a count ever dropped.
 */
async function readsDuringRebuild(db: ReturnType<typeof createDb>, rebuild: () => Promise<unknown>): Promise<{ reads: number; p50Ms: number; p99Ms: number; maxMs: number; failed: number; wentBackwards: number }> {
  const latencies: number[] = []
  let failed = 0
  let wentBackwards = 0
  let last = 0
  let reading = true
  const reader = (async () => {
    while (reading) {
      const started = performance.now()
      try {
        const { rows } = await sql<{ n: string }>`SELECT count(*) AS n FROM tags`.execute(db)
        latencies.push(performance.now() - started)
        if (Number(rows[0]!.n) < last) wentBackwards++
        last = Number(rows[0]!.n)
      } catch {
        failed++
      }
    }
  })()
  await rebuild()
  reading = false
  await reader
  const sorted = latencies.sort((a, b) => a - b)
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? 0
  return { reads: sorted.length, p50Ms: at(0.5), p99Ms: at(0.99), maxMs: sorted.at(-1) ?? 0, failed, wentBackwards }
}

const num = (v: number | undefined, digits = 0) => (v === undefined || Number.isNaN(v) ? '' : v.toFixed(digits))

function report(cells: Cell[]): string {
  const ops = (workload: string, clients: number) => cells.find((c) => c.workload === workload && c.clients === clients)?.opsPerSec
  const vsPeer = (c: Cell) => {
    const peer = c.workload.startsWith('ours: ') ? ops(c.workload.replace('ours: ', 'peer: '), c.clients) : undefined
    return peer ? `${(c.opsPerSec / peer).toFixed(2)}x` : ''
  }
  const vsRaw = (c: Cell) => (c.workload.startsWith('GET ') ? undefined : c.opsPerSec / (ops(RAW, c.clients) ?? NaN))
  const lines = [
    '| workload | clients | ops/s | events/s | p50 ms | p99 ms | vs raw 1-row | ours vs peer | errors | non-2xx | peak RSS MB | RYW wait p50/p99 ms | CPU µs/op (Node) |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...cells.map(
      (c) =>
        `| ${c.workload} | ${c.clients} | ${c.opsPerSec.toFixed(0)} | ${num(c.eventsPerSec)} | ${c.p50Ms.toFixed(2)} | ${c.p99Ms.toFixed(2)} | ${num(vsRaw(c), 2)} | ${vsPeer(c)} | ${c.errors} | ${num(c.non2xx)} | ${num(c.peakRssMb)} | ${c.rywP50Ms === undefined ? '' : `${c.rywP50Ms.toFixed(1)} / ${c.rywP99Ms!.toFixed(1)}`} | ${c.cpuUsPerOp === undefined ? '' : `${num(c.cpuUsPerOp)} (${num(c.nodeCpuUsPerOp)})`} |`,
    ),
  ]
  return lines.join('\n')
}

/** Issue 20's latency targets, per cell. */
const LATENCY_TARGETS: readonly { prefix: string; clients: number; stat: 'p50Ms' | 'p99Ms' | 'rywP99Ms'; limit: number }[] = [
  { prefix: 'HTTP move deal', clients: 32, stat: 'p99Ms', limit: 100 },
  { prefix: 'HTTP move deal', clients: 32, stat: 'rywP99Ms', limit: 50 },
  { prefix: 'GET list page 1 + totals', clients: 1, stat: 'p99Ms', limit: 50 },
  { prefix: 'GET list page 1 + totals', clients: 8, stat: 'p99Ms', limit: 30 },
  { prefix: 'GET list, 3 filters', clients: 1, stat: 'p50Ms', limit: 5 },
  { prefix: 'GET list, 3 filters', clients: 8, stat: 'p99Ms', limit: 50 },
  { prefix: 'GET board', clients: 8, stat: 'p99Ms', limit: 100 },
]
const STAT_NAMES = { p50Ms: 'p50', p99Ms: 'p99', rywP99Ms: 'RYW wait p99' }

function targets(cells: Cell[]): string[] {
  const cell = (prefix: string, clients: number) => cells.find((c) => c.workload.startsWith(prefix) && c.clients === clients)
  const lines: string[] = []
  const create = cell('HTTP create deal', 32)
  const raw = cell(RAW, 32)
  if (create) lines.push(raw ? `- End-to-end create at 32 clients: ${((100 * create.opsPerSec) / raw.opsPerSec).toFixed(1)}% of raw 1-row INSERT+COMMIT (target ≥ 15%): ${create.opsPerSec >= 0.15 * raw.opsPerSec ? 'met' : 'NOT met'}.` : '- End-to-end create vs raw 1-row: raw cells not run (BENCH_ONLY).')
  for (const workload of ['ours: 1 event, new stream', 'ours: 1 event, 100 hot streams']) {
    for (const clients of [8, 32]) {
      const [ours, rawAt, peer] = [cell(workload, clients), cell(RAW, clients), cell(workload.replace('ours: ', 'peer: '), clients)]
      if (!ours || !rawAt) continue
      const [vsRaw, vsPeer] = [ours.opsPerSec / rawAt.opsPerSec, peer ? ours.opsPerSec / peer.opsPerSec : undefined]
      lines.push(`- ${workload}, ${clients} clients: ${vsRaw.toFixed(2)} of raw 1-row (target ≥ 0.7): ${vsRaw >= 0.7 ? 'met' : 'NOT met'}${vsPeer === undefined ? '' : `; ${vsPeer.toFixed(2)}× the peer (target ≥ 1.5×): ${vsPeer >= 1.5 ? 'met' : 'NOT met'}`}.`)
    }
  }
  const at = DEALS === 100_000 ? '' : ` (at ${DEALS} deals)`
  for (const { prefix, clients, stat, limit } of LATENCY_TARGETS) {
    const c = cell(prefix, clients)
    const value = c?.[stat]
    if (value !== undefined) lines.push(`- ${c!.workload}, ${clients} client${clients > 1 ? 's' : ''}: ${STAT_NAMES[stat]} ${value.toFixed(1)} ms (target ≤ ${limit} ms): ${value <= limit ? 'met' : 'NOT met'}${prefix.startsWith('GET') ? at : ''}.`)
  }
  lines.push(...moduleTargets(cells, MODULE_RECORDS))
  const rss = Math.max(...cells.map((c) => c.peakRssMb ?? 0))
  if (rss > 0) lines.push(`- Server peak RSS over the HTTP and query cells: ${rss.toFixed(0)} MB (target ≤ 200 MB): ${rss <= 200 ? 'met' : 'NOT met'}.`)
  for (const c of cells.filter((c) => c.workload.startsWith('GET search'))) {
    lines.push(`- ${c.workload}, ${c.clients} client${c.clients > 1 ? 's' : ''}: p99 ${c.p99Ms.toFixed(1)} ms (target ≤ 50 ms at 100k records per kind): ${c.p99Ms <= 50 ? 'met' : 'NOT met'}${SEARCH_RECORDS === 100_000 ? '' : ` (at ${SEARCH_RECORDS} per kind)`}.`)
  }
  for (const clients of [8, 32]) {
    const [leader, follower] = [cell(LEADER, clients), cell(FOLLOWER, clients)]
    if (leader?.rywP99Ms !== undefined && follower?.rywP99Ms !== undefined) {
      const ratio = follower.rywP99Ms / leader.rywP99Ms
      lines.push(`- Two processes, ${clients} clients: RYW wait p99 on the follower ${follower.rywP99Ms.toFixed(1)} ms vs ${leader.rywP99Ms.toFixed(1)} ms on the leader = ${ratio.toFixed(2)}× (target ≤ 1.5×): ${ratio <= 1.5 ? 'met' : 'NOT met'}.`)
    }
  }
  for (const c of cells.filter((c) => c.workload === PROJECTION_CPU && c.cpuUsPerOp !== undefined)) {
    lines.push(`- Projections' CPU per create, ${c.clients} client${c.clients > 1 ? 's' : ''}: ${c.cpuUsPerOp!.toFixed(0)} µs (Node ${c.nodeCpuUsPerOp!.toFixed(0)} µs, its PostgreSQL backends ${(c.cpuUsPerOp! - c.nodeCpuUsPerOp!).toFixed(0)} µs) over ${c.ops} creates (target: at most half of the figure before issue 36, docs/performance.md).`)
  }
  for (const clients of [8, 32]) {
    const [one, two] = [cell(`${WEB_CONCURRENCY_CREATE}, 1 process`, clients), cell(`${WEB_CONCURRENCY_CREATE}, 2 processes`, clients)]
    if (one && two && one.opsPerSec > 0) lines.push(`- Creates/s with WEB_CONCURRENCY=2 over WEB_CONCURRENCY=1, ${clients} clients: ${(two.opsPerSec / one.opsPerSec).toFixed(2)} (${two.opsPerSec.toFixed(0)} / ${one.opsPerSec.toFixed(0)}; reported, not a target).`)
  }
  return lines
}

const startedAt = new Date()
if (['http', 'two-processes', 'queries', 'modules', 'search', 'startup', 'projection-cpu'].some(runs)) compileBenchServer()
const { cells, rebuild, seeding, search, startup, sealingRebuild } = await onCluster(async (server) => {
  const cells: Cell[] = []
  let sealingRebuild: SealingRebuild | undefined
  let rebuild: Awaited<ReturnType<typeof rebuildMeasure>> | undefined
  let seeding: Seeding | undefined
  let search: SearchResult | undefined
  let startup: StartupRow[] | undefined
  if (runs('startup')) startup = await startupRows(server)
  if (['raw', 'peer', 'ours', 'sealing', 'rebuild'].some(runs))
    await onFreshDatabase(server, async (url) => {
      const sides = [runs('raw') && rawAppender, runs('peer') && peerAppender, runs('ours') && oursAppender, runs('sealing') && sealingAppender].filter((side) => side !== false)
      if (sides.length) cells.push(...(await appendCells(url, sides.map((side) => () => side(url)))))
      if (runs('rebuild')) rebuild = await rebuildMeasure(url)
    })
  if (runs('sealing-rebuild')) sealingRebuild = await sealingRebuildMeasure(server)
  if (runs('http')) await onBenchApp(server, async (bench) => cells.push(...(await httpCells(bench, SECONDS, CLIENTS))))
  if (runs('two-processes')) await onBenchApps(server, async (start) => cells.push(...(await twoProcessCells(start, SECONDS, [8, 32])).cells))
  if (runs('web-concurrency')) await onFreshDatabase(server, async (url) => cells.push(...(await webConcurrencyCells(url, SECONDS, [8, 32]))))
  else if (runs('create-scaling')) await onFreshDatabase(server, async (url) => cells.push(...(await webConcurrencyCells(url, SECONDS, [8, 32], [1, 2], false))))
  if (runs('projection-cpu')) await onFreshDatabase(server, async (url) => cells.push(...(await projectionCpuCells(url, SECONDS, [8, 32]))))
  if (runs('queries'))
    await onBenchApp(server, async (bench) => {
      const result = await queryCells(bench, DEALS, SECONDS)
      cells.push(...result.cells)
      seeding = result.seeding
    })
  if (runs('modules')) await onBenchApp(server, async (bench) => cells.push(...(await moduleListCells(bench, MODULE_RECORDS, SECONDS))))
  if (runs('search'))
    await onBenchApp(server, async (bench) => {
      search = await searchCells(bench, SEARCH_RECORDS, SECONDS)
      cells.push(...search.cells)
    })
  return { cells, rebuild, seeding, search, startup, sealingRebuild }
})
const notes = [
  sealingRebuild && sealingRebuildNote(sealingRebuild),
  rebuild && `Rebuild of the tags projection: ${rebuild.events} events in ${(rebuild.ms / 1000).toFixed(1)} s = ${rebuild.eventsPerSec.toFixed(0)} events/s (target 100,000). CPU per event: this process ${rebuild.nodeUsPerEvent.toFixed(1)} µs, the database's PostgreSQL backends ${rebuild.backendsUsPerEvent.toFixed(1)} µs (load-independent where wall time is not; 0 when the server is not on this machine).`,
  rebuild &&
    `Reads of the live tags table during a second rebuild and its swap (one client, back to back): ${rebuild.duringSwap.reads} reads, p50 ${rebuild.duringSwap.p50Ms.toFixed(1)} ms, p99 ${rebuild.duringSwap.p99Ms.toFixed(1)} ms, max ${rebuild.duringSwap.maxMs.toFixed(1)} ms; ${rebuild.duringSwap.failed} failed, ${rebuild.duringSwap.wentBackwards} went backwards.`,
  seeding &&
    `Seeding ${seeding.deals} deals (1 OpportunityCreated each, ${PARALLEL} parallel appends): appended in ${seeding.appendSeconds.toFixed(1)} s (${seeding.appendPerSec.toFixed(0)} events/s), appended and projected in ${seeding.totalSeconds.toFixed(1)} s (${seeding.eventsPerSec.toFixed(0)} events/s). The list counts ${seeding.listed} deals, the 3-filter list ${seeding.filtered}, the board ${seeding.onBoard}.`,
  startup && startupNote(startup),
  search &&
    `Search: ${search.seeding.perKind} records of each of 6 kinds seeded (template events copied by INSERT … SELECT, then applied by every projection) in ${search.seeding.seconds.toFixed(1)} s (${search.seeding.eventsPerSec.toFixed(0)} events/s). Each query alone, 30 times in a row (hits, p50 / p99 ms): ${search.perQuery.map((r) => `"${r.q}" ${r.hits}, ${r.p50Ms.toFixed(1)} / ${r.p99Ms.toFixed(1)}`).join('; ')}.`,
  cells.some((c) => c.non2xx !== undefined) &&
    `HTTP rows: the server runs in its own Node process, compiled, with ${SERVER_FLAGS.join(' ') || "Node's default heap"}, autocannon in the bench's (2 cores shared by both and PostgreSQL); ops/s counts 2xx answers; latency is autocannon's; peak RSS is the server process's, sampled every 100 ms during the cell. Writes answer after their events are in the read models; "RYW wait" is the time a write spent waiting for that (the projection lag it observed). GET rows: 1 and 8 connections, admin token.`,
].filter(Boolean)
const targetLines = targets(cells)
const problems = [...[...failures].map(([k, n]) => `- ${n}× HTTP ${k}`), ...[...serverLog].map(([k, n]) => `- ${n}× server log: ${k}`)]
const table = [report(cells), notes.join('\n\n'), targetLines.length ? `Targets:\n${targetLines.join('\n')}` : '', problems.length ? `Problems seen:\n${problems.join('\n')}` : ''].filter(Boolean).join('\n\n')
const server = process.env.DATABASE_URL ? 'DATABASE_URL' : 'embedded PostgreSQL'
console.log(table)
mkdirSync('bench/results', { recursive: true })
const stamp = startedAt.toISOString().replace(/[:.]/g, '-')
const meta = { startedAt, seconds: SECONDS, deals: DEALS, searchRecords: SEARCH_RECORDS, only: ONLY ?? null, server, node: process.version, peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024) }
writeFileSync(`bench/results/${stamp}.json`, JSON.stringify({ ...meta, serverFlags: SERVER_FLAGS, cells, rebuild, sealingRebuild, seeding, search, startup, problems }, null, 2))
writeFileSync(`bench/results/${stamp}.md`, `# Bench ${startedAt.toISOString()}\n\n${SECONDS} s per cell on ${server}, Node ${process.version}, peak RSS ${meta.peakRssMb} MB.\n\n${table}\n`)
log.info(`wrote bench/results/${stamp}.json and .md`)
