/**
 * The real server, in this process: openRuntime (as src/main.ts wires it, on a fresh bench database
 * given as DATABASE_URL), buildApp, projections started, listening on 127.0.0.1 at a random port.
 * One organization with an admin and a second member, with JWT access tokens.
 */
import { randomBytes } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import pino from 'pino'
import { loadConfig } from '../src/config.ts'
import { comparePositions, parsePosition } from '../src/eventstore/event-store.ts'
import type { Position } from '../src/eventstore/event-store.ts'
import { buildApp } from '../src/http/app.ts'
import { addProfile, bootstrapOrganization, ensureUser } from '../src/identity/memberships.ts'
import { openRuntime } from '../src/runtime.ts'
import type { Runtime } from '../src/runtime.ts'

export type Member = { profileId: string; headers: { authorization: string } }

export type BenchApp = Runtime & {
  url: string
  orgId: string
  admin: Member
  member: Member
  /** Server warnings and errors logged so far: message → count. */
  serverLog: Map<string, number>
  /**
   * Read-your-writes waits (ms) of positions after `since`: how long a write request waited in
   * settle() for the projections to apply its events, i.e. the projection lag it observed.
   */
  rywWaits: { since: Position | null; samples: number[] }
  /** Sends one JSON request as the admin; throws unless 2xx. Answers the body and the event position header. */
  call(method: string, path: string, body?: unknown): Promise<{ body: any; position: Position | undefined }>
  stop(): Promise<void>
}

export async function startBenchApp(databaseUrl: string): Promise<BenchApp> {
  const { config } = loadConfig({ NODE_ENV: 'development', DATABASE_URL: databaseUrl, JWT_SECRET: randomBytes(32).toString('base64url'), ACCESS_TOKEN_TTL_SECONDS: '86400', LOG_LEVEL: 'warn' })
  const serverLog = new Map<string, number>()
  // Quiet: only warnings and errors, counted by message (with the error's message) instead of printed.
  const logger = pino({ level: 'warn' }, {
    write(line: string) {
      const entry = JSON.parse(line) as { msg?: string; err?: { message?: string } }
      const key = [entry.msg, entry.err?.message].filter(Boolean).join(': ')
      serverLog.set(key, (serverLog.get(key) ?? 0) + 1)
    },
  })
  const runtime = await openRuntime(config, logger, 'server')
  const rywWaits: BenchApp['rywWaits'] = { since: null, samples: [] }
  const projections = {
    ...runtime.projections,
    waitFor: async (position: Position, timeoutMs: number) => {
      const t0 = performance.now()
      await runtime.projections.waitFor(position, timeoutMs)
      if (rywWaits.since && comparePositions(position, rywWaits.since) > 0) rywWaits.samples.push(performance.now() - t0)
    },
  }
  const app = await buildApp({ ...runtime, projections, config, logger, clock: () => new Date() })
  runtime.projections.start()
  await app.listen({ host: '127.0.0.1', port: 0 })
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
  const org = await bootstrapOrganization(runtime.db, { name: 'Bench Inc', email: 'admin@bench.test' })
  const memberUser = await ensureUser(runtime.db, 'rep@bench.test')
  const memberProfile = await addProfile(runtime.db, memberUser, org.org_id, 'USER')
  const sign = (userId: string) => ({ authorization: `Bearer ${app.jwt.sign({ sub: userId, org_id: org.org_id, typ: 'access' })}` })
  const admin = { profileId: org.profile_id, headers: sign(org.user_id) }
  return {
    ...runtime,
    url,
    orgId: org.org_id,
    admin,
    member: { profileId: memberProfile, headers: sign(memberUser) },
    serverLog,
    rywWaits,
    async call(method, path, body) {
      const response = await fetch(`${url}${path}`, { method, headers: { ...admin.headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) })
      const text = await response.text()
      if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`)
      const header = response.headers.get('x-event-position')
      return { body: text ? JSON.parse(text) : undefined, position: header ? parsePosition(header) : undefined }
    },
    async stop() {
      await app.close()
      await runtime.close()
    },
  }
}
