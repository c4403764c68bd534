/**
 * Issue 20, every core: the same reads and deal creates against the real server (src/main.ts,
 * NODE_ENV=production, LOG_LEVEL=warn) started with WEB_CONCURRENCY=1 and then 2, on one fresh
 * database with SEEDED_DEALS deals: the deal list, a deal's detail and creates, at each client
 * count, with the CPU per answer of all the server's processes and the database's backends. The ratio of the
 * two rows is what a second process buys on this machine (the load generator, PostgreSQL and the
 * workers share its cores).
 */
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import autocannon from 'autocannon'
import { loadConfig } from '../src/config.ts'
import { createDb, createPool } from '../src/db/database.ts'
import { freePort } from '../src/db/embedded-postgres.ts'
import { migrateToLatest } from '../src/db/migrate.ts'
import { createAccessTokenSigner } from '../src/identity/jwt.ts'
import { bootstrapOrganization } from '../src/identity/memberships.ts'
import { cellOf } from './cannon.ts'
import { withCpuCost } from './cpu-cost.ts'
import type { Cell } from './measure.ts'

const SEEDED_DEALS = 200
const JWT_SECRET = randomBytes(32).toString('base64url')

export const WEB_CONCURRENCY_CREATE = 'HTTP create deal'

/** `readsToo` false: the creates alone (BENCH_ONLY=create-scaling, issue 36's ratio of 2 processes to 1), after the same seeding (which warms the first server up). */
export async function webConcurrencyCells(url: string, seconds: number, clientCounts: number[], processCounts = [1, 2], readsToo = true): Promise<Cell[]> {
  const pool = createPool(url, 2)
  const db = createDb(pool)
  await migrateToLatest(db)
  const org = await bootstrapOrganization(db, { name: 'Web concurrency bench', email: 'admin@web-concurrency.bench' })
  const { config } = loadConfig({ NODE_ENV: 'test', JWT_SECRET, ACCESS_TOKEN_TTL_SECONDS: '86400' })
  const headers = { authorization: `Bearer ${(await createAccessTokenSigner(config))({ sub: org.user_id, org_id: org.org_id })}` }
  const cells: Cell[] = []
  let ids: string[] = []
  for (const processes of processCounts) {
    const server = await startServer(url, processes, headers)
    try {
      if (ids.length === 0) ids = await seedDeals(server.base, headers)
      const label = `${processes} process${processes > 1 ? 'es' : ''}`
      await autocannon({ url: `${server.base}/api/opportunities/`, connections: 8, duration: 1, headers }) // warm-up, not recorded
      const costed = (cell: () => Promise<Cell>) => withCpuCost(pool, server.pids(), cell)
      for (const clients of clientCounts) {
        if (readsToo) {
          cells.push(await costed(() => reads(`GET deal list, ${label}`, server.base, '/api/opportunities/', clients, seconds, headers)))
          const detail = (i: number) => `/api/opportunities/${ids[i % ids.length]}/`
          cells.push(await costed(() => reads(`GET deal detail, ${label}`, server.base, detail, clients, seconds, headers)))
        }
        cells.push(await costed(() => creates(`${WEB_CONCURRENCY_CREATE}, ${label}`, server.base, clients, seconds, headers)))
      }
    } finally {
      await server.stop()
    }
  }
  await db.destroy()
  return cells
}

async function creates(workload: string, base: string, clients: number, seconds: number, headers: Record<string, string>): Promise<Cell> {
  let i = 0
  const setupRequest = (request: object) => ({ ...request, body: JSON.stringify({ name: `Web concurrency create ${workload} ${clients} ${i++}`, amount: '1000.00', currency: 'USD' }) })
  const result = await autocannon({ url: base, connections: clients, duration: seconds, headers: { ...headers, 'content-type': 'application/json' }, requests: [{ method: 'POST', path: '/api/opportunities/', setupRequest }] })
  return cellOf(workload, clients, result)
}

async function reads(workload: string, base: string, path: string | ((i: number) => string), clients: number, seconds: number, headers: Record<string, string>): Promise<Cell> {
  let i = 0
  const setupRequest = typeof path === 'string' ? undefined : (request: object) => ({ ...request, path: path(i++) })
  const result = await autocannon({ url: base, connections: clients, duration: seconds, headers, requests: [{ method: 'GET', path: typeof path === 'string' ? path : path(0), ...(setupRequest ? { setupRequest } : {}) }] })
  return cellOf(workload, clients, result)
}

async function seedDeals(base: string, headers: Record<string, string>): Promise<string[]> {
  const ids: string[] = []
  const worker = async (w: number) => {
    for (let i = w; i < SEEDED_DEALS; i += 8) {
      const answer = await fetch(`${base}/api/opportunities/`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `Web concurrency deal ${i}`, amount: `${1000 + i}.00`, currency: 'USD' }),
      })
      if (!answer.ok) throw new Error(`seeding a deal answered ${answer.status}: ${await answer.text()}`)
      ids.push(((await answer.json()) as { id: string }).id)
    }
  }
  await Promise.all(Array.from({ length: 8 }, (_, w) => worker(w)))
  return ids
}

/** `pids`: the server's processes now (the primary and its workers). */
type Server = { base: string; pids(): number[]; stop(): Promise<void> }

/** src/main.ts with WEB_CONCURRENCY=`processes`, ready once that many workers answer (exactly one of them leading). */
async function startServer(databaseUrl: string, processes: number, headers: Record<string, string>): Promise<Server> {
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { ...process.env, NODE_ENV: 'production', DATABASE_URL: databaseUrl, JWT_SECRET, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', WEB_CONCURRENCY: String(processes) },
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  const stop = async () => {
    child.kill('SIGTERM')
    await exited
  }
  const deadline = Date.now() + 60_000
  const leaderFlags = new Set<boolean>()
  // Each probe on a new connection, which the cluster primary hands to the next worker in turn.
  while (!(leaderFlags.has(true) && leaderFlags.size === Math.min(processes, 2))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop()
      throw new Error(`the server with WEB_CONCURRENCY=${processes} did not get ready within 60 s`)
    }
    const leader = await probeLeader(base, headers)
    if (leader !== undefined) leaderFlags.add(leader)
    else await new Promise((resolve) => setTimeout(resolve, 100))
  }
  const pids = () => [child.pid!, ...readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').split(' ').filter(Boolean).map(Number)]
  return { base, pids, stop }
}

/** Whether the worker answering GET /api/projections/ leads; undefined while nothing answers yet. */
function probeLeader(base: string, headers: Record<string, string>): Promise<boolean | undefined> {
  return new Promise((resolve) => {
    const req = httpRequest(`${base}/api/projections/`, { agent: false, headers }, (res) => {
      let text = ''
      res.on('data', (chunk: Buffer) => (text += chunk))
      res.on('end', () => resolve(res.statusCode === 200 ? (JSON.parse(text) as { leader: boolean }).leader : undefined))
    })
    req.on('error', () => resolve(undefined))
    req.end()
  })
}
