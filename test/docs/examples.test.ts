/**
 * The shell examples of README.md and docs/*.md, run as a reader would run them.
 *
 * Every ```sh block runs with bash (`set -euo pipefail`) against a real app on a free port, in
 * document order: the blocks of one document share what they define (variables and functions),
 * as they would in one terminal, so a later block may use `$ID` from an earlier one. `localhost:8000`
 * becomes the app's address; `ACCESS_TOKEN` is an admin's token of a fresh organization, `HOOK_URL`
 * a webhook receiver on loopback; `npm run crm` runs the CLI on the app's database with its JWT
 * secret. A block fails when a command fails, and when curl gets an HTTP status its command did
 * not announce: a `→ 412` in the command's comment (on its lines or the comment lines right below)
 * announces that status; a command without one must answer 2xx. Streams (`curl -N`) are cut after
 * STREAM_SECONDS, which counts as success once they answered 200.
 *
 * A block that cannot run here says so with `<!-- not run: reason -->` right above its fence; it is
 * counted and listed, never silently skipped.
 */
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { createWebhookDispatcher } from '../../src/webhooks/dispatcher.ts'
import { buildTestApp } from '../helpers/app.ts'
import { onTeardown } from '../helpers/cleanup.ts'
import { givenOrganization } from '../helpers/identity.ts'
import { silentLogger } from '../helpers/runner.ts'
import { startReceiver } from '../helpers/webhook-receiver.ts'
import { REPO, docFiles, fencesOf, readDoc } from './markdown.ts'
import type { Fence } from './markdown.ts'

// It grows with every route of the schema (or block of the docs): past tap's 120 s default on a loaded 2-core machine.
t.setTimeout(480_000)

const SHELLS = new Set(['sh', 'bash', 'shell'])
const STREAM_SECONDS = 1.5
const BLOCK_TIMEOUT_MS = 60_000
/** DOCS_EXAMPLES_VERBOSE=1 prints what every block wrote. */
const VERBOSE = process.env.DOCS_EXAMPLES_VERBOSE === '1'

/** One command of a block: its lines (0-based, continuation and trailing comment lines included). */
type Command = { first: number; last: number; text: string; code: string }

