/**
 * Projection units (issue 36): each projector is a unit one runner at a time applies, on a lease.
 * Runners here stand for processes (each has its own name in the lease tables); the SIGKILL of a
 * real process under load is test/reliability/two-processes.test.ts.
 */
import { sql } from 'kysely'
import t from 'tap'
import type { Test } from 'tap'
import { START } from '../../src/eventstore/event-store.ts'
import type { EventStore, Position } from '../../src/eventstore/event-store.ts'
import { applyBatch } from '../../src/projections/kernel/apply.ts'
import { LeaseLostError, leaseFence, leaseStore } from '../../src/projections/kernel/leases.ts'
import { rebuildProjection } from '../../src/projections/kernel/rebuild.ts'
import { freshDatabase } from '../helpers/db.ts'
import type { TestDatabase } from '../helpers/db.ts'
import { testRunner, testStore } from '../helpers/runner.ts'
import { sequenceProjector, sequenceRows } from '../helpers/sequence-projector.ts'
import { eventually } from '../reliability/harness.ts'

const UNITS = ['seq_a', 'seq_b', 'seq_c', 'seq_d', 'seq_e', 'seq_f']
const projectors = () => UNITS.map((name) => sequenceProjector(name))

/** `perStream` events on each of `streams` streams, the streams written concurrently; answers the last position. */
async function sequence(store: EventStore, streams: string[], perStream: number): Promise<Position> {
  const positions = await Promise.all(
    streams.map(async (stream) => {
      let last: Position = START
      for (let i = 0; i < perStream; i++) last = (await store.appendToStream(stream, [{ type: 'Sequenced', data: { i } }])).position
      return last
    }),
  )
  return positions.reduce((a, b) => (a.commit > b.commit || (a.commit === b.commit && a.prepare > b.prepare) ? a : b))
}

async function assertEachOnceInOrder(t: Test, database: TestDatabase, streams: string[], perStream: number): Promise<void> {
  const expected = Array.from({ length: perStream }, (_, i) => BigInt(i))
  for (const name of UNITS) {
    const rows = await sequenceRows(database.db, name)
    t.same(
      streams.map((s) => rows.get(s)),
      streams.map(() => expected),
      `${name}: every event of every stream once, no gap (each applied after its predecessor)`,
    )
  }
}

t.test('three runners share the units: disjoint, all covered, each event applied once in stream order', async (t) => {
  const database = await freshDatabase(t, { poolSize: 30 })
  const store = testStore(t, database)
  const runners = [0, 1, 2].map(() => testRunner(t, database, store, projectors()))
  for (const runner of runners) runner.start()
  const shares = await eventually('every runner holds two units', 20_000, async () => {
    const sizes = runners.map((r) => r.held.size)
    return sizes.every((size) => size === 2) ? runners.map((r) => [...r.held.keys()]) : undefined
  })
  t.same(shares.flat().sort(), UNITS, `disjoint shares covering every unit: ${JSON.stringify(shares)}`)
  const streams = Array.from({ length: 8 }, (_, i) => `s${i}`)
  const last = await sequence(store, streams, 25)
  // Read-your-writes across processes: each runner's wait covers the units the others apply.
  for (const runner of runners) await runner.waitFor(last, 20_000)
  await assertEachOnceInOrder(t, database, streams, 25)
})

t.test('a runner joining takes its share; one stopping hands its units over; nothing applied twice', async (t) => {
  const database = await freshDatabase(t, { poolSize: 30 })
  const store = testStore(t, database)
  const a = testRunner(t, database, store, projectors())
  a.start()
  await eventually('the first runner holds every unit', 20_000, async () => a.held.size === UNITS.length)
  const streams = ['x', 'y', 'z']
  const writing = sequence(store, streams, 40)
  const b = testRunner(t, database, store, projectors())
  b.start()
  await eventually('the two split the units', 20_000, async () => a.held.size === 3 && b.held.size === 3)
  await b.waitFor(await writing, 20_000)
  await a.stop()
  const stoppedAt = Date.now()
  await eventually('the other takes every unit', 10_000, async () => b.held.size === UNITS.length)
  t.ok(Date.now() - stoppedAt < 5_000, `handed over in ${Date.now() - stoppedAt} ms (released at stop, not left to expire)`)
  await b.waitFor(await sequence(store, streams, 10), 20_000)
  await assertEachOnceInOrder(t, database, streams, 50)
})

