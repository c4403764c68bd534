/**
 * `npm test`: runs the whole tap suite against DATABASE_URL, or, when it is unset, against one
 * embedded PostgreSQL started here for the whole run (under .data/test, apart from the dev cluster).
 * Each test file then creates its own fresh database on that server (test/helpers/db.ts).
 */
import { spawn } from 'node:child_process'
import { resolve } from 'node:path'
import { startEmbeddedPostgres } from '../src/db/embedded-postgres.ts'

const log = { info: (m: string) => console.error(`[test] ${m}`), debug: () => {} }
const cluster = process.env.DATABASE_URL ? undefined : await startEmbeddedPostgres(resolve('.data/test'), 0, log)
const databaseUrl = process.env.DATABASE_URL ?? cluster!.url
log.info(`tests use PostgreSQL at ${databaseUrl.replace(/:[^:@/]*@/, ':***@')}`)

const started = Date.now()
const tap = spawn('npx', ['tap', ...process.argv.slice(2)], {
  stdio: 'inherit',
  env: { ...process.env, DATABASE_URL: databaseUrl, NODE_ENV: 'test' },
})
const code = await new Promise<number>((done) => tap.on('exit', (c, signal) => done(c ?? (signal ? 1 : 0))))
log.info(`suite wall time ${((Date.now() - started) / 1000).toFixed(1)} s`)
await cluster?.stop()
process.exit(code)