function commandsOf(body: string[]): Command[] {
  const commands: Command[] = []
  const isComment = (line: string) => /^\s*#/.test(line)
  let i = 0
  while (i < body.length) {
    if (body[i]!.trim() === '' || isComment(body[i]!)) {
      i++
      continue
    }
    const first = i
    while (/\\$/.test(body[i]!) && i + 1 < body.length) i++
    const codeEnd = i
    i++
    while (i < body.length && isComment(body[i]!)) i++
    const lines = body.slice(first, i)
    const code = body
      .slice(first, codeEnd + 1)
      .map((line) => line.replace(/(^|\s)#.*$/, ''))
      .join('\n')
    commands.push({ first, last: i - 1, text: lines.join('\n'), code })
  }
  return commands
}

function announcedStatuses(command: Command): number[] {
  return [...command.text.matchAll(/→\s*(\d{3})\b/g)].map((m) => Number(m[1]))
}

const runsCurl = (command: Command) => /(^|[\s;|&(`])curl\s/.test(command.code)

/**
 * Runs before each block: curl records the HTTP status of every call with the line it was called
 * from; npm runs in the repository; what earlier blocks of the document defined is restored.
 */
const PRELUDE = String.raw`set -euo pipefail
cd "$__WORK"
curl() {
  local depth=${'$'}{#BASH_LINENO[@]}
  local line=${'$'}{BASH_LINENO[depth-2]}
  local stream=0 arg out rc=0 timed=()
  for arg in "$@"; do
    case "$arg" in --no-buffer) stream=1 ;; --*) ;; -*N*) stream=1 ;; esac
  done
  if [ "$stream" = 1 ]; then timed=(--max-time "$__STREAM_SECONDS"); fi
  { out=$(command curl "$@" "${'$'}{timed[@]}" -w '%{stderr}\n__HTTP_STATUS__ %{http_code}' 2>&1 1>&3 3>&-) || rc=$?; } 3>&1
  local status=${'$'}{out##*__HTTP_STATUS__ }
  local err=${'$'}{out%__HTTP_STATUS__*}
  err=${'$'}{err%$'\n'}
  if [ -n "$err" ]; then printf '%s\n' "$err" >&2; fi
  printf '%s %s\n' "$line" "$status" >>"$__CURL_LOG"
  if [ "$rc" = 28 ] && [ "$stream" = 1 ] && [ "$status" = 200 ]; then rc=0; fi
  return "$rc"
}
npm() { (cd "$__REPO" && command npm "$@"); }
__save_state() {
  local __v __f
  {
    for __v in $(compgen -v); do
      case "$__v" in __* | BASH* | FUNCNAME | PIPESTATUS | _) continue ;; esac
      case "$__base_vars" in *" $__v "*) case " $__DOC_VARS " in *" $__v "*) ;; *) continue ;; esac ;; esac
      declare -p "$__v"
    done
    for __f in $(compgen -A function); do
      case "$__base_funcs" in *" $__f "*) continue ;; esac
      declare -f "$__f"
    done
  } >"$__STATE"
}
__base_vars=" $(compgen -v | tr '\n' ' ') "
__base_funcs=" $(compgen -A function | tr '\n' ' ') "
if [ -f "$__STATE" ]; then source "$__STATE"; fi`

const PRELUDE_LINES = PRELUDE.split('\n').length

type Outcome = { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string; calls: { line: number; status: number }[] }

async function runBlock(fence: Fence, env: NodeJS.ProcessEnv, origin: string, work: string): Promise<Outcome> {
  const body = fence.body.map((line) => line.replaceAll('localhost:8000', origin))
  const script = join(work, 'block.sh')
  const log = join(work, 'curl.log')
  await writeFile(script, `${PRELUDE}\n${body.join('\n')}\n__save_state\n`)
  await writeFile(log, '')
  const child = spawn('bash', [script], { cwd: work, env: { ...env, __CURL_LOG: log }, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk) => (stdout += chunk))
  child.stderr.on('data', (chunk) => (stderr += chunk))
  const timer = setTimeout(() => child.kill('SIGKILL'), BLOCK_TIMEOUT_MS)
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((done) => child.on('close', (c, s) => done([c, s])))
  clearTimeout(timer)
  const calls = (await readFile(log, 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((entry) => {
      const [line, status] = entry.split(' ')
      return { line: Number(line) - PRELUDE_LINES - 1, status: Number(status) }
    })
  return { code, signal, stdout, stderr, calls }
}

const tail = (text: string, n = 3000) => (text.length > n ? `…${text.slice(-n)}` : text)

const fences = docFiles().flatMap((file) => {
  const { fences, strayMarkers } = fencesOf(file, readDoc(file))
  return [{ file, fences: fences.filter((f) => SHELLS.has(f.lang)), strayMarkers }]
})

t.test('not-run markers sit right above a shell block', async (t) => {
  for (const { file, strayMarkers } of fences) for (const line of strayMarkers) t.fail(`${file}:${line}: a <!-- not run --> comment that is not right above a fenced block`)
  for (const { file, fences: blocks } of fences) for (const fence of blocks) if (fence.notRun !== undefined) t.ok(fence.notRun.length >= 10, `${file}:${fence.line}: the reason says why`)
})

t.test('announcements are parsed from the command they belong to', async (t) => {
  const commands = commandsOf(['H=x', "curl -s a \\", "  -d '{}'   # → 201", '# {"id": "…"}', '', 'curl b | json .id  # plain', '# → 412 when stale'])
  t.same(commands.map((c) => [c.first, c.last]), [[0, 0], [1, 3], [5, 6]])
  t.same(commands.map(announcedStatuses), [[], [201], [412]])
  t.same(commands.map(runsCurl), [false, true, true])
})

t.test('the shell examples of the README and docs run against a real app', async (t) => {
  const jwtSecret = randomBytes(32).toString('base64url')
  const { app, database, store } = await buildTestApp(t, {
    // Real time: the CLI signs tokens with the wall clock, and examples compute instants.
    clock: () => new Date(),
    env: { JWT_SECRET: jwtSecret, WEBHOOK_ALLOW_PRIVATE: '1', AUTH_RATE_LIMIT_MAX: '1000' },
  })
  // Deliveries come from the server's delivery worker, which the test app does not start by itself.
  const dispatcher = createWebhookDispatcher({ db: database.db, store, logger: silentLogger, pollMs: 50, leaderRetryMs: 50, targets: { allowPrivate: true } })
  dispatcher.start()
  onTeardown(t, () => dispatcher.stop())
  const receiver = await startReceiver(t)
  const docs = await givenOrganization(app, database.db, 'Docs')
  const origin = (await app.listen({ host: '127.0.0.1', port: 0 })).replace(/^http:\/\//, '')

  const work = await mkdtemp(join(tmpdir(), 'crm-docs-'))
  onTeardown(t, () => rm(work, { recursive: true, force: true }))
  const docVars = { ACCESS_TOKEN: docs.admin.token, HOOK_URL: receiver.url('/hooks/crm') }
  // Only what a reader's shell would have, plus the variables the docs name: nothing else leaks in.
  const inherited = Object.fromEntries(['PATH', 'HOME', 'LANG', 'TMPDIR'].flatMap((name) => (process.env[name] === undefined ? [] : [[name, process.env[name]]])))
  const baseEnv: NodeJS.ProcessEnv = {
    ...inherited,
    // The CLI (npm run crm) on the app's database, signing with its secret.
    DATABASE_URL: database.url,
    JWT_SECRET: jwtSecret,
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    DATA_DIR: join(work, 'data'),
    ...docVars,
    __DOC_VARS: Object.keys(docVars).join(' '),
    __REPO: REPO,
    __WORK: work,
    __STREAM_SECONDS: String(STREAM_SECONDS),
  }

  let ran = 0
  const notRun: string[] = []
  for (const { file, fences: blocks } of fences) {
    const state = join(work, `${file.replace(/\W/g, '_')}.state`)
    for (const fence of blocks) {
      const name = `${file}:${fence.line}`
      if (fence.notRun !== undefined) {
        notRun.push(`${name}: ${fence.notRun}`)
        t.pass(`${name} not run`, { skip: fence.notRun })
        continue
      }
      ran++
      await t.test(name, async (t) => {
        const started = Date.now()
        const outcome = await runBlock(fence, { ...baseEnv, __STATE: state }, origin, work)
        const commands = commandsOf(fence.body)
        const output = { exit: outcome.code, signal: outcome.signal, stdout: tail(outcome.stdout), stderr: tail(outcome.stderr), calls: outcome.calls }
        t.equal(outcome.code, 0, `the block exits 0 (${Date.now() - started} ms)`, outcome.code === 0 ? {} : output)
        if (VERBOSE) t.comment(`stdout:\n${outcome.stdout}\nstderr:\n${outcome.stderr}`.replace(/\r/g, '\n'))
        for (const call of outcome.calls) {
          const command = commands.find((c) => call.line >= c.first && call.line <= c.last)
          const announced = command ? announcedStatuses(command) : []
          const allowed = announced.length ? announced.includes(call.status) : call.status >= 200 && call.status < 300
          const expected = announced.length ? `announced ${announced.join(' or ')}` : 'no status announced, so 2xx'
          t.ok(allowed, `line ${fence.line + 1 + call.line}: HTTP ${call.status}, ${expected}`, allowed ? {} : { command: command?.text, ...output })
        }
        if (outcome.code === 0) {
          for (const command of commands.filter(runsCurl)) {
            const calls = outcome.calls.filter((c) => c.line >= command.first && c.line <= command.last)
            t.ok(calls.length > 0, `line ${fence.line + 1 + command.first}: its curl ran`, calls.length ? {} : { command: command.text })
          }
        }
      })
    }
  }
  t.ok(ran > 0, 'some examples ran')
  t.comment(`${ran} shell blocks run, ${notRun.length} not run${notRun.length ? `:\n${notRun.map((n) => `  - ${n}`).join('\n')}` : ''}`)
})
