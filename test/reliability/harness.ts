/**
 * Fault-injection harness of issue 10: real server processes (`src/main.ts`) on a test database,
 * an organization with an admin token signed with the servers' JWT_SECRET, a small HTTP client
 * that records every answer, and the two checks every scenario ends with: the event log holds
 * each acknowledged write exactly once, and the read models equal what a full rebuild gives.
 */
import type { ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import type { Test } from 'tap'
import { loadConfig } from '../../src/config.ts'
import type { Db } from '../../src/db/database.ts'
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts'
import { createAccessTokenSigner } from '../../src/identity/jwt.ts'
import { bootstrapOrganization } from '../../src/identity/memberships.ts'
import { allProjectors } from '../../src/modules/modules.ts'
import { rebuildProjection } from '../../src/projections/kernel/rebuild.ts'
import { projectionsStatus } from '../../src/projections/kernel/status.ts'
import type pg from 'pg'
import { onTeardown } from '../helpers/cleanup.ts'
import { envWithout, runEntry } from '../helpers/process.ts'
import { findOrphanClaims } from '../../src/names/orphan-claims.ts'

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Polls `check` until it returns a value other than undefined/false, or fails after `timeoutMs` with `what`. */
export async function eventually<T>(what: string, timeoutMs: number, check: () => Promise<T | undefined | false>, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs
  let last: unknown
  for (;;) {
    try {
      const value = await check()
      if (value !== undefined && value !== false) return value
    } catch (error) {
      last = error
    }
    if (Date.now() >= deadline) throw new Error(`${what}: not within ${timeoutMs} ms${last ? ` (last error: ${String(last)})` : ''}`)
    await sleep(everyMs)
  }
}

export type Server = {
  base: string
  child: ChildProcess
  /** Everything the process wrote so far (pino JSON lines on stdout, errors on stderr). */
  output(): string
  exited: Promise<number | null>
  kill(signal: NodeJS.Signals): Promise<void>
}

export const JWT_SECRET = randomBytes(32).toString('base64url')

/**
 * Starts `src/main.ts` on `databaseUrl` (or, with `databaseUrl` undefined, on an embedded cluster
 * under `env.DATA_DIR`) and resolves once it listens. Killed at teardown if still running.
 */
export async function startServer(t: Test, databaseUrl: string | undefined, env: Record<string, string> = {}): Promise<Server> {
  const dataDir = mkdtempSync(join(tmpdir(), 'crm-reliability-'))
  onTeardown(t, () => rmSync(dataDir, { recursive: true, force: true }))
  const { child, finished } = runEntry('src/main.ts', [], {
    ...envWithout('DATABASE_URL', 'JWT_SECRET', 'PORT', 'DATA_DIR'),
    NODE_ENV: 'test',
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    JWT_SECRET,
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    PG_POOL_SIZE: '10',
    PROJECTION_POLL_MS: '100',
    PROJECTION_LEADER_RETRY_MS: '200',
    READ_YOUR_WRITES_TIMEOUT_MS: '10000',
    SHUTDOWN_TIMEOUT_MS: '5000',
    ...env,
  })
  let output = ''
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk))
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk))
  const exited = finished.then((f) => f.code)
  let running = true
  let killed = false
  void exited.then((code) => {
    running = false
    // A server that dies on its own is the finding: show why, whatever assertion fails next.
    if (!killed) t.comment(`server exited by itself (code ${code}):\n${output.slice(-4000)}`)
  })
  onTeardown(t, async () => {
    if (running) {
      killed = true
      child.kill('SIGKILL')
      await exited
    }
  })
  const base = await eventually('server listening', 60_000, async () => {
    if (!running) throw new Error(`server exited before listening:\n${output.slice(-4000)}`)
    return /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1]
  }).catch((error: Error) => {
    if (!running) throw error
    throw new Error(`${error.message}\n${output.slice(-4000)}`)
  })
  return {
    base,
    child,
    output: () => output,
    exited,
    async kill(signal) {
      killed = true
      if (running) child.kill(signal)
      await exited
    },
  }
}

/** Waits for /readyz, as a load balancer would: a cold server under a loaded suite may take longer than the read-your-writes budget to start its ~40 projectors. */
export async function untilReady(server: Server, token: string): Promise<void> {
  await eventually('the server ready', 60_000, async () => (await call(server.base, token, 'GET', '/readyz')).status === 200)
}

