/**
 * Issue 10, database loss: the server runs on its own embedded PostgreSQL cluster (a temp
 * directory, never the shared .data/test one); the cluster is stopped under load and started
 * again on the same port. While it is down the service answers 503 with Retry-After; afterwards
 * it reconnects by itself, the projections resume from their checkpoints, and every
 * acknowledged write is in the log and in the read models.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import t from 'tap'
import { createDb, createPool } from '../../src/db/database.ts'
import { createDatabase, withDatabase } from '../../src/db/databases.ts'
import { freePort, startEmbeddedPostgres } from '../../src/db/embedded-postgres.ts'
import type { EmbeddedCluster } from '../../src/db/embedded-postgres.ts'
import { migrateToLatest } from '../../src/db/migrate.ts'
import { assertLedgerInLog, assertReadModelsEqualRebuild, call, dealWorker, errorBodies, eventually, givenAdmin, newLedger, onTeardown, startServer, statusCounts, waitCaughtUp, warmUp } from './harness.ts'
import type { Answer } from './harness.ts'

const quiet = { info: () => {}, debug: () => {} }

t.test('PostgreSQL stopped under load: 503 while down, reconnects, projections resume with nothing lost', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'crm-pg-loss-'))
  onTeardown(t, () => rmSync(dir, { recursive: true, force: true }))
  // A fixed port, so the restarted cluster is where the server's pool reconnects.
  const port = await freePort()
  let cluster: EmbeddedCluster | undefined = await startEmbeddedPostgres(dir, port, quiet, { owner: true })
  onTeardown(t, async () => {
    await cluster?.stop()
  })
  await createDatabase(cluster.url, 'crm')
  const url = withDatabase(cluster.url, 'crm')

  // The test's own connection only while the cluster is up (a pool would see its idle clients killed).
  const withDb = async <T>(work: (db: ReturnType<typeof createDb>, pool: ReturnType<typeof createPool>) => Promise<T>): Promise<T> => {
    const pool = createPool(url, 4)
    pool.on('error', () => {})
    const db = createDb(pool)
    try {
      return await work(db, pool)
    } finally {
      await db.destroy()
    }
  }
  const admin = await withDb(async (db) => {
    await migrateToLatest(db)
    return givenAdmin(db)
  })
  const server = await startServer(t, url)
  await warmUp(t, server, admin.token)

  const ledger = newLedger()
  const load = new AbortController()
  // A failed assertion ends the test early: the clients stop with it.
  onTeardown(t, () => load.abort())
  const workers = Array.from({ length: 6 }, (_, i) => dealWorker(() => server.base, admin.token, `d${i}`, ledger, load.signal))
  await eventually('load before the outage', 45_000, async () => ledger.created.size >= 15)

  // Outage.
  await cluster.stop()
  cluster = undefined
  const outageStart = ledger.answers.length
  const probes: Answer[] = []
  const probe = async () => {
    for (const [method, path, body] of [
      ['GET', '/api/opportunities/', undefined],
      ['GET', '/api/opportunities/kanban/', undefined],
      ['POST', '/api/opportunities/', { name: `During outage ${probes.length}` }],
    ] as const) probes.push(await call(server.base, admin.token, method, path, body, {}, 15_000))
  }
  const deadline = Date.now() + 3_000
  while (Date.now() < deadline) await probe()
  const during = [...ledger.answers.slice(outageStart), ...probes]
  t.comment(`answers while PostgreSQL was down: ${JSON.stringify(statusCounts(during))}`)
  for (const body of errorBodies(during)) t.comment(`refused: ${body}`)
  t.ok(server.child.exitCode === null, 'the server stays up while PostgreSQL is down')
  if (server.child.exitCode !== null) {
    t.comment(`the server exited with ${server.child.exitCode}:\n${server.output().slice(-3000)}`)
    return // Nothing left to recover.
  }
  t.same(probes.filter((a) => a.status !== 503).map((a) => `${a.status} ${JSON.stringify(a.body)}`).slice(0, 3), [], 'every request while PostgreSQL is down answers 503')
  t.same(probes.filter((a) => a.status === 503 && !a.headers.get('retry-after')).length, 0, 'with Retry-After')
  t.same(probes.filter((a) => a.status === 503 && a.body?.error !== true).length, 0, 'in the error shape')
  const outageCreates = ledger.created.size

  // Recovery on the same port.
  cluster = await startEmbeddedPostgres(dir, port, quiet, { owner: true })
  const recoveredAt = Date.now()
  await eventually('writes succeed again after PostgreSQL restarts', 45_000, async () => ledger.created.size >= outageCreates + 10)
  t.comment(`writes acknowledged again ${Date.now() - recoveredAt} ms after PostgreSQL restarted`)
  load.abort()
  await Promise.all(workers)
  t.comment(`all answers: ${JSON.stringify(statusCounts(ledger.answers))}`)

  const projections = await eventually('projections resume', 30_000, async () => {
    const answer = await call(server.base, admin.token, 'GET', '/api/projections/')
    return answer.status === 200 && answer.body.leader && answer.body.projections.every((p: { lag_events: number }) => p.lag_events === 0) ? answer.body : undefined
  })
  t.same(projections.projections.filter((p: { failure: string | null }) => p.failure), [], 'no projection still failing')

  await withDb(async (db, pool) => {
    await assertLedgerInLog(t, db, ledger)
    await waitCaughtUp(db, pool)
    const projected = new Set((await sql<{ id: string }>`SELECT id::text FROM opportunities`.execute(db)).rows.map((r) => r.id))
    t.same([...ledger.created].filter((id) => !projected.has(id)), [], `every acknowledged deal (${ledger.created.size}) is in the read model`)
    await server.kill('SIGTERM')
    await assertReadModelsEqualRebuild(t, db, pool)
  })
})
