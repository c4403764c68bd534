/**
 * Soak (issue 10): a steady mixed load on loopback against the real server as a child process
 * (`src/main.ts`), for SOAK_SECONDS (default 60, at most 300), from SOAK_CLIENTS (default 8)
 * closed-loop clients: creates, patches, moves, list and board reads. Reports per operation the
 * count, error rate, p50 and p99, and the server's RSS at the start and the end of the load.
 *
 *   node --import tsx bench/soak.ts            (SOAK_SECONDS=30 SOAK_CLIENTS=8 ...)
 *
 * Database: a fresh database on DATABASE_URL's server, or a throwaway embedded cluster in a temp
 * directory. Exits 1 when the error rate exceeds SOAK_MAX_ERROR_RATE (default 0.01).
 */
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../src/config.ts'
import { createDb, createQuietPool } from '../src/db/database.ts'
import { createDatabase, dropDatabase, withDatabase } from '../src/db/databases.ts'
import { freePort, startEmbeddedPostgres } from '../src/db/embedded-postgres.ts'
import { migrateToLatest } from '../src/db/migrate.ts'
import { createAccessTokenSigner } from '../src/identity/jwt.ts'
import { bootstrapOrganization } from '../src/identity/memberships.ts'
import { envWithout, runEntry } from '../test/helpers/process.ts'

const SECONDS = Math.min(300, Math.max(5, Number(process.env.SOAK_SECONDS ?? 60)))
const CLIENTS = Math.max(1, Number(process.env.SOAK_CLIENTS ?? 8))
const MAX_ERROR_RATE = Number(process.env.SOAK_MAX_ERROR_RATE ?? 0.01)
const WARMUP_SECONDS = 3
const log = { info: (m: string) => console.error(`[soak] ${m}`), debug: () => {} }

type Op = 'create' | 'patch' | 'move' | 'list' | 'board'
/** The mix, in parts: a CRM's day is mostly reads and edits of existing deals. */
const MIX: [Op, number][] = [['create', 2], ['patch', 3], ['move', 2], ['list', 2], ['board', 1]]
const COLUMNS = ['QUALIFICATION', 'PROPOSAL', 'NEGOTIATION', 'PROSPECTING']

function pickOp(): Op {
  let roll = Math.random() * MIX.reduce((sum, [, parts]) => sum + parts, 0)
  for (const [op, parts] of MIX) if ((roll -= parts) < 0) return op
  return 'list'
}

/** Resident set size of `pid` in MB, from /proc (Linux). */
function rssMb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return match ? Number(match[1]) / 1024 : NaN
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN

