/**
 * `npm test`: runs the whole tap suite against DATABASE_URL, or, when it is unset, against one
 * embedded PostgreSQL started here for the whole run (under .data/test, apart from the dev cluster).
 * A second run started meanwhile attaches to that cluster and leaves it to the run that started it.
 * Each test file then creates its own fresh database on that server (test/helpers/db.ts).
 */
import { spawn } from 'node:child_process'
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { startEmbeddedPostgres } from '../src/db/embedded-postgres.ts'

const log = { info: (m: string) => console.error(`[test] ${m}`), debug: () => {} }
const cluster = process.env.DATABASE_URL ? undefined : await startEmbeddedPostgres(resolve('.data/test'), 0, log, { owner: false, durable: false })
const databaseUrl = process.env.DATABASE_URL ?? cluster!.url
log.info(`tests use PostgreSQL at ${databaseUrl.replace(/:[^:@/]*@/, ':***@')}`)

// Each test process appends how many answers it checked against the OpenAPI document (kernel/document-conformance.ts).
const answerCounts = await mkdtemp(join(tmpdir(), 'crm-answers-'))
const started = Date.now()
const tap = spawn('npx', ['tap', ...process.argv.slice(2)], {
  stdio: ['inherit', 'pipe', 'inherit'],
  env: { ...process.env, DATABASE_URL: databaseUrl, NODE_ENV: 'test', ANSWER_COUNT_DIR: answerCounts },
})
// tap's own summary is `# { total: N, pass: N, fail: N }`; CI reads the plain `N passed, N failed` line.
let summary: Record<string, number> | undefined
let pending = ''
tap.stdout.on('data', (chunk: Buffer) => {
  process.stdout.write(chunk)
  const lines = (pending + chunk.toString()).split('\n')
  pending = lines.pop() ?? ''
  for (const line of lines) {
    const match = /^# \{ (total: .*) \}$/.exec(line.trim())
    if (match) summary = Object.fromEntries(match[1]!.split(', ').map((kv) => [kv.split(': ')[0], Number(kv.split(': ')[1])]))
  }
})
const code = await new Promise<number>((done) => tap.on('close', (c, signal) => done(c ?? (signal ? 1 : 0))))
log.info(`suite wall time ${((Date.now() - started) / 1000).toFixed(1)} s`)
const counted = await Promise.all((await readdir(answerCounts)).map((file) => readFile(join(answerCounts, file), 'utf8')))
const validated = counted.flatMap((text) => text.trim().split('\n')).reduce((sum, n) => sum + (Number(n) || 0), 0)
log.info(`${validated} answers validated against the OpenAPI document`)
await rm(answerCounts, { recursive: true, force: true })
if (summary) {
  const skipped = (summary.skip ?? 0) + (summary.todo ?? 0)
  console.log(`${summary.pass ?? 0} passed, ${summary.fail ?? 0} failed${skipped ? `, ${skipped} skipped` : ''}`)
}
await cluster?.stop()
process.exit(code)
