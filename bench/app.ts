/**
 * The real server in a child process (bench/server.ts) on a fresh bench database, and this
 * process's own connection to that database (to seed events and watch the projections). The load
 * generator runs here, so the server's RSS and event loop are its own; they still share the 2 cores.
 */
import { execFileSync, fork } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { sql } from 'kysely'
import type pg from 'pg'
import type { Kysely } from 'kysely'
import { createDb, createQuietPool } from '../src/db/database.ts'
import type { Database } from '../src/db/database.ts'
import { comparePositions, formatPosition, parsePosition } from '../src/eventstore/event-store.ts'
import type { EventStore, Position } from '../src/eventstore/event-store.ts'
import { createPostgresEventStore } from '../src/eventstore/postgres.ts'
import { readCheckpoints } from '../src/projections/kernel/checkpoints.ts'
import { startFlags } from '../test/helpers/process.ts'
import { countLine, progress, reporting } from './progress.ts'

export type Member = { profileId: string; headers: { authorization: string } }

export type FromParent = { type: 'ryw-start'; since: string } | { type: 'ryw-collect' } | { type: 'units?' } | { type: 'stop' }
export type ToParent =
  | { type: 'ready'; url: string; orgId: string; admin: Member; member: Member }
  | { type: 'ryw-started' }
  | { type: 'ryw-samples'; samples: number[] }
  | { type: 'units'; held: number; of: number }
  | { type: 'stopped'; log: [string, number][] }
  | { type: 'leading' }

export type BenchApp = {
  url: string
  orgId: string
  admin: Member
  member: Member
  /** The pool behind `db` (bench/cpu-cost.ts lists the database's backends through it). */
  pool: pg.Pool
  db: Kysely<Database>
  store: EventStore
  /** The server process's id (its CPU time is in /proc). */
  serverPid: number
  /** The server's resident set size now (MB), read from /proc. */
  serverRssMb(): number
  /** Waits until every projection's checkpoint has reached `position`. */
  waitForProjections(position: Position, timeoutMs: number): Promise<void>
  /**
   * Read-your-writes waits (ms) of positions after `since`: how long a write request waited in
   * settle() for the projections to apply its events, i.e. the projection lag it observed.
   */
  startRywWaits(since: Position): Promise<void>
  collectRywWaits(): Promise<number[]>
  /** Whether this server leads the projections now (several may share one database). */
  /** The projection units the server applies, of how many. */
  units(): Promise<{ held: number; of: number }>
  /** Server warnings and errors logged: message → count (complete once stopped). */
  serverLog: Map<string, number>
  /** Sends one JSON request as the admin; throws unless 2xx. Answers the body and the event position header. */
  call(method: string, path: string, body?: unknown): Promise<{ body: any; position: Position | undefined }>
  stop(): Promise<void>
}

/** The bench server's node flags: npm start's, or BENCH_SERVER_FLAGS (empty: Node's defaults). */
export const SERVER_FLAGS = process.env.BENCH_SERVER_FLAGS === undefined ? startFlags() : process.env.BENCH_SERVER_FLAGS.split(' ').filter(Boolean)

/** The compiled tree of tsconfig.bench.json: the service as production runs it, and bench/server.ts. */
export const COMPILED = fileURLToPath(new URL('./tmp/dist/', import.meta.url))

/** Compiles src/, migrations/ and bench/server.ts into COMPILED (incremental: seconds when nothing changed). */
export function compileBenchServer(): void {
  progress(`compiling the server (tsc -p tsconfig.bench.json); it runs with ${SERVER_FLAGS.join(' ') || "Node's default heap"}`)
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
  execFileSync(process.execPath, [tsc, '-p', fileURLToPath(new URL('../tsconfig.bench.json', import.meta.url))], { stdio: 'inherit' })
}