t.test('a runner that stops renewing loses its units when the lease runs out', async (t) => {
  const database = await freshDatabase(t, { poolSize: 30 })
  const store = testStore(t, database)
  const a = testRunner(t, database, store, projectors(), { leaseMs: 600 })
  a.start()
  await eventually('a holds every unit', 20_000, async () => a.held.size === UNITS.length)
  // A process that died: its rows stay as it left them, and nothing renews them.
  const leases = leaseStore(database.db, 'dead-process', 600)
  await sql`UPDATE projection_leases SET owner = 'dead-process', epoch = epoch + 1, lease_until = now() + interval '600 milliseconds' WHERE name IN ('seq_a', 'seq_b')`.execute(database.db)
  await leases.heartbeat()
  const b = testRunner(t, database, store, projectors(), { leaseMs: 600 })
  b.start()
  await eventually("the dead process's units are taken once its lease ran out", 10_000, async () => {
    const { rows } = await sql<{ owner: string }>`SELECT owner FROM projection_leases WHERE name IN ('seq_a', 'seq_b')`.execute(database.db)
    return rows.every((r) => r.owner === a.owner || r.owner === b.owner)
  })
  await a.waitFor(await sequence(store, ['p', 'q'], 10), 20_000)
  await assertEachOnceInOrder(t, database, ['p', 'q'], 10)
})

t.test('a deposed runner cannot commit: its page fails the fence, it applies nothing, and lets the unit go', async (t) => {
  const database = await freshDatabase(t, { poolSize: 30 })
  const store = testStore(t, database)
  // Renewals a minute apart: the page's own fence, not a renewal, is what must notice.
  const a = testRunner(t, database, store, [sequenceProjector('seq_a')], { leaseMs: 180_000 })
  a.start()
  await a.waitFor(await sequence(store, ['s'], 3), 20_000)
  await sql`UPDATE projection_leases SET owner = 'intruder', epoch = epoch + 1, lease_until = now() + interval '1 hour'`.execute(database.db)
  await sequence(store, ['s'], 2)
  // Only the refused page can make it let go this soon: its next renewal is a minute away.
  await eventually('the next page is refused and the runner drops the unit', 10_000, async () => a.held.size === 0)
  t.same((await sequenceRows(database.db, 'seq_a')).get('s'), [0n, 1n, 2n], 'nothing after the deposition committed')
})

t.test('the fence is checked in the page transaction: a takeover waits for a page in flight, a renewal does not, and the page after it fails', async (t) => {
  const database = await freshDatabase(t, { poolSize: 30 })
  const store = testStore(t, database)
  let release!: () => void
  const held = new Promise<void>((resolve) => (release = resolve))
  const projector = sequenceProjector('seq_a', { hold: () => held })
  const built = await rebuildProjection(database.db, store, projector, 10)
  const mine = await leaseStore(database.db, 'me', 60_000).acquire(['seq_a'])
  const fence = leaseFence('me', mine)
  const first = await store.appendToStream('s', [{ type: 'Sequenced', data: {} }])
  // Visible once no older transaction is still open (the shared server may hold one for a moment).
  const visibleAfter = (after: Position) =>
    eventually('the appended event is visible', 5_000, async () => {
      const { events } = await store.readAll({ after, maxCount: 10 })
      return events.length ? events : undefined
    })
  const [event] = await visibleAfter(built.position)
  const page = applyBatch(database.db, projector, built.position, [event!], first.position, fence)
  await eventually('the page holds the fence', 5_000, async () => {
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE c.relname = 'projection_leases' AND l.mode = 'RowShareLock' AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`.execute(database.db)
    return rows[0]!.n > 0
  })
  const renewed = await leaseStore(database.db, 'me', 60_000).renew(mine)
  t.same([...renewed.keys()], ['seq_a'], 'a renewal does not wait for the page (it changes no key column)')
  let tookOver = false
  const takeover = sql`UPDATE projection_leases SET owner = 'other', epoch = epoch + 1 WHERE name = 'seq_a'`.execute(database.db).then(() => (tookOver = true))
  await new Promise((resolve) => setTimeout(resolve, 300))
  t.notOk(tookOver, 'the takeover waits while the page is in flight')
  release()
  t.match(await page, { applied: true }, 'the page granted before the takeover commits')
  await takeover
  const second = await store.appendToStream('s', [{ type: 'Sequenced', data: {} }])
  const events = await visibleAfter(first.position)
  await t.rejects(applyBatch(database.db, projector, first.position, events, second.position, fence), LeaseLostError, 'the next page, under the old epoch, is refused')
  t.same((await sequenceRows(database.db, 'seq_a')).get('s'), [0n], 'and left nothing behind')
})

t.test('a process with PROJECTION_APPLY=false applies nothing and still reads its own writes', async (t) => {
  const database = await freshDatabase(t, { poolSize: 30 })
  const store = testStore(t, database)
  const serving = testRunner(t, database, store, projectors(), { applies: false })
  const applying = testRunner(t, database, store, projectors())
  serving.start()
  applying.start()
  await eventually('the applying runner holds every unit', 20_000, async () => applying.held.size === UNITS.length)
  await serving.waitFor(await sequence(store, ['s'], 5), 20_000)
  t.equal(serving.held.size, 0, 'the serving runner holds none')
  t.same((await sequenceRows(database.db, 'seq_f')).get('s'), [0n, 1n, 2n, 3n, 4n])
})
