/**
 * `npm test`: runs the whole tap suite against DATABASE_URL, or, when it is unset, against embedded
 * PostgreSQL clusters started here for the whole run (under .data/test, apart from the dev cluster).
 * A second run started meanwhile attaches to those clusters and leaves them to the run that started them.
 * Each test file then creates its own fresh database on its cluster (test/helpers/db.ts).
 *
 * Files run in parallel (tap's default on a 2-core machine is one at a time), one embedded cluster
 * per tap job: PostgreSQL's snapshot horizon is cluster-wide, so a file that holds a transaction
 * open on purpose (the event store's visibility tests, crash tests) would otherwise stall the
 * read-your-writes waits of every file running beside it. Against one given server (DATABASE_URL)
 * the files share that horizon, so they run one at a time unless --jobs says otherwise.
 *
 * tap runs the tests compiled to JavaScript (tsconfig.test.json, under .data/js), not through tsx:
 * tsx loads TypeScript from a loader thread that every import of a process waits on, about 2 s of
 * CPU per test process, a quarter of the suite's CPU. Files named on the command line by their
 * TypeScript paths (`npm test -- test/http/tags.test.ts`) run compiled the same way.
 */
import { spawn } from 'node:child_process'
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises'
import { availableParallelism, tmpdir } from 'node:os'
import { join, relative, resolve } from 'node:path'
import { startEmbeddedPostgres } from '../src/db/embedded-postgres.ts'

const log = { info: (m: string) => console.error(`[test] ${m}`), debug: () => {} }
const COMPILED = '.data/js'

/** Emit only (noCheck), incremental: a few seconds, most of them when sources changed. */
async function compileTests(): Promise<void> {
  const tsc = spawn(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.test.json'], { stdio: 'inherit' })
  const code = await new Promise<number | null>((done) => tsc.on('close', done))
  if (code !== 0) {
    log.info(`compiling the tests (tsc -p tsconfig.test.json) failed with exit ${code}`)
    process.exit(1)
  }
}

/** The compiled form of a TypeScript file of this repository; anything else (options, other files) as given. */
function compiledArg(arg: string): string {
  if (arg.startsWith('-') || !arg.endsWith('.ts')) return arg
  const path = relative(process.cwd(), resolve(arg))
  return path.startsWith('..') ? arg : join(COMPILED, path.replace(/\.ts$/, '.js'))
}

/** Every test file of the sources (not of .data/js, which keeps the output of files since deleted). */
async function allTestFiles(): Promise<string[]> {
  const entries = await readdir('test', { recursive: true, withFileTypes: true })
  return entries.filter((e) => e.isFile() && e.name.endsWith('.test.ts')).map((e) => join(e.parentPath, e.name)).sort()
}

// Compiled while the clusters start.
const compiled = compileTests()
const given = process.argv.slice(2)
const filesGiven = given.some((a) => !a.startsWith('-'))
const args = [...given, ...(filesGiven ? [] : await allTestFiles())].map(compiledArg)
const jobsGiven = args.some((a) => /^(-j|--jobs)/.test(a))
// The suite waits on PostgreSQL, timers and child servers more than on this process: twice the cores keeps them busy.
const jobs = process.env.DATABASE_URL ? 1 : Math.min(8, Math.max(2, 2 * availableParallelism()))
const clusters = process.env.DATABASE_URL
  ? []
  : await Promise.all(Array.from({ length: jobs }, (_, job) => startEmbeddedPostgres(resolve(`.data/test/job-${job}`), 0, log, { owner: false, durable: false })))
const databaseUrls = process.env.DATABASE_URL ? [process.env.DATABASE_URL] : clusters.map((c) => c.url)
await compiled
log.info(`tests use PostgreSQL at ${databaseUrls.map((url) => url.replace(/:[^:@/]*@/, ':***@')).join(', ')}${jobsGiven ? '' : `, ${jobs} files at a time`}`)

// Each test process appends how many answers it checked against the OpenAPI document (kernel/document-conformance.ts).
const answerCounts = await mkdtemp(join(tmpdir(), 'crm-answers-'))
const started = Date.now()
const tap = spawn('npx', ['tap', '--node-arg=--enable-source-maps', ...(jobsGiven ? [] : [`--jobs=${jobs}`]), ...args], {
  stdio: ['inherit', 'pipe', 'inherit'],
  env: { ...process.env, DATABASE_URL: databaseUrls[0], TEST_DATABASE_URLS: databaseUrls.join(' '), NODE_ENV: 'test', ANSWER_COUNT_DIR: answerCounts },
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
await Promise.all(clusters.map((c) => c.stop()))
process.exit(code)
