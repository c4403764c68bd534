/**
 * A process that applies the projections and serves no HTTP (issue 36): forked by bench/app.ts
 * before the bench server, it takes every projection unit (the server applies none), so the server follows and the CPU this
 * process spends is the projections' alone (bench/projection-cpu.ts, `BENCH_PROFILE=projections
 * npm run bench:cpu`). Its connections carry application_name PROJECTOR_APP, so the database's
 * backends serving it are told apart from the server's.
 */
import { randomBytes } from 'node:crypto'
import pino from 'pino'
import { loadConfig } from '../src/config.ts'
import { openRuntime } from '../src/runtime.ts'
import { PROJECTOR_APP } from './app.ts'
import type { FromParent, ToParent } from './app.ts'

const send = (message: ToParent) => process.send!(message)
const url = new URL(process.env.DATABASE_URL!)
url.searchParams.set('application_name', PROJECTOR_APP)
const { config } = loadConfig({ NODE_ENV: 'development', DATABASE_URL: url.toString(), JWT_SECRET: randomBytes(32).toString('base64url'), LOG_LEVEL: 'warn', PROJECTION_LEADER_RETRY_MS: '50' })
const runtime = await openRuntime(config, pino({ level: 'warn' }), 'server')
runtime.projections.start()
const deadline = Date.now() + 30_000
while (runtime.projections.held.size < runtime.projections.projectors.length) {
  if (Date.now() > deadline) throw new Error('the bench projector did not take every projection unit within 30 s')
  await new Promise((resolve) => setTimeout(resolve, 20))
}
process.on('message', async (message: FromParent) => {
  if (message.type !== 'stop') return
  await runtime.close()
  send({ type: 'stopped', log: [] })
  process.disconnect()
})
send({ type: 'leading' })
