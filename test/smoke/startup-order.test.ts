/**
 * Start-up order on a brand-new, empty database (issues 16 and 21): nothing in the background may
 * read a table before whatever creates it has finished. The migrations create the schema, and the
 * projections leader then creates every read model's tables, `webhooks` included, which the webhook
 * dispatcher lists subscriptions from. Before the fix the dispatcher, started beside the projection
 * runner, read `webhooks` before it existed ("relation "webhooks" does not exist" in the log, then
 * recovered on its next attempt). Real server processes (`src/main.ts`), one and then two at once
 * on one database (the second waiting on the first one's migration lock and read models).
 */
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { sql } from 'kysely'
import t from 'tap'
import type { Test } from 'tap'
import { freshDatabase } from '../helpers/db.ts'
import { eventually, sleep, startServer } from '../reliability/harness.ts'
import type { Server } from '../reliability/harness.ts'
import { REPO } from '../helpers/repo.ts'

type Line = { level: number; msg?: string; err?: { message?: string }; component?: string }

const WARN = 40
const DELIVERS = 'this process now delivers webhooks'
const MIGRATIONS = readdirSync(join(REPO, 'migrations')).filter((f) => /\.[cm]?[jt]s$/.test(f)).length

const linesOf = (server: Server): Line[] =>
  server
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Line)

/** Warnings and errors, and any line at all that tells of a missing table. */
const problemsOf = (servers: Server[]) =>
  servers.flatMap((server) => linesOf(server)).filter((line) => line.level >= WARN || /does not exist/.test(JSON.stringify(line)))

/** Waits until one of `servers` delivers webhooks, then long enough for the dispatcher's first turns (it polls every 500 ms). */
async function untilDelivering(t: Test, servers: Server[]): Promise<void> {
  await eventually('a process delivers webhooks', 60_000, async () => servers.some((s) => linesOf(s).some((l) => l.msg === DELIVERS)))
  for (const server of servers) {
    await eventually('ready (read models built)', 60_000, async () => (await fetch(`${server.base}/readyz`)).status === 200)
  }
  await sleep(1_500)
  t.pass('started')
}

t.test('one server on an empty database: migrations, then read models, then webhook deliveries', async (t) => {
  const { url } = await freshDatabase(t, { migrate: false })
  const server = await startServer(t, url)
  await untilDelivering(t, [server])
  const lines = linesOf(server)
  const at = (msg: string) => lines.findIndex((l) => l.msg === msg)
  t.ok(at('applied migrations') >= 0, 'the server applied the migrations')
  t.ok(at('applied migrations') < at('projection units changed hands'), 'before taking the projection units')
  t.ok(at('applied migrations') < at(DELIVERS), 'and before delivering webhooks')
  t.same(problemsOf([server]), [], 'no warning or error on the way, no missing relation')
})

t.test('two servers at once on an empty database: one migrates, nothing starts before both are done', async (t) => {
  const { url, db } = await freshDatabase(t, { migrate: false })
  const servers = await Promise.all([startServer(t, url), startServer(t, url)])
  await untilDelivering(t, servers)
  const migrated = servers.filter((s) => linesOf(s).some((l) => l.msg === 'applied migrations'))
  t.equal(migrated.length, 1, 'exactly one process applied the migrations (the other waited on the migration lock)')
  const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM kysely_migration`.execute(db)
  t.equal(rows[0]?.n, MIGRATIONS, 'each migration applied once')
  t.equal(servers.filter((s) => linesOf(s).some((l) => l.msg === DELIVERS)).length, 1, 'one process delivers webhooks')
  t.same(problemsOf(servers), [], 'no warning or error in either process, no missing relation')
})
