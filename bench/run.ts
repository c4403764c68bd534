/**
 * `npm run bench`: appends measured side by side, in one run, on one database server (DATABASE_URL
 * or the embedded cluster): the physical ceiling (plain INSERT + COMMIT), the peer (Emmett's
 * PostgreSQL event store, a devDependency used only here) and our PostgreSQL event store, each on
 * the same pool size. Prints a table and writes bench/results/<date>.json and .md.
 * BENCH_SECONDS (default 4) sets the duration of each cell.
 */
import { randomUUID } from 'node:crypto'
import { STREAM_DOES_NOT_EXIST, isExpectedVersionConflictError } from '@event-driven-io/emmett'
import { getPostgreSQLEventStore } from '@event-driven-io/emmett-postgresql'
import { mkdirSync, writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { createPool } from '../src/db/database.ts'
import { createDb } from '../src/db/database.ts'
import { createDatabase, dropDatabase, withDatabase } from '../src/db/databases.ts'
import { startEmbeddedPostgres } from '../src/db/embedded-postgres.ts'
import { migrateToLatest } from '../src/db/migrate.ts'
import { WrongExpectedRevisionError } from '../src/eventstore/event-store.ts'
import { createPostgresEventStore } from '../src/eventstore/postgres.ts'
import { rebuildProjection } from '../src/projections/rebuild.ts'
import { tagsProjector } from '../src/projections/tags.ts'
import { measure } from './measure.ts'
import type { Cell } from './measure.ts'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 4)
const CLIENTS = [1, 8, 32]
const HOT_STREAMS = 100
const log = { info: (m: string) => console.error(`[bench] ${m}`), debug: () => {} }

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

async function onFreshDatabase<T>(work: (url: string) => Promise<T>): Promise<T> {
  const cluster = process.env.DATABASE_URL ? undefined : await startEmbeddedPostgres(resolve('.data/bench'), 0, log, { owner: true })
  const server = process.env.DATABASE_URL ?? cluster!.url
  const name = `bench_${Date.now()}`
  await createDatabase(server, name)
  try {
    return await work(withDatabase(server, name))
  } finally {
    await dropDatabase(server, name)
    await cluster?.stop()
  }
}

