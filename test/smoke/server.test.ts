/**
 * The built server, as `npm start` runs it on a fresh machine: no DATABASE_URL, so it starts an
 * embedded PostgreSQL under DATA_DIR, migrates, serves, and shuts down cleanly on SIGTERM.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { envWithout, runEntry } from '../helpers/process.ts'

t.test('starts with no DATABASE_URL and answers /schema/ and /healthz', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'crm-smoke-'))
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
  const { child, finished } = runEntry('src/main.ts', [], { ...envWithout('DATABASE_URL', 'JWT_SECRET'), NODE_ENV: 'development', DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1' })
  t.teardown(() => child.kill('SIGKILL'))
  const base = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('server did not start within 60 s')), 60_000)
    child.stdout!.on('data', (chunk: Buffer) => {
      const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(chunk.toString())
      if (match) {
        clearTimeout(timer)
        resolve(match[1]!)
      }
    })
  })
  const schema = await fetch(`${base}/schema/`)
  t.equal(schema.status, 200)
  t.match(await schema.json(), { openapi: /^3\./ })
  t.same(await (await fetch(`${base}/healthz`)).json(), { status: 'ok' })
  // Ready once the projections are built (a fresh database builds them at start).
  let ready = await fetch(`${base}/readyz`)
  for (let i = 0; i < 100 && ready.status !== 200; i++) {
    await new Promise((r) => setTimeout(r, 100))
    ready = await fetch(`${base}/readyz`)
  }
  t.equal(ready.status, 200, 'ready within 10 s')

  // The admin CLI shares the running server's embedded cluster and development JWT secret.
  const cliEnv = { ...envWithout('DATABASE_URL', 'JWT_SECRET'), NODE_ENV: 'development', DATA_DIR: dataDir, LOG_LEVEL: 'warn' }
  const boot = await runEntry('src/cli.ts', ['bootstrap', '--org', 'Smoke Co', '--email', 'owner@smoke.test'], cliEnv).finished
  t.equal(boot.code, 0, boot.stderr)
  const lines = boot.stdout.trim().split('\n')
  t.equal(lines.length, 1, 'bootstrap prints exactly one line')
  const created = JSON.parse(lines[0]!)
  t.same(Object.keys(created).sort(), ['access_token', 'org_id', 'profile_id', 'user_id'])
  const me = await fetch(`${base}/api/auth/me/`, { headers: { authorization: `Bearer ${created.access_token}` } })
  t.match(await me.json(), { org_id: created.org_id, profile_id: created.profile_id, role: 'ADMIN' }, 'the server accepts the CLI token')
  const login = await runEntry('src/cli.ts', ['login', '--email', 'OWNER@smoke.test', '--org', created.org_id], cliEnv).finished
  t.equal(login.code, 0)
  t.same(Object.keys(JSON.parse(login.stdout)).sort(), ['access_token', 'profile_id'])
  const refused = await runEntry('src/cli.ts', ['login', '--email', 'nobody@smoke.test', '--org', created.org_id], cliEnv).finished
  t.not(refused.code, 0, 'login of an unknown profile fails')
  t.match(refused.stderr, /No profile for nobody@smoke.test/)
  t.equal(refused.stdout, '', 'and prints nothing on stdout')

  child.kill('SIGTERM')
  const { code, stdout } = await finished
  t.equal(code, 0, 'exits cleanly on SIGTERM')
  t.match(stdout, /JWT_SECRET is not set: generated a random one/, 'the dev fallback is logged as a warning')
  t.match(stdout, /"msg":"stopped"/)
})

t.test('refuses to start in production without JWT_SECRET', async (t) => {
  const { finished } = runEntry('src/main.ts', [], { ...envWithout('JWT_SECRET'), NODE_ENV: 'production' })
  const { code, stderr } = await finished
  t.equal(code, 1)
  t.match(stderr, /JWT_SECRET: expected a secret of at least 32 characters in production/)
})
