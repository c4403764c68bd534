/**
 * `npm run bench:statements`: how many SQL statements PostgreSQL runs per HTTP deal create (issue
 * 20), counted from the server's own log, so nothing the driver or the app does is missed.
 * The bench database gets `log_statement = all`; BENCH_CREATES deals are made by BENCH_CLIENTS
 * clients (default 1), each create after the last (each answers after its read models hold it); then the log lines of that database are counted and split by
 * what they did. Needs the server's log file: PG_LOG (default Debian's, for the CI-like cluster).
 * The bench process's own connection stays idle while it counts.
 */
import { readFileSync, statSync } from 'node:fs'
import { sql } from 'kysely'
import { createDb, createQuietPool } from '../src/db/database.ts'
import { createDatabase, dropDatabase, withDatabase } from '../src/db/databases.ts'
import { compileBenchServer, cpuMs, startBenchApp } from './app.ts'

const SERVER = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const LOG = process.env.PG_LOG ?? '/var/log/postgresql/postgresql-15-main.log'
const CREATES = Number(process.env.BENCH_CREATES ?? 200)
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 1)
/** create (default) or move: each of 20 deals moved between two stages in turn. */
const WORKLOAD = process.env.BENCH_WORKLOAD === 'move' ? 'move' : 'create'

/** A logged statement's kind: the prepared statement's name, or the first words of its text. */
function kindOf(line: string): string {
  const named = /LOG: {2}execute ([\w<>]+)(?:\/[\w<>]+)?: (.*)$/.exec(line)
  const text = named ? named[2]! : (/LOG: {2}statement: (.*)$/.exec(line)?.[1] ?? line)
  if (named && named[1] !== '<unnamed>') return named[1]!
  return text.replace(/\s+/g, ' ').trim().split(' ').slice(0, 4).join(' ').slice(0, 60)
}

async function main(): Promise<void> {
  compileBenchServer()
  const name = `bench_statements_${Date.now()}`
  await createDatabase(SERVER, name)
  const url = withDatabase(SERVER, name)
  const admin = createDb(createQuietPool(SERVER, 1))
  await sql`ALTER DATABASE ${sql.id(name)} SET log_statement = 'all'`.execute(admin)
  const bench = await startBenchApp(url)
  try {
    const deals: string[] = []
    // The first creates may answer 503 (saved, not yet visible) while a loaded machine builds every
    // read model's tables for the first time: the warm-up waits that out rather than failing the run.
    const warmUntil = Date.now() + 120_000
    for (let i = 0; deals.length < 20; i++) {
      const created = await bench.call('POST', '/api/opportunities/', { name: `Warm-up deal ${i}`, amount: '1000.00', currency: 'USD' }).catch((error: Error) => {
        if (!/: 503 /.test(error.message) || Date.now() > warmUntil) throw error
      })
      if (created) deals.push(created.body.id)
    }
    await new Promise((resolve) => setTimeout(resolve, 1000))
    // CPU time of the server and of this database's backends (a machine shared with other work stretches wall time, not these).
    const backends = async () => (await sql<{ pid: number }>`SELECT pid FROM pg_stat_activity WHERE datname = ${name}`.execute(admin)).rows.map((r) => r.pid)
    const backendsBefore = new Map((await backends()).map((pid) => [pid, cpuMs(pid)]))
    const serverBefore = cpuMs(bench.serverPid)
    const from = statSync(LOG).size
    // CLIENTS workers, each sending its share one after another: under concurrency the projections
    // apply many writes per page, so their statements are shared (and so would be group commits).
    const write = (i: number) =>
      WORKLOAD === 'move'
        ? bench.call('PATCH', `/api/opportunities/${deals[i % deals.length]}/move/`, { column_id: Math.floor(i / deals.length) % 2 ? 'QUALIFICATION' : 'PROPOSAL' })
        : bench.call('POST', '/api/opportunities/', { name: `Counted deal ${i}`, amount: '1000.00', currency: 'USD' })
    let next = 0
    const worker = async () => {
      for (let i = next++; i < CREATES; i = next++) await write(i)
    }
    await Promise.all(Array.from({ length: CLIENTS }, worker))
    // A backend opened meanwhile counts whole; one closed meanwhile is lost (the pools keep theirs).
    const serverCpu = cpuMs(bench.serverPid) - serverBefore
    const postgresCpu = (await backends()).reduce((sum, pid) => sum + cpuMs(pid) - (backendsBefore.get(pid) ?? 0), 0)
    await new Promise((resolve) => setTimeout(resolve, 1000))
    const lines = readFileSync(LOG).subarray(from).toString('utf8').split('\n').filter((l) => l.includes(`@${name} `) && /LOG: {2}(statement|execute)/.test(l))
    const kinds = new Map<string, number>()
    for (const line of lines) kinds.set(kindOf(line), (kinds.get(kindOf(line)) ?? 0) + 1)
    console.log(`${CREATES} deal ${WORKLOAD}s over HTTP by ${CLIENTS} client(s): ${lines.length} statements, ${(lines.length / CREATES).toFixed(1)} per ${WORKLOAD}`)
    const perWrite = (ms: number) => ((1000 * ms) / CREATES).toFixed(0)
    console.log(`CPU per ${WORKLOAD}: server ${perWrite(serverCpu)} µs, PostgreSQL backends ${perWrite(postgresCpu)} µs`)
    for (const [kind, count] of [...kinds].sort((a, b) => b[1] - a[1])) console.log(`${(count / CREATES).toFixed(2).padStart(6)}  ${kind}`)
  } finally {
    await bench.stop()
    await admin.destroy()
    await dropDatabase(SERVER, name)
  }
}

await main()