/** Before a test's load: the server ready, then the default pipeline created, showing the answer when that fails. */
export async function warmUp(t: Test, server: Server, token: string): Promise<void> {
  await untilReady(server, token)
  const first = await call(server.base, token, 'GET', '/api/opportunities/pipelines/')
  t.equal(first.status, 200, `the default pipeline exists before the load (${first.status} ${JSON.stringify(first.body)})`)
}

export type Admin = { orgId: string; profileId: string; token: string }

/** A new organization and its admin, as the `bootstrap` CLI makes them, with a token the servers accept. */
export async function givenAdmin(db: Db, name = `Reliability ${randomBytes(3).toString('hex')}`): Promise<Admin> {
  const created = await bootstrapOrganization(db, { name, email: `admin@${name.toLowerCase().replace(/\W/g, '')}.test` })
  const { config } = loadConfig({ NODE_ENV: 'test', JWT_SECRET, ACCESS_TOKEN_TTL_SECONDS: '3600' })
  const sign = await createAccessTokenSigner(config)
  return { orgId: created.org_id, profileId: created.profile_id, token: sign({ sub: created.user_id, org_id: created.org_id }) }
}

export type Answer = { status: number; body: any; headers: Headers; ms: number; error?: string }

/** One HTTP call; a network failure or timeout is status 0 (the client saw no answer). */
export async function call(base: string, token: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}, timeoutMs = 20_000): Promise<Answer> {
  const started = performance.now()
  try {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    })
    const text = await response.text()
    let parsed: unknown = text
    try {
      parsed = JSON.parse(text)
    } catch {
      // Not JSON: keep the text.
    }
    return { status: response.status, body: parsed, headers: response.headers, ms: performance.now() - started }
  } catch (error) {
    return { status: 0, body: undefined, headers: new Headers(), ms: performance.now() - started, error: String(error) }
  }
}

export const ok = (answer: Answer) => answer.status >= 200 && answer.status < 300

/** Every write a client saw acknowledged: the deals it created, and the moves of each. */
export type Ledger = { created: Set<string>; moves: Map<string, string[]>; answers: Answer[] }

export const newLedger = (): Ledger => ({ created: new Set(), moves: new Map(), answers: [] })

/** Open stages of the default pipeline after its first, PROSPECTING, where deals start. */
const STAGES = ['QUALIFICATION', 'PROPOSAL', 'NEGOTIATION'] as const

/**
 * One client's loop: creates a deal, moves it through a few open stages, and records what was
 * acknowledged, until `signal` aborts. Names are unique per client and iteration.
 */
export async function dealWorker(base: () => string, token: string, client: string, ledger: Ledger, signal: AbortSignal): Promise<void> {
  for (let i = 0; !signal.aborted; i++) {
    const created = await call(base(), token, 'POST', '/api/opportunities/', { name: `Deal ${client}-${i}-${randomBytes(3).toString('hex')}`, amount: '100.00', probability: 10 })
    ledger.answers.push(created)
    if (!ok(created)) {
      if (created.status === 0 || created.status >= 500) await sleep(50)
      continue
    }
    const id = created.body.id as string
    ledger.created.add(id)
    for (const stage of STAGES.slice(0, 1 + (i % STAGES.length))) {
      if (signal.aborted) return
      const moved = await call(base(), token, 'PATCH', `/api/opportunities/${id}/move/`, { column_id: stage })
      ledger.answers.push(moved)
      if (ok(moved)) ledger.moves.set(id, [...(ledger.moves.get(id) ?? []), stage])
      else if (moved.status === 0 || moved.status >= 500) await sleep(50)
    }
  }
}

/**
 * Asserts that the log holds every acknowledged write exactly once: one OpportunityCreated per
 * acknowledged deal, no deal created twice, and each acknowledged move as a stage change of its
 * stream, in order (moves may have been applied that the client never saw acknowledged).
 */
