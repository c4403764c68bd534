/**
 * `npm run bench:statements`: how many SQL statements PostgreSQL runs per HTTP deal create (issue
 * 20), counted from the server's own log, so nothing the driver or the app does is missed.
 * The bench database gets `log_statement = all`; CREATES deals are made by BENCH_CLIENTS clients
 * (default 1: one at a time; each create answers after its read models hold it); then the log lines
 * of that database are counted and split by what they did. With several clients, concurrent creates
 * share statements (group commit, projection pages), which is what the count per create shows.
 * Needs the server's log file: PG_LOG (default Debian's, for the CI-like cluster).
 * The bench process's own connection stays idle while it counts.
 */
import { readFileSync, statSync } from 'node:fs'
import { sql } from 'kysely'
import { createDb, createPool } from '../src/db/database.ts'
import { createDatabase, dropDatabase, withDatabase } from '../src/db/databases.ts'
import { compileBenchServer, startBenchApp } from './app.ts'

const SERVER = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const LOG = process.env.PG_LOG ?? '/var/log/postgresql/postgresql-15-main.log'
const CREATES = Number(process.env.BENCH_CREATES ?? 200)
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 1)

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
  const admin = createDb(createPool(SERVER, 1))
  await sql`ALTER DATABASE ${sql.id(name)} SET log_statement = 'all'`.execute(admin)
  const bench = await startBenchApp(url)
  try {
    for (let i = 0; i < 20; i++) await bench.call('POST', '/api/opportunities/', { name: `Warm-up deal ${i}`, amount: '1000.00', currency: 'USD' })
    await new Promise((resolve) => setTimeout(resolve, 1000))
    const from = statSync(LOG).size
    let next = 0
    const client = async () => {
      for (let i = next++; i < CREATES; i = next++) await bench.call('POST', '/api/opportunities/', { name: `Counted deal ${i}`, amount: '1000.00', currency: 'USD' })
    }
    await Promise.all(Array.from({ length: CLIENTS }, client))
    await new Promise((resolve) => setTimeout(resolve, 1000))
    const lines = readFileSync(LOG).subarray(from).toString('utf8').split('\n').filter((l) => l.includes(`@${name} `) && /LOG: {2}(statement|execute)/.test(l))
    const kinds = new Map<string, number>()
    for (const line of lines) kinds.set(kindOf(line), (kinds.get(kindOf(line)) ?? 0) + 1)
    console.log(`${CREATES} deal creates over HTTP by ${CLIENTS} client(s): ${lines.length} statements, ${(lines.length / CREATES).toFixed(1)} per create`)
    for (const [kind, count] of [...kinds].sort((a, b) => b[1] - a[1])) console.log(`${(count / CREATES).toFixed(2).padStart(6)}  ${kind}`)
  } finally {
    await bench.stop()
    await admin.destroy()
    await dropDatabase(SERVER, name)
  }
}

await main()