/** `applies: false`: the server applies no projection unit (a bench projector, or another server, does). */
export async function startBenchApp(databaseUrl: string, options: { applies?: boolean } = {}): Promise<BenchApp> {
  const child = fork(`${COMPILED}bench/server.js`, [], { env: { ...process.env, DATABASE_URL: databaseUrl, BENCH_SERVER_APPLIES: String(options.applies ?? true) }, execArgv: SERVER_FLAGS })
  const ready = (await nextMessage(child, 'ready')) as Extract<ToParent, { type: 'ready' }>
  const pool = createQuietPool(databaseUrl, 20)
  const db = createDb(pool)
  const store = createPostgresEventStore({ pool })
  const serverLog = new Map<string, number>()
  return {
    ...ready,
    pool,
    db,
    store,
    serverLog,
    serverPid: child.pid!,
    serverRssMb: () => rssMb(child.pid!),
    async waitForProjections(position, timeoutMs) {
      const deadline = Date.now() + timeoutMs
      const t0 = performance.now()
      const total = await eventsUpTo(db, position)
      const waiting = async () => {
        while ((await readCheckpoints(db)).some((c) => comparePositions(c.position, position) < 0)) {
          if (Date.now() > deadline) throw new Error(`projections did not reach ${formatPosition(position)} in ${timeoutMs} ms`)
          await new Promise((resolve) => setTimeout(resolve, 100))
        }
      }
      const slowest = async () => (await readCheckpoints(db)).reduce((a, b) => (comparePositions(a.position, b.position) <= 0 ? a : b))
      await reporting(5000, async () => countLine('projecting, events applied by every projection', await eventsUpTo(db, (await slowest()).position), total, t0), waiting())
    },
    async startRywWaits(since) {
      const started = nextMessage(child, 'ryw-started')
      child.send({ type: 'ryw-start', since: formatPosition(since) } satisfies FromParent)
      await started
    },
    async collectRywWaits() {
      const samples = nextMessage(child, 'ryw-samples')
      child.send({ type: 'ryw-collect' } satisfies FromParent)
      return ((await samples) as Extract<ToParent, { type: 'ryw-samples' }>).samples
    },
    async units() {
      const answer = nextMessage(child, 'units')
      child.send({ type: 'units?' } satisfies FromParent)
      const { held, of } = (await answer) as Extract<ToParent, { type: 'units' }>
      return { held, of }
    },
    async call(method, path, body) {
      const response = await fetch(`${ready.url}${path}`, { method, headers: { ...ready.admin.headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) })
      const text = await response.text()
      if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`)
      const header = response.headers.get('x-event-position')
      return { body: text ? JSON.parse(text) : undefined, position: header ? parsePosition(header) : undefined }
    },
    async stop() {
      await store.close()
      await db.destroy()
      const stopped = nextMessage(child, 'stopped')
      child.send({ type: 'stop' } satisfies FromParent)
      for (const [message, count] of ((await stopped) as Extract<ToParent, { type: 'stopped' }>).log) serverLog.set(message, count)
      await new Promise((resolve) => (child.exitCode === null ? child.once('exit', resolve) : resolve(undefined)))
    },
  }
}

/** The application_name of bench/projector.ts's connections: the backends serving the projections. */
export const PROJECTOR_APP = 'crm-bench-projector'

/** bench/projector.ts on `databaseUrl`, with node `flags`: once it answers, it leads the projections (start it before any bench server). */
export async function startProjector(databaseUrl: string, flags = SERVER_FLAGS): Promise<{ pid: number; stop(): Promise<void> }> {
  const child = fork(`${COMPILED}bench/projector.js`, [], { env: { ...process.env, DATABASE_URL: databaseUrl }, execArgv: flags })
  await nextMessage(child, 'leading')
  return {
    pid: child.pid!,
    async stop() {
      const exited = new Promise((resolve) => (child.exitCode === null ? child.once('exit', resolve) : resolve(undefined)))
      const stopped = nextMessage(child, 'stopped')
      child.send({ type: 'stop' } satisfies FromParent)
      await stopped
      await exited
    },
  }
}

/** CPU time (user + system, ms) a process has used so far, from /proc; 0 once it is gone. */
export function cpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ')
    // utime and stime are fields 14 and 15 of stat (11 and 12 after the command name), in ticks of 10 ms.
    return (Number(fields[11]) + Number(fields[12])) * 10
  } catch {
    return 0
  }
}

/** A process's resident set size now (MB), read from /proc (Linux). */
export const rssMb = (pid: number): number => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024

/** How many events of the log are at or before `position`. */
async function eventsUpTo(db: Kysely<Database>, position: Position): Promise<number> {
  const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM events WHERE (transaction_id, global_position) <= (${position.commit.toString()}::xid8, ${position.prepare.toString()}::bigint)`.execute(db)
  return rows[0]!.n
}

/** The child's next message of `type`; rejects if the child exits first. */
function nextMessage(child: ChildProcess, type: ToParent['type']): Promise<ToParent> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: ToParent) => {
      if (message.type !== type) return
      cleanup()
      resolve(message)
    }
    const onExit = (code: number | null) => {
      cleanup()
      reject(new Error(`the bench server exited (code ${code}) before sending ${type}`))
    }
    const cleanup = () => {
      child.off('message', onMessage)
      child.off('exit', onExit)
    }
    child.on('message', onMessage)
    child.on('exit', onExit)
  })
}
