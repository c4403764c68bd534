/**
 * Runs test files as plain Node processes, several at a time, for test/run.ts: the tap library in
 * each file writes TAP and ends with its own `# { total, pass, fail, … }` line, which this reads.
 *
 * Why not tap's runner: it starts every test process with `--import @tapjs/processinfo`, which on
 * Node 20 registers an off-thread module loader hook (for coverage and `--changed`, both unused
 * here) that every import of the process then waits on: about 1.5 s of CPU per test process, on a
 * suite of 130 processes that is CPU-bound on 2 cores.
 */
import { spawn } from 'node:child_process'

export type Counts = { total: number; pass: number; fail: number; skip: number; todo: number }
export type RunOptions = { jobs: number; timeoutSeconds: number; nodeArgs: string[]; env: NodeJS.ProcessEnv; print: (text: string) => void }

/** The longest a file may set its own timeout to (the fuzz files' are 360 s). */
const HANGING_AFTER_SECONDS = 600
const NONE: Counts = { total: 0, pass: 0, fail: 0, skip: 0, todo: 0 }
const add = (a: Counts, b: Counts): Counts => ({ total: a.total + b.total, pass: a.pass + b.pass, fail: a.fail + b.fail, skip: a.skip + b.skip, todo: a.todo + b.todo })

/** The file's own summary line, the last at the top level of its TAP (`# { total: 174, pass: 174 }`). */
function countsOf(output: string): Counts | undefined {
  const summaries = [...output.matchAll(/^# \{ (total: [^}]*) \}$/gm)]
  const last = summaries.at(-1)
  if (!last) return undefined
  const fields = Object.fromEntries(last[1]!.split(', ').map((kv) => [kv.split(': ')[0]!, Number(kv.split(': ')[1])]))
  // A file that plans nothing (`1..0 # EVENTSTORE_URL is not set`) skipped itself: one skip, as tap's runner counts it.
  const skippedWhole = fields.total === 0 && /^1\.\.0\b/m.test(output)
  return { ...NONE, ...fields, ...(skippedWhole ? { total: 1, skip: 1 } : {}) }
}

/** A passing file's own comments (`t.comment`: its measured figures and counts), as tap's reporter showed them. */
function commentsOf(output: string): string {
  const lines = output.split('\n').filter((line) => /^\s*# /.test(line) && !/^\s*# (Subtest: |time=|\{ total)/.test(line))
  return lines.map((line) => `    ${line.trim()}\n`).join('')
}

type Finished = { output: string; code: number | null; signal: NodeJS.Signals | null; timedOut: boolean; ms: number }

function runFile(file: string, job: number, options: RunOptions): Promise<Finished> {
  const started = Date.now()
  const child = spawn(process.execPath, ['--enable-source-maps', ...options.nodeArgs, file], {
    env: { ...options.env, TAP_JOB_ID: String(job), TAP_TIMEOUT: String(options.timeoutSeconds) },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
  // tap fails a test past TAP_TIMEOUT itself, and a file may raise its own (t.setTimeout, the fuzz
  // test's grows with the routes): this only stops a process still running long after either.
  let timedOut = false
  const killer = setTimeout(
    () => {
      timedOut = true
      child.kill('SIGKILL')
    },
    (Math.max(options.timeoutSeconds, HANGING_AFTER_SECONDS) + 60) * 1000,
  )
  return new Promise((done) =>
    child.on('close', (code, signal) => {
      clearTimeout(killer)
      done({ output, code, signal, timedOut, ms: Date.now() - started })
    }),
  )
}

/** Runs every file, `jobs` at a time (each job's number in TAP_JOB_ID); prints a line per file and a failed file's whole output. */
export async function runFiles(files: string[], options: RunOptions): Promise<{ counts: Counts; failedFiles: string[] }> {
  const queue = [...files]
  let counts = NONE
  let finished = 0
  const failedFiles: string[] = []
  const worker = async (job: number) => {
    for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
      const result = await runFile(file, job, options)
      const own = countsOf(result.output)
      const failed = result.code !== 0 || result.timedOut || own === undefined || own.fail > 0
      counts = add(counts, own ?? { ...NONE, total: 1, fail: 1 })
      finished++
      const summary = own ? ` (${own.pass} passed${own.fail ? `, ${own.fail} failed` : ''}${own.skip ? `, ${own.skip} skipped` : ''})` : ''
      if (!failed) {
        options.print(`ok ${finished} - ${file} # time=${result.ms}ms${summary}\n${commentsOf(result.output)}`)
        continue
      }
      failedFiles.push(file)
      const why = result.timedOut ? 'killed after the timeout' : result.signal ? `signal ${result.signal}` : `exit ${result.code}`
      options.print(`not ok ${finished} - ${file} # time=${result.ms}ms, ${why}${summary}\n`)
      options.print(`${result.output.replace(/^/gm, '    ')}\n`)
    }
  }
  await Promise.all(Array.from({ length: Math.min(options.jobs, files.length) }, (_, job) => worker(job)))
  return { counts, failedFiles }
}
