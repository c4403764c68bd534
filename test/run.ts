/**
 * `npm test`: runs the whole suite against DATABASE_URL, or, when it is unset, against embedded
 * PostgreSQL clusters started here for the whole run (under .data/test, apart from the dev cluster).
 * A second run started meanwhile attaches to those clusters and leaves them to the run that started them.
 * Each test file then creates its own fresh database on its cluster (test/helpers/db.ts).
 *
 * Files run in parallel, one embedded cluster per job: PostgreSQL's snapshot horizon is
 * cluster-wide, so a file that holds a transaction open on purpose (the event store's visibility
 * tests, crash tests) would otherwise stall the read-your-writes waits of every file running
 * beside it. Against one given server (DATABASE_URL) the files share that horizon, so they run one
 * at a time unless --jobs says otherwise.
 *
 * The files run compiled to JavaScript (tsconfig.test.json, under .data/js), as plain Node
 * processes (test/file-runner.ts), not through tsx under tap's runner: both load modules through
 * an off-thread loader hook that every import of a process waits on, which cost each of the
 * suite's 130 test processes about 3 s of CPU. Files named on the command line by their TypeScript
 * paths (`npm test -- test/http/tags.test.ts`) run compiled the same way.
 */
import { spawn } from 'node:child_process'
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises'
import { availableParallelism, tmpdir } from 'node:os'
import { join, relative, resolve } from 'node:path'
import { startEmbeddedPostgres } from '../src/db/embedded-postgres.ts'
import { runFiles } from './file-runner.ts'

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

/**
 * Files, and the few runner options: --jobs=N (or -jN), --timeout=SECONDS (per file), --node-arg=ARG,
 * and --no-compile: run what .data/js holds (CI compiles once, then runs two suites side by side,
 * which must not both write .data/js).
 */
function parseArgs(given: string[]): { files: string[]; jobs?: number; timeoutSeconds?: number; nodeArgs: string[]; compile: boolean } {
  const parsed: ReturnType<typeof parseArgs> = { files: [], nodeArgs: [], compile: true }
  for (const arg of given) {
    const [, name, value] = /^(--jobs=|-j|--timeout=|--node-arg=)(.+)$/.exec(arg) ?? []
    if (!arg.startsWith('-')) parsed.files.push(arg)
    else if (arg === '--no-compile') parsed.compile = false
    else if (name === '--node-arg=') parsed.nodeArgs.push(value!)
    else if (name === '--jobs=' || name === '-j') parsed.jobs = Number(value)
    else if (name === '--timeout=') parsed.timeoutSeconds = Number(value)
    else {
      log.info(`unknown option ${arg}: npm test takes test files and --jobs=N, --timeout=SECONDS, --node-arg=ARG, --no-compile`)
      process.exit(2)
    }
  }
  return parsed
}

const given = parseArgs(process.argv.slice(2))
// Compiled while the clusters start.
const compiled = given.compile ? compileTests() : Promise.resolve()
const files = (given.files.length ? given.files : await allTestFiles()).map(compiledArg)
// The suite waits on PostgreSQL, timers and child servers more than on this process: twice the cores keeps them busy (never more clusters than files).
const clusterCount = process.env.DATABASE_URL ? 0 : Math.min(files.length, 8, Math.max(2, 2 * availableParallelism()))
const jobs = given.jobs ?? Math.max(1, clusterCount)
const clusters = await Promise.all(Array.from({ length: clusterCount }, (_, job) => startEmbeddedPostgres(resolve(`.data/test/job-${job}`), 0, log, { owner: false, durable: false })))
const databaseUrls = process.env.DATABASE_URL ? [process.env.DATABASE_URL] : clusters.map((c) => c.url)
await compiled
log.info(`tests use PostgreSQL at ${databaseUrls.map((url) => url.replace(/:[^:@/]*@/, ':***@')).join(', ')}, ${jobs} files at a time`)

// Each test process appends how many answers it checked against the OpenAPI document (kernel/document-conformance.ts).
const answerCounts = await mkdtemp(join(tmpdir(), 'crm-answers-'))
// The OpenAPI document each app's answers are checked against, generated once per set of routes for the whole run (kernel/document-conformance.ts).
const openapiDocuments = await mkdtemp(join(tmpdir(), 'crm-openapi-'))
const started = Date.now()
const { counts, failedFiles } = await runFiles(files, {
  jobs,
  timeoutSeconds: given.timeoutSeconds ?? 120,
  nodeArgs: given.nodeArgs,
  env: { ...process.env, DATABASE_URL: databaseUrls[0], TEST_DATABASE_URLS: databaseUrls.join(' '), NODE_ENV: 'test', ANSWER_COUNT_DIR: answerCounts, OPENAPI_DOCUMENT_DIR: openapiDocuments },
  print: (text) => process.stdout.write(text),
})
log.info(`suite wall time ${((Date.now() - started) / 1000).toFixed(1)} s, ${files.length} files`)
const counted = await Promise.all((await readdir(answerCounts)).map((file) => readFile(join(answerCounts, file), 'utf8')))
const validated = counted.flatMap((text) => text.trim().split('\n')).reduce((sum, n) => sum + (Number(n) || 0), 0)
log.info(`${validated} answers validated against the OpenAPI document`)
await rm(answerCounts, { recursive: true, force: true })
await rm(openapiDocuments, { recursive: true, force: true })
if (failedFiles.length) log.info(`failed files:\n  ${failedFiles.join('\n  ')}`)
// CI reads this plain line.
const skipped = counts.skip + counts.todo
console.log(`${counts.pass} passed, ${counts.fail} failed${skipped ? `, ${skipped} skipped` : ''}`)
await Promise.all(clusters.map((c) => c.stop()))
process.exit(failedFiles.length ? 1 : 0)
