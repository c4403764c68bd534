/**
 * CPU per request on a database kept by `BENCH_KEEP_DATABASES=1 BENCH_ONLY=queries npm run bench`,
 * in-process (app.inject, no sockets): `node --import tsx bench/request-cpu.ts <database url> <n> <path>...`
 * (HOT in a path is the seeded "hot" tag; SEQ the request's number, so each request is a filter of its own:
 * nothing of it kept from another). Prints per path the wall p50, the process CPU per request and
 * that of the process and the database's backends together (from /proc, bench/cpu-cost.ts: what the
 * bench's cells call CPU per answer); run under `node --cpu-prof` for the frames. The caller is an admin of the organization
 * holding the most deals. PROF_DUMP=<file> writes the last answer of each path (to compare bytes).
 * STREAM=1 takes each answer as a stream of chunks, counted, not joined and decoded: what a socket
 * does with it. Without it the harness itself spends ~1 ms per 60 kB of answer making it a string
 * (light-my-request), as much as a cached answer costs the server (issue 36); the last answer is
 * still read whole, for its size and PROF_DUMP.
 */
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import pino from 'pino'
import { sql } from 'kysely'
import { loadConfig } from '../src/config.ts'
import { buildApp } from '../src/http/app.ts'
import { openRuntime } from '../src/runtime.ts'
import { withCpuCost } from './cpu-cost.ts'

// Statements sent, counted at the client (each is a round trip and a protocol write).
let statements = 0
const query = pg.Client.prototype.query as (...args: unknown[]) => unknown
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  statements++
  return query.apply(this, args)
} as typeof pg.Client.prototype.query

const [url, n = '200', ...paths] = process.argv.slice(2)
const { config } = loadConfig({ NODE_ENV: 'development', DATABASE_URL: url, JWT_SECRET: randomBytes(32).toString('base64url'), ACCESS_TOKEN_TTL_SECONDS: '86400', LOG_LEVEL: 'warn' })
const logger = pino({ level: 'warn' })
const runtime = await openRuntime(config, logger, 'server')
const app = await buildApp({ ...runtime, config, logger, clock: () => new Date() })
await app.ready()
const { rows } = await sql<{ org_id: string; user_id: string; tag: string }>`SELECT o.org_id, p.user_id, (SELECT t.id FROM tags t WHERE t.org_id = o.org_id AND t.name = 'hot') AS tag FROM (SELECT org_id, count(*) FROM opportunities GROUP BY 1 ORDER BY 2 DESC LIMIT 1) o JOIN profiles p ON p.org_id = o.org_id AND p.role = 'ADMIN' LIMIT 1`.execute(runtime.db)
const { user_id, org_id, tag } = rows[0]!
const headers = { authorization: `Bearer ${app.jwt.sign({ sub: user_id, org_id, typ: 'access' })}` }
const bodies: Record<string, string> = {}
for (const raw of paths) {
  const path = raw.replace('HOT', tag)
  const url = (i: number) => path.replace('SEQ', String(i))
  const streamed = process.env.STREAM === '1'
  const get = async (i: number, last: boolean) => {
    if (!streamed || last) return app.inject({ method: 'GET', url: url(i), headers })
    const r = await app.inject({ method: 'GET', url: url(i), headers, payloadAsStream: true })
    let bytes = 0
    for await (const chunk of r.stream()) bytes += (chunk as Buffer).length
    return { statusCode: r.statusCode, body: `(${bytes} bytes streamed)` }
  }
  for (let i = 0; i < 20; i++) await get(Number(n) + i, false)
  const times: number[] = []
  const cpu0 = process.cpuUsage()
  const statements0 = statements
  const { cpuUsPerOp } = await withCpuCost(runtime.pool, [process.pid], async () => {
    for (let i = 0; i < Number(n); i++) {
      const t0 = performance.now()
      const r = await get(i, i === Number(n) - 1)
      times.push(performance.now() - t0)
      if (r.statusCode !== 200) throw new Error(`${path}: ${r.statusCode} ${r.body.slice(0, 300)}`)
      bodies[path] = r.body
    }
    return { ops: Number(n) }
  })
  const cpu = process.cpuUsage(cpu0)
  times.sort((a, b) => a - b)
  console.log(`${path}: n=${n} p50 ${times[Math.floor(times.length / 2)]!.toFixed(2)} ms, mean ${(times.reduce((a, b) => a + b, 0) / times.length).toFixed(2)} ms, cpu ${((cpu.user + cpu.system) / 1000 / Number(n)).toFixed(2)} ms/req (with the database's ${cpuUsPerOp === undefined ? '?' : (cpuUsPerOp / 1000).toFixed(2)}), ${((statements - statements0) / Number(n)).toFixed(1)} statements/req, ${bodies[path]!.length} bytes`)
}
if (process.env.PROF_DUMP) { const { writeFileSync } = await import('node:fs'); writeFileSync(process.env.PROF_DUMP, JSON.stringify(bodies)) }
await app.close()
await runtime.close()
