/**
 * Issue 20: start-up and memory at rest. The server as `npm start` runs it (compiled JavaScript,
 * npm start's heap flags) and as it ran before (tsx transpiling src/ at every start, Node's
 * default heap), STARTUP_RUNS (default 3) starts of each, alternating, each on a fresh database
 * (so the migrations and the projections' first build are included): the time from spawn to
 * listening (/healthz answers), to ready (/readyz 200), and the server's RSS once ready.
 */
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createDatabase, dropDatabase, withDatabase } from '../src/db/databases.ts'
import { freePort } from '../src/db/embedded-postgres.ts'
import { startFlags } from '../test/helpers/process.ts'
import { COMPILED, rssMb } from './app.ts'
import { progress } from './progress.ts'

const RUNS = Number(process.env.STARTUP_RUNS ?? 3)
const REPO = fileURLToPath(new URL('..', import.meta.url))

const RUNNERS = [
  { runner: 'compiled (npm start)', args: () => [...startFlags(), `${COMPILED}src/main.js`] },
  { runner: 'tsx, Node defaults (before)', args: () => ['--import', 'tsx', 'src/main.ts'] },
]

export type StartupRow = { runner: string; flags: string; listenMs: number[]; readyMs: number[]; rssMb: number[] }

async function startOnce(server: string, args: string[]): Promise<{ listenMs: number; readyMs: number; rssMb: number }> {
  const name = `bench_start_${Date.now()}`
  await createDatabase(server, name)
  const dataDir = mkdtempSync(join(tmpdir(), 'crm-bench-start-'))
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const t0 = performance.now()
  const child = spawn(process.execPath, args, {
    cwd: REPO,
    stdio: 'ignore',
    env: { ...process.env, DATABASE_URL: withDatabase(server, name), JWT_SECRET: randomBytes(32).toString('base64url'), NODE_ENV: 'production', PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', DATA_DIR: dataDir },
  })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const answers = async (path: string) => (await fetch(`${base}${path}`).catch(() => undefined))?.status === 200
  const until = async (path: string) => {
    while (!(await answers(path))) {
      if (child.exitCode !== null) throw new Error(`the server exited (code ${child.exitCode}) before ${path} answered`)
      if (performance.now() - t0 > 120_000) throw new Error(`${path} did not answer 200 within 120 s`)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    return performance.now() - t0
  }
  try {
    const listenMs = await until('/healthz')
    const readyMs = await until('/readyz')
    return { listenMs, readyMs, rssMb: rssMb(child.pid!) }
  } finally {
    child.kill('SIGTERM')
    await exited
    rmSync(dataDir, { recursive: true, force: true })
    await dropDatabase(server, name)
  }
}

export async function startupRows(server: string): Promise<StartupRow[]> {
  const rows: StartupRow[] = RUNNERS.map(({ runner, args }) => ({ runner, flags: args().filter((a) => a.startsWith('--max')).join(' ') || "Node's defaults", listenMs: [], readyMs: [], rssMb: [] }))
  for (let run = 1; run <= RUNS; run++) {
    for (const [i, { args }] of RUNNERS.entries()) {
      const row = rows[i]!
      const started = await startOnce(server, args())
      row.listenMs.push(started.listenMs)
      row.readyMs.push(started.readyMs)
      row.rssMb.push(started.rssMb)
      progress(`start-up ${run}/${RUNS}, ${row.runner}: listening ${(started.listenMs / 1000).toFixed(1)} s, ready ${(started.readyMs / 1000).toFixed(1)} s, RSS ${started.rssMb.toFixed(0)} MB`)
    }
  }
  return rows
}

const span = (values: number[], digits: number) => `${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)}`

export const startupNote = (rows: StartupRow[]): string =>
  `Start-up on a fresh database (${RUNS} runs each, min–max; spawn to /healthz, to /readyz 200, RSS then): ${rows
    .map((r) => `${r.runner} [${r.flags}]: listening ${span(r.listenMs.map((ms) => ms / 1000), 1)} s, ready ${span(r.readyMs.map((ms) => ms / 1000), 1)} s, RSS ${span(r.rssMb, 0)} MB`)
    .join('; ')}.`