async function main(): Promise<void> {
  const tempDir = mkdtempSync(join(tmpdir(), 'crm-soak-'))
  const cluster = process.env.DATABASE_URL ? undefined : await startEmbeddedPostgres(tempDir, 0, log, { owner: true })
  const serverUrl = process.env.DATABASE_URL ?? cluster!.url
  const name = `soak_${randomBytes(4).toString('hex')}`
  await createDatabase(serverUrl, name)
  const url = withDatabase(serverUrl, name)
  const pool = createQuietPool(url, 2)
  const db = createDb(pool)
  const jwtSecret = randomBytes(32).toString('base64url')
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const { child, finished } = runEntry('src/main.ts', [], {
    ...envWithout('DATABASE_URL', 'JWT_SECRET', 'PORT'),
    NODE_ENV: 'production',
    DATABASE_URL: url,
    JWT_SECRET: jwtSecret,
    DATA_DIR: tempDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
  })
  let serverLog = ''
  child.stdout!.on('data', (chunk: Buffer) => (serverLog += chunk))
  child.stderr!.on('data', (chunk: Buffer) => (serverLog += chunk))
  try {
    await migrateToLatest(db)
    const org = await bootstrapOrganization(db, { name: 'Soak Inc', email: 'admin@soak.test' })
    const sign = await createAccessTokenSigner(loadConfig({ NODE_ENV: 'test', JWT_SECRET: jwtSecret, ACCESS_TOKEN_TTL_SECONDS: '86400' }).config)
    const headers = { authorization: `Bearer ${sign({ sub: org.user_id, org_id: org.org_id })}`, 'content-type': 'application/json' }
    await whenListening(base, () => serverLog)

    const request = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(30_000) })
      const text = await response.text()
      if (!response.ok) throw new Error(`${method} ${path} ${response.status} ${text.slice(0, 200)}`)
      return text ? JSON.parse(text) : undefined
    }
    await request('GET', '/api/opportunities/pipelines/')
    const ids: string[] = []
    for (let i = 0; i < 50; i++) ids.push((await request('POST', '/api/opportunities/', { name: `Seed ${i}`, amount: '1000.00' })).id)

    const latencies = new Map<Op, number[]>(MIX.map(([op]) => [op, []]))
    const errors = new Map<Op, number>(MIX.map(([op]) => [op, 0]))
    const errorSamples = new Set<string>()
    let counter = 0
    const operation = async (op: Op): Promise<void> => {
      const id = ids[Math.floor(Math.random() * ids.length)]!
      const n = ++counter
      if (op === 'create') ids.push((await request('POST', '/api/opportunities/', { name: `Soak ${n}`, amount: `${n % 997}.00`, probability: n % 100 })).id)
      else if (op === 'patch') await request('PATCH', `/api/opportunities/${id}/`, { description: `soak edit ${n}` })
      else if (op === 'move') await request('PATCH', `/api/opportunities/${id}/move/`, { column_id: COLUMNS[n % COLUMNS.length] })
      else if (op === 'list') await request('GET', `/api/opportunities/?limit=20&offset=${n % 5 * 20}`)
      else await request('GET', '/api/opportunities/kanban/')
    }

    log.info(`${CLIENTS} clients for ${SECONDS} s (${WARMUP_SECONDS} s warm-up) against ${base}`)
    const rss: { at: number; mb: number }[] = []
    const started = performance.now()
    const sampler = setInterval(() => rss.push({ at: (performance.now() - started) / 1000, mb: rssMb(child.pid!) }), 1000)
    const warmupEnd = started + WARMUP_SECONDS * 1000
    const deadline = warmupEnd + SECONDS * 1000
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (performance.now() < deadline) {
          const op = pickOp()
          const t0 = performance.now()
          const measured = t0 >= warmupEnd
          try {
            await operation(op)
            if (measured) latencies.get(op)!.push(performance.now() - t0)
          } catch (error) {
            if (!measured) continue
            errors.set(op, errors.get(op)! + 1)
            if (errorSamples.size < 5) errorSamples.add(String(error).slice(0, 240))
          }
        }
      }),
    )
    clearInterval(sampler)
    const measuredSeconds = (performance.now() - warmupEnd) / 1000

    const rows = MIX.map(([op]) => {
      const sorted = latencies.get(op)!.sort((a, b) => a - b)
      const failed = errors.get(op)!
      return { op, requests: sorted.length + failed, errors: failed, errorRate: failed / Math.max(1, sorted.length + failed), p50: pct(sorted, 0.5), p99: pct(sorted, 0.99) }
    })
    const all = MIX.flatMap(([op]) => latencies.get(op)!).sort((a, b) => a - b)
    const totalErrors = rows.reduce((sum, r) => sum + r.errors, 0)
    const total = { op: 'all', requests: all.length + totalErrors, errors: totalErrors, errorRate: totalErrors / Math.max(1, all.length + totalErrors), p50: pct(all, 0.5), p99: pct(all, 0.99) }
    const afterWarmup = rss.filter((s) => s.at >= WARMUP_SECONDS)
    const rssStart = afterWarmup[0]?.mb ?? NaN
    const rssEnd = afterWarmup.at(-1)?.mb ?? NaN
    const rssMax = Math.max(...afterWarmup.map((s) => s.mb))

    const line = (cells: (string | number)[]) => `| ${cells.map(String).join(' | ')} |`
    console.log(`\nSoak: ${CLIENTS} clients, ${measuredSeconds.toFixed(0)} s measured, ${(total.requests / measuredSeconds).toFixed(0)} req/s, ${ids.length} deals\n`)
    console.log(line(['operation', 'requests', 'errors', 'error rate', 'p50 ms', 'p99 ms']))
    console.log(line(['---', '---:', '---:', '---:', '---:', '---:']))
    for (const r of [...rows, total]) console.log(line([r.op, r.requests, r.errors, `${(r.errorRate * 100).toFixed(2)} %`, r.p50.toFixed(1), r.p99.toFixed(1)]))
    console.log(`\nServer RSS: ${rssStart.toFixed(1)} MB after warm-up → ${rssEnd.toFixed(1)} MB at the end (drift ${(rssEnd - rssStart >= 0 ? '+' : '')}${(rssEnd - rssStart).toFixed(1)} MB, ${(((rssEnd - rssStart) / rssStart) * 100).toFixed(1)} %; peak ${rssMax.toFixed(1)} MB)`)
    for (const sample of errorSamples) console.log(`error: ${sample}`)
    if (total.errorRate > MAX_ERROR_RATE) {
      console.log(`FAIL: error rate ${(total.errorRate * 100).toFixed(2)} % exceeds SOAK_MAX_ERROR_RATE ${MAX_ERROR_RATE * 100} %`)
      process.exitCode = 1
    }
  } finally {
    child.kill('SIGTERM')
    await finished
    await db.destroy()
    await dropDatabase(serverUrl, name).catch(() => {})
    await cluster?.stop()
    rmSync(tempDir, { recursive: true, force: true })
  }
}

/** Resolves once the server answers /healthz at `base`. */
async function whenListening(base: string, output: () => string): Promise<void> {
  const deadline = Date.now() + 60_000
  while (Date.now() < deadline) {
    if (await fetch(`${base}/healthz`).then((r) => r.ok, () => false)) return
    await new Promise((r) => setTimeout(r, 200))
  }
  throw new Error(`server did not listen within 60 s:\n${output().slice(-2000)}`)
}

await main()
