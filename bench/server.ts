/**
 * The bench's server: its own Node process (forked by bench/app.ts), so its RSS is the server's
 * alone and its event loop is not shared with the load generator. openRuntime as src/main.ts wires
 * it, on the bench database given as DATABASE_URL; buildApp; projections started; listening on
 * 127.0.0.1 at a random port. One organization with an admin and a second member, with JWT access
 * tokens (an organization of its own: several servers may share a database). Talks to the parent
 * over IPC (messages in bench/app.ts). BENCH_SERVER_APPLIES=false: it applies no projection unit
 * (PROJECTION_APPLY), and follows a bench projector's progress.
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
import type { FromParent, ToParent } from './app.ts'

const send = (message: ToParent) => process.send!(message)

const { config } = loadConfig({ NODE_ENV: 'development', DATABASE_URL: process.env.DATABASE_URL, JWT_SECRET: randomBytes(32).toString('base64url'), ACCESS_TOKEN_TTL_SECONDS: '86400', LOG_LEVEL: 'warn', PROJECTION_APPLY: process.env.BENCH_SERVER_APPLIES })
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
/**
 * Read-your-writes waits (ms) of positions after `since`: how long a write request waited in
 * settle() for the projections to apply its events, i.e. the projection lag it observed.
 */
const ryw: { since: Position | null; samples: number[] } = { since: null, samples: [] }
const projections = {
  ...runtime.projections,
  waitFor: async (position: Position, timeoutMs: number) => {
    const t0 = performance.now()
    await runtime.projections.waitFor(position, timeoutMs)
    if (ryw.since && comparePositions(position, ryw.since) > 0) ryw.samples.push(performance.now() - t0)
  },
}
const app = await buildApp({ ...runtime, projections, config, logger, clock: () => new Date() })
runtime.projections.start()
await app.listen({ host: '127.0.0.1', port: 0 })
const tag = randomBytes(3).toString('hex')
const org = await bootstrapOrganization(runtime.db, { name: `Bench Inc ${tag}`, email: `admin-${tag}@bench.test` })
const memberUser = await ensureUser(runtime.db, `rep-${tag}@bench.test`)
const memberProfile = await addProfile(runtime.db, memberUser, org.org_id, 'USER')
const sign = (userId: string) => ({ authorization: `Bearer ${app.jwt.sign({ sub: userId, org_id: org.org_id, typ: 'access' })}` })

process.on('message', async (message: FromParent) => {
  if (message.type === 'ryw-start') {
    ryw.since = parsePosition(message.since) ?? null
    ryw.samples = []
    send({ type: 'ryw-started' })
  } else if (message.type === 'ryw-collect') {
    send({ type: 'ryw-samples', samples: ryw.samples })
    ryw.since = null
    ryw.samples = []
  } else if (message.type === 'units?') {
    send({ type: 'units', held: runtime.projections.held.size, of: runtime.projections.projectors.length })
  } else if (message.type === 'stop') {
    await app.close()
    await runtime.close()
    send({ type: 'stopped', log: [...serverLog] })
    process.disconnect()
  }
})
send({
  type: 'ready',
  url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`,
  orgId: org.org_id,
  admin: { profileId: org.profile_id, headers: sign(org.user_id) },
  member: { profileId: memberProfile, headers: sign(memberUser) },
})