async function rawCells(url: string): Promise<Cell[]> {
  const cells: Cell[] = []
  const pool = createPool(url, 34)
  await pool.query('CREATE TABLE raw_events (id bigserial PRIMARY KEY, stream text NOT NULL, data jsonb NOT NULL)')
  const row = JSON.stringify(payload(0))
  for (const clients of CLIENTS) {
    cells.push(await measure('raw INSERT+COMMIT, 1 row', clients, SECONDS, 1, () => pool.query({ name: 'raw1', text: 'INSERT INTO raw_events (stream, data) VALUES ($1, $2)', values: [randomUUID(), row] }).then(() => {})))
  }
  const rows10 = Array.from({ length: 10 }, () => row)
  for (const clients of CLIENTS) {
    cells.push(
      await measure('raw INSERT+COMMIT, 10 rows', clients, SECONDS, 10, () =>
        pool.query({ name: 'raw10', text: 'INSERT INTO raw_events (stream, data) SELECT $1, d FROM unnest($2::jsonb[]) d', values: [randomUUID(), rows10] }).then(() => {}),
      ),
    )
  }
  await pool.end()
  return cells
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

async function peerCells(url: string): Promise<Cell[]> {
  const cells: Cell[] = []
  const pool = createPool(url, 34)
  const peer = getPostgreSQLEventStore(url, { connectionOptions: { pooled: true, pool } })
  await peer.appendToStream(`warmup-${randomUUID()}`, [{ type: 'Warmup', data: {} }])
  for (const clients of CLIENTS) {
    cells.push(await measure('peer: 1 event, new stream', clients, SECONDS, 1, (_c, i) => peer.appendToStream(`deal-${randomUUID()}`, [{ type: 'OpportunityCreated', data: payload(i), metadata }], { expectedStreamVersion: STREAM_DOES_NOT_EXIST }).then(() => {})))
  }
  for (const clients of CLIENTS) {
    const append = hotStreamAppender<bigint>(
      async (stream, expected, i) => (await peer.appendToStream(`peer-${stream}`, [{ type: 'OpportunityUpdated', data: payload(i), metadata }], { expectedStreamVersion: expected ?? STREAM_DOES_NOT_EXIST })).nextExpectedStreamVersion,
      // Emmett's conflict error does not carry the current version (-1, a TODO in its source): read it back.
      async (error, stream) => (isExpectedVersionConflictError(error) ? (await peer.readStream(`peer-${stream}`)).currentStreamVersion : undefined),
    )
    cells.push(await measure('peer: 1 event, 100 hot streams', clients, SECONDS, 1, append))
  }
  await peer.close()
  if (!pool.ended) await pool.end()
  return cells
}

async function eventStoreCells(url: string): Promise<Cell[]> {
  const cells: Cell[] = []
  const pool = createPool(url, 34)
  const db = createDb(pool)
  await migrateToLatest(db)
  const store = createPostgresEventStore({ pool })
  for (const clients of CLIENTS) {
    cells.push(await measure('ours: 1 event, new stream', clients, SECONDS, 1, (_c, i) => store.appendToStream(`deal-${randomUUID()}`, [{ type: 'OpportunityCreated', data: payload(i), metadata }], { expectedRevision: 'no_stream' }).then(() => {})))
  }
  for (const clients of CLIENTS) {
    const append = hotStreamAppender<bigint | 'no_stream'>(
      async (stream, expected, i) => (await store.appendToStream(stream, [{ type: 'OpportunityUpdated', data: payload(i), metadata }], { expectedRevision: expected ?? 'no_stream' })).nextExpectedRevision,
      async (error) => (error instanceof WrongExpectedRevisionError && error.actual !== 'unknown' ? error.actual : undefined),
    )
    cells.push(await measure('ours: 1 event, 100 hot streams', clients, SECONDS, 1, append))
  }
  await store.close()
  await db.destroy()
  return cells
}

/**
 * Rebuild throughput: REBUILD_EVENTS tag events appended in bulk (one INSERT ... SELECT, as a
 * migration import would), then the tags projection replayed from position 0 into fresh tables.
 */
async function rebuildMeasure(url: string): Promise<{ events: number; ms: number; eventsPerSec: number }> {
  const count = Number(process.env.REBUILD_EVENTS ?? 100_000)
  const pool = createPool(url, 4)
  const db = createDb(pool)
  await migrateToLatest(db)
  await pool.query(
    `INSERT INTO events (stream_name, stream_revision, event_id, event_type, schema_version, data, metadata)
     SELECT 'tag-' || id, 0, gen_random_uuid(), 'TagCreated', 1,
            jsonb_build_object('tag_id', id, 'org_id', $2::uuid, 'name', 'tag ' || n, 'color', null, 'created_by', null, 'at', '2026-11-22T09:00:00Z'), '{}'
     FROM (SELECT gen_random_uuid() AS id, n FROM generate_series(1, $1::int) n) s`,
    [count, randomUUID()],
  )
  const store = createPostgresEventStore({ pool })
  const result = await rebuildProjection(db, store, tagsProjector, 2000)
  await store.close()
  await db.destroy()
  return { events: result.events, ms: result.ms, eventsPerSec: result.events / (result.ms / 1000) }
}

function report(cells: Cell[]): string {
  const ops = (workload: string, clients: number) => cells.find((c) => c.workload === workload && c.clients === clients)?.opsPerSec
  const vsPeer = (c: Cell) => {
    const peer = c.workload.startsWith('ours: ') ? ops(c.workload.replace('ours: ', 'peer: '), c.clients) : undefined
    return peer ? `${(c.opsPerSec / peer).toFixed(2)}x` : ''
  }
  const lines = [
    '| workload | clients | ops/s | events/s | p50 ms | p99 ms | vs raw 1-row | ours vs peer | errors |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...cells.map((c) => `| ${c.workload} | ${c.clients} | ${c.opsPerSec.toFixed(0)} | ${c.eventsPerSec.toFixed(0)} | ${c.p50Ms.toFixed(2)} | ${c.p99Ms.toFixed(2)} | ${(c.opsPerSec / ops('raw INSERT+COMMIT, 1 row', c.clients)!).toFixed(2)} | ${vsPeer(c)} | ${c.errors} |`),
  ]
  return lines.join('\n')
}

const startedAt = new Date()
const { cells, rebuild } = await onFreshDatabase(async (url) => ({
  cells: [...(await rawCells(url)), ...(await peerCells(url)), ...(await eventStoreCells(url))],
  rebuild: await rebuildMeasure(url),
}))
const rebuildLine = `Rebuild of the tags projection: ${rebuild.events} events in ${(rebuild.ms / 1000).toFixed(1)} s = ${rebuild.eventsPerSec.toFixed(0)} events/s (target 50,000).`
const table = `${report(cells)}\n\n${rebuildLine}`
const server = process.env.DATABASE_URL ? 'DATABASE_URL' : 'embedded PostgreSQL'
console.log(table)
mkdirSync('bench/results', { recursive: true })
const stamp = startedAt.toISOString().replace(/[:.]/g, '-')
const meta = { startedAt, seconds: SECONDS, server, node: process.version, peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024) }
writeFileSync(`bench/results/${stamp}.json`, JSON.stringify({ ...meta, cells, rebuild }, null, 2))
writeFileSync(`bench/results/${stamp}.md`, `# Bench ${startedAt.toISOString()}\n\n${SECONDS} s per cell on ${server}, Node ${process.version}, peak RSS ${meta.peakRssMb} MB.\n\n${table}\n`)
log.info(`wrote bench/results/${stamp}.json and .md`)
