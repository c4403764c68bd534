/**
 * The real server in a child process (bench/server.ts) on a fresh bench database, and this
 * process's own connection to that database (to seed events and watch the projections). The load
 * generator runs here, so the server's RSS and event loop are its own; they still share the 2 cores.
 */
import { fork } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { Kysely } from 'kysely'
import { createDb, createPool } from '../src/db/database.ts'
import type { Database } from '../src/db/database.ts'
import { comparePositions, formatPosition, parsePosition } from '../src/eventstore/event-store.ts'
import type { EventStore, Position } from '../src/eventstore/event-store.ts'
import { createPostgresEventStore } from '../src/eventstore/postgres.ts'
import { readCheckpoints } from '../src/projections/checkpoints.ts'

export type Member = { profileId: string; headers: { authorization: string } }

export type FromParent = { type: 'ryw-start'; since: string } | { type: 'ryw-collect' } | { type: 'leader?' } | { type: 'stop' }
export type ToParent =
  | { type: 'ready'; url: string; orgId: string; admin: Member; member: Member }
  | { type: 'ryw-started' }
  | { type: 'ryw-samples'; samples: number[] }
  | { type: 'leader'; isLeader: boolean }
  | { type: 'stopped'; log: [string, number][] }

export type BenchApp = {
  url: string
  orgId: string
  admin: Member
  member: Member
  db: Kysely<Database>
  store: EventStore
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
  isLeader(): Promise<boolean>
  /** Server warnings and errors logged: message → count (complete once stopped). */
  serverLog: Map<string, number>
  /** Sends one JSON request as the admin; throws unless 2xx. Answers the body and the event position header. */
  call(method: string, path: string, body?: unknown): Promise<{ body: any; position: Position | undefined }>
  stop(): Promise<void>
}

/** The server's V8 heap limit: what a 300 MB container would give it (BENCH_SERVER_HEAP_MB; 0 = Node's default). */
const HEAP_MB = Number(process.env.BENCH_SERVER_HEAP_MB ?? 0)

export async function startBenchApp(databaseUrl: string): Promise<BenchApp> {
  const child = fork(fileURLToPath(new URL('./server.ts', import.meta.url)), [], {
    env: { ...process.env, DATABASE_URL: databaseUrl },
    execArgv: ['--import', 'tsx', ...(HEAP_MB ? [`--max-old-space-size=${HEAP_MB}`] : [])],
  })
  const ready = (await nextMessage(child, 'ready')) as Extract<ToParent, { type: 'ready' }>
  const pool = createPool(databaseUrl, 20)
  const db = createDb(pool)
  const store = createPostgresEventStore({ pool })
  const serverLog = new Map<string, number>()
  return {
    ...ready,
    db,
    store,
    serverLog,
    serverRssMb: () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024,
    async waitForProjections(position, timeoutMs) {
      const deadline = Date.now() + timeoutMs
      while ((await readCheckpoints(db)).some((c) => comparePositions(c.position, position) < 0)) {
        if (Date.now() > deadline) throw new Error(`projections did not reach ${formatPosition(position)} in ${timeoutMs} ms`)
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
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
    async isLeader() {
      const answer = nextMessage(child, 'leader')
      child.send({ type: 'leader?' } satisfies FromParent)
      return ((await answer) as Extract<ToParent, { type: 'leader' }>).isLeader
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