export async function assertLedgerInLog(t: Test, db: Db, ledger: Ledger): Promise<void> {
  const created = await sql<{ stream_name: string; n: number }>`
    SELECT stream_name, count(*)::int AS n FROM events WHERE event_type = 'OpportunityCreated' GROUP BY stream_name`.execute(db)
  const counts = new Map(created.rows.map((r) => [r.stream_name.replace(/^opportunity-/, ''), r.n]))
  const missing = [...ledger.created].filter((id) => !counts.has(id))
  t.same(missing, [], `every acknowledged create (${ledger.created.size}) has its OpportunityCreated`)
  t.same(created.rows.filter((r) => r.n !== 1), [], 'no deal was created twice')
  const events = await sql<{ stream_name: string; event_type: string; data: { to?: { stage?: string } } }>`
    SELECT stream_name, event_type, data FROM events WHERE event_type = 'OpportunityStageChanged' ORDER BY stream_name, stream_revision`.execute(db)
  const logged = new Map<string, string[]>()
  for (const e of events.rows) {
    const id = e.stream_name.replace(/^opportunity-/, '')
    logged.set(id, [...(logged.get(id) ?? []), String(e.data.to?.stage ?? '')])
  }
  const lostMoves: { id: string; acknowledged: string[]; logged: string[] }[] = []
  for (const [id, moves] of ledger.moves) {
    const inLog = logged.get(id) ?? []
    // Acknowledged moves are a subsequence of the logged ones (an unacknowledged one may sit between).
    let at = 0
    for (const stage of inLog) if (stage.toUpperCase() === moves[at]?.toUpperCase()) at++
    if (at !== moves.length) lostMoves.push({ id, acknowledged: moves, logged: inLog })
  }
  t.same(lostMoves.slice(0, 5), [], `every acknowledged move (${[...ledger.moves.values()].flat().length}) is in its deal's stream`)
}

/** Every row of every read model table, as sorted JSON text, per table. */
export async function snapshotReadModels(db: Db): Promise<Record<string, string[]>> {
  const snapshot: Record<string, string[]> = {}
  for (const projector of allProjectors) {
    for (const table of projector.tables) {
      const { rows } = await sql<{ row: string }>`SELECT to_jsonb(t)::text AS row FROM ${sql.table(table)} t ORDER BY 1`.execute(db)
      snapshot[table] = rows.map((r) => r.row)
    }
  }
  return snapshot
}

/** Waits until no projector has an unapplied event (checkpoints are read from the database, whoever leads). */
export async function waitCaughtUp(db: Db, pool: pg.Pool, timeoutMs = 30_000): Promise<void> {
  const store = createPostgresEventStore({ pool, pollIntervalMs: 100 })
  try {
    await eventually('read models caught up with the log', timeoutMs, async () => {
      const status = await projectionsStatus(db, store, allProjectors)
      return status.projectors.every((p) => p.storedVersion === p.version && p.lagEvents === 0)
    }, 200)
  } finally {
    await store.close()
  }
}

/**
 * With the servers stopped (or idle): the live read models equal a full rebuild from the log.
 * Rebuilds every projector in place (rebuild.ts swaps fresh tables in), then compares.
 */
export async function assertReadModelsEqualRebuild(t: Test, db: Db, pool: pg.Pool): Promise<void> {
  await waitCaughtUp(db, pool)
  const live = await snapshotReadModels(db)
  const store = createPostgresEventStore({ pool, pollIntervalMs: 100 })
  try {
    for (const projector of allProjectors) await rebuildProjection(db, store, projector)
  } finally {
    await store.close()
  }
  const rebuilt = await snapshotReadModels(db)
  for (const table of Object.keys(rebuilt)) {
    const extra = live[table]!.filter((row) => !rebuilt[table]!.includes(row))
    const absent = rebuilt[table]!.filter((row) => !live[table]!.includes(row))
    t.same({ extra: extra.slice(0, 3), absent: absent.slice(0, 3), rows: live[table]!.length }, { extra: [], absent: [], rows: rebuilt[table]!.length }, `${table}: live rows equal a rebuild`)
  }
}

/** The distinct bodies of 4xx and 5xx answers (up to `max`), for the test's comments. */
export function errorBodies(answers: readonly Answer[], max = 5): string[] {
  const bodies = new Set<string>()
  for (const a of answers) if (a.status >= 400 && bodies.size < max) bodies.add(`${a.status} ${JSON.stringify(a.body).slice(0, 200)}`)
  return [...bodies]
}

/** Status counts of a list of answers, e.g. `{ 200: 310, 0: 4 }`. */
export function statusCounts(answers: readonly Answer[]): Record<string, number> {
  const counts: Record<string, number> = {}
  for (const a of answers) counts[a.status] = (counts[a.status] ?? 0) + 1
  return counts
}

/** Every name claim of the log judged at once (no grace period): the ones whose owner holds no live record of the name. */
export async function orphansNow(deps: Parameters<typeof findOrphanClaims>[0]) {
  return (await findOrphanClaims(deps, { now: new Date(Date.now() + 1000), graceMs: 0 })).orphans
}

export { onTeardown }
