import t from 'tap'
import { START } from '../../src/eventstore/event-store.ts'
import type { EventStore, Position } from '../../src/eventstore/event-store.ts'
import { readCheckpoints } from '../../src/projections/kernel/checkpoints.ts'
import { rebuildProjection } from '../../src/projections/kernel/rebuild.ts'
import { ProjectionLagError } from '../../src/errors.ts'
import { projectionsStatus } from '../../src/projections/kernel/status.ts'
import { counterProjector, counterRows, tamperCounter } from '../helpers/counter-projector.ts'
import { tableRows } from '../helpers/read-models.ts'
import { freshDatabase } from '../helpers/db.ts'
import { testRunner, testStore } from '../helpers/runner.ts'
import { CHECKPOINT_CHANNEL, startNotifications } from '../../src/eventstore/postgres-notifications.ts'
import type { Notifications } from '../../src/eventstore/postgres-notifications.ts'
import { onTeardown } from '../helpers/cleanup.ts'
import { eventually } from '../helpers/webhook-receiver.ts'

async function count(store: EventStore, stream: string, amounts: string[]): Promise<Position> {
  let last: Position = START
  for (const amount of amounts) last = (await store.appendToStream(stream, [{ type: 'Counted', data: { amount } }, { type: 'Ignored', data: {} }])).position
  return last
}

t.test('a write waits only for the read models that apply its event types, when it names them', async (t) => {
  const database = await freshDatabase(t)
  const store = testStore(t, database)
  // 'stuck' applies `Stuck` events and fails on every one: it never reaches a position past them.
  const stuck = { ...counterProjector({ name: 'stuck', failOn: () => true }), eventTypes: ['Stuck'] }
  const runner = testRunner(t, database, store, [counterProjector(), stuck])
  runner.start()
  await store.appendToStream('s', [{ type: 'Stuck', data: { amount: '1' } }])
  const position = await count(store, 's', ['2'])
  await runner.waitFor(position, 5000, new Set(['Counted', 'Ignored']))
  t.same(await counterRows(database.db), [{ stream_name: 's', events: 1, total: '2' }], 'the counter shows the write')
  await t.rejects(runner.waitFor(position, 300, new Set(['Stuck'])), ProjectionLagError, 'a write of a type the stuck read model applies waits for it')
  await t.rejects(runner.waitFor(position, 300), ProjectionLagError, 'a write that names no types waits for every read model')
  await runner.waitFor(position, 300, new Set(['NobodyApplies']))
  t.pass('a write no read model applies has nothing to wait for')
})

t.test('catches up from the checkpoint, then follows live appends', async (t) => {
  const database = await freshDatabase(t)
  const store = testStore(t, database)
  await count(store, 'a', ['1.10', '2.20', '3.30'])
  const runner = testRunner(t, database, store, [counterProjector()])
  runner.start()
  const position = await count(store, 'b', ['0.01'])
  await runner.waitFor(position, 5000)
  t.same(await counterRows(database.db), [
    { stream_name: 'a', events: 3, total: '6.60' },
    { stream_name: 'b', events: 1, total: '0.01' },
  ])
  const [checkpoint] = await readCheckpoints(database.db)
  t.same(checkpoint?.position, position, 'the checkpoint is the last position, though its event is not one the projector handles')
  const status = await projectionsStatus(database.db, store, runner.projectors)
  t.match(status.projectors[0], { name: 'counter', lagEvents: 0, lagMs: 0, failure: null })
})

t.test('a failure mid-batch rolls back the batch and its checkpoint; nothing is applied twice', async (t) => {
  const database = await freshDatabase(t)
  const store = testStore(t, database)
  let failures = 1
  const flaky = counterProjector({ failOn: (data) => (data as { amount: string }).amount === '4' && failures-- > 0 })
  await count(store, 's', ['1', '2', '3', '4', '5'])
  const runner = testRunner(t, database, store, [flaky])
  runner.start()
  const position = await count(store, 's', ['6'])
  await runner.waitFor(position, 5000)
  t.equal(failures, -1, 'the projector did fail once')
  t.same(await counterRows(database.db), [{ stream_name: 's', events: 6, total: '21' }])
})

t.test('a projector that keeps failing holds back only itself; the others follow the log', async (t) => {
  const database = await freshDatabase(t)
  const store = testStore(t, database)
  let broken = true
  const healthy = counterProjector({ name: 'healthy' })
  const failing = counterProjector({ name: 'failing', failOn: () => broken })
  const runner = testRunner(t, database, store, [failing, healthy])
  runner.start()
  const position = await count(store, 's', ['1', '2'])
  const rowsOf = (table: string) => tableRows(database.db, table)
  const both = [{ stream_name: 's', events: 2, total: '3' }]
  // The tables appear once the runner has prepared the projectors; the two appends may be applied apart.
  for (let tries = 0; JSON.stringify(await rowsOf('healthy').catch(() => [])) !== JSON.stringify(both) && tries < 200; tries++) await new Promise((r) => setTimeout(r, 50))
  t.same(await rowsOf('healthy'), both, 'the healthy projector applied both events')
  t.same(await rowsOf('failing').catch(() => []), [], 'the failing one applied nothing (its tables may not even exist: building them replays the log)')
  t.match(runner.failures.get('failing'), /simulated crash/, `reported: ${runner.failures.get('failing')}`)
  t.notOk(runner.failures.has('healthy'))
  await t.rejects(runner.waitFor(position, 300), ProjectionLagError, 'a write still waits for every read model')
  broken = false
  // Its retries back off (doubling from 100 ms), so the catch-up may take a few seconds.
  await runner.waitFor(position, 20_000)
  const healed = await rowsOf('failing')
  t.same(healed, both, `once healed it catches up from its own checkpoint: ${JSON.stringify(healed)}`)
  t.notOk(runner.failures.has('failing'))
})

t.test('a runner stopped and restarted resumes from its checkpoint', async (t) => {
  const database = await freshDatabase(t)
  const store = testStore(t, database)
  const first = testRunner(t, database, store, [counterProjector()])
  first.start()
  await first.waitFor(await count(store, 's', ['1', '2']), 5000)
  await first.stop()
  await count(store, 's', ['3'])
  const second = testRunner(t, database, store, [counterProjector()])
  second.start()
  await second.waitFor(await count(store, 's', ['4']), 5000)
  t.same(await counterRows(database.db), [{ stream_name: 's', events: 4, total: '10' }])
})

t.test('rebuild replays the log into fresh tables equal to the live ones', async (t) => {
  const database = await freshDatabase(t)
  const store = testStore(t, database)
  const runner = testRunner(t, database, store, [counterProjector()])
  runner.start()
  let position = START
  for (let i = 0; i < 20; i++) position = await count(store, `s${i % 4}`, [`${i}.5`])
  await runner.waitFor(position, 5000)
  const live = await counterRows(database.db)

  t.test('while writes continue, the swap loses nothing', async (t) => {
    const writing = (async () => {
      for (let i = 0; i < 30; i++) position = await count(store, `s${i % 5}`, ['1'])
    })()
    const result = await rebuildProjection(database.db, store, counterProjector(), 5)
    await writing
    t.ok(result.events >= 20)
    await runner.waitFor(position, 5000)
    const afterSwap = await counterRows(database.db)
    t.equal(afterSwap.reduce((n, r) => n + r.events, 0), 50, 'every event counted exactly once')
  })
  t.test('a quiet rebuild gives identical rows', async (t) => {
    const before = await counterRows(database.db)
    await rebuildProjection(database.db, store, counterProjector())
    t.same(await counterRows(database.db), before)
    t.notSame(before, live, 'the rows did change since the first snapshot')
  })
})

t.test('a rebuild failing mid-replay (the next page already being read) fails whole: live rows untouched, nothing left dangling', async (t) => {
  const database = await freshDatabase(t)
  const store = testStore(t, database)
  const runner = testRunner(t, database, store, [counterProjector()])
  runner.start()
  let position = START
  for (let i = 0; i < 12; i++) position = await count(store, `s${i % 3}`, [`${i}`])
  await runner.waitFor(position, 5000)
  const live = await counterRows(database.db)
  let unhandled: unknown
  const onUnhandled = (reason: unknown) => (unhandled = reason)
  process.on('unhandledRejection', onUnhandled)
  t.teardown(() => void process.off('unhandledRejection', onUnhandled))
  // Pages of 2 events; the crash on amount 7 comes while the next page is being read, and that read
  // fails too (as when the database goes away): neither failure may escape unhandled.
  let crashed = false
  const failingReads: EventStore = {
    ...store,
    readAll: async (options) => {
      await new Promise((resolve) => setTimeout(resolve, 50))
      if (crashed) throw new Error('read after the crash')
      return store.readAll(options)
    },
  }
  const crashing = counterProjector({ failOn: (data) => (crashed = (data as { amount: string }).amount === '7') })
  await t.rejects(rebuildProjection(database.db, failingReads, crashing, 2), /simulated crash/)
  await new Promise((resolve) => setTimeout(resolve, 200))
  t.equal(unhandled, undefined, 'the failed prefetch is not an unhandled rejection')
  t.same(await counterRows(database.db), live)
  const result = await rebuildProjection(database.db, store, counterProjector(), 2)
  t.equal(result.events, 12, 'a retry replays every counted event')
  t.same(await counterRows(database.db), live)
})

t.test('a new projector version is rebuilt from the log on start', async (t) => {
  const database = await freshDatabase(t)
  const store = testStore(t, database)
  const v1 = testRunner(t, database, store, [counterProjector({ version: 1 })])
  v1.start()
  await v1.waitFor(await count(store, 's', ['1', '2']), 5000)
  await v1.stop()
  await tamperCounter(database.db)
  const v2 = testRunner(t, database, store, [counterProjector({ version: 2 })])
  v2.start()
  const position = await count(store, 's', ['3'])
  await eventually('the new version swapped in', async () => (await readCheckpoints(database.db))[0]?.version === 2 && !v2.rebuilds.has('counter'))
  await v2.waitFor(position, 5000)
  t.same(await counterRows(database.db), [{ stream_name: 's', events: 3, total: '6' }], 'rows recomputed, the tampered total is gone')
  t.equal((await readCheckpoints(database.db))[0]?.version, 2)
})

t.test('two runners on one database: one applies the unit, the other takes over when it stops', async (t) => {
  const database = await freshDatabase(t)
  const store = testStore(t, database)
  const a = testRunner(t, database, store, [counterProjector()], { leaderRetryMs: 100 })
  const b = testRunner(t, database, store, [counterProjector()], { leaderRetryMs: 100 })
  a.start()
  await a.waitFor(await count(store, 's', ['1']), 5000)
  b.start()
  // Its share of one unit is none or all, by the order of the two names: either way one applies it.
  await new Promise((r) => setTimeout(r, 500))
  t.equal(a.held.size + b.held.size, 1, 'one runner applies the unit')
  t.ok(a.isLeader && !b.isLeader, 'the first runner holds the scheduled processes\' lock')
  const [holder, other] = a.held.size ? [a, b] : [b, a]
  const position = await count(store, 's', ['2', '3'])
  await other.waitFor(position, 5000)
  t.pass('the other reads progress from its announcements and the checkpoint table')
  await holder.stop()
  const takeoverStarted = Date.now()
  const after = await count(store, 's', ['4'])
  await other.waitFor(after, 5000)
  const takeoverMs = Date.now() - takeoverStarted
  t.equal(other.held.size, 1, 'the other runner applies it')
  t.ok(takeoverMs < 2000, `took over within the bound (${takeoverMs} ms, lease 600 ms)`)
  t.same(await counterRows(database.db), [{ stream_name: 's', events: 4, total: '10' }], 'each event applied once')
})

t.test("a follower hears of each page the leader commits (NOTIFY), instead of polling for it", async (t) => {
  const database = await freshDatabase(t)
  const store = testStore(t, database)
  const counted = (notices: Notifications) => {
    const seen = { announced: 0, withinPage: 0, heard: 0 }
    const wrapped: Notifications = {
      ...notices,
      appended: (message) => (seen.announced++, notices.appended(message)),
      within: (message) => {
        const notice = notices.within(message)
        return { statement: notice.statement, committed: () => (seen.withinPage++, notice.committed()) }
      },
      subscribe: (listener) => notices.subscribe((message) => (seen.heard++, listener(message))),
    }
    onTeardown(t, () => notices.close())
    return { seen, wrapped }
  }
  const leader = counted(startNotifications(database.pool, CHECKPOINT_CHANNEL))
  const follower = counted(startNotifications(database.pool, CHECKPOINT_CHANNEL))
  const a = testRunner(t, database, store, [counterProjector()], { checkpointNotices: leader.wrapped })
  const b = testRunner(t, database, store, [counterProjector()], { checkpointNotices: follower.wrapped, applies: false })
  a.start()
  await a.waitFor(await count(store, 's', ['1']), 5000)
  b.start()
  t.equal(b.held.size, 0, 'the second runner applies nothing')
  for (const amount of ['2', '3', '4']) await b.waitFor(await count(store, 's', [amount]), 5000)
  t.ok(leader.seen.withinPage > 0, `the leader announced its pages in their own commits (${leader.seen.withinPage}; ${leader.seen.announced} NOTIFYs of their own)`)
  t.ok(follower.seen.heard > 0, `the follower heard them (${follower.seen.heard}) while its writes waited`)
  t.equal(follower.seen.announced + follower.seen.withinPage, 0, 'a follower announces nothing')
})

t.test('waitFor gives up with ProjectionLagError rather than serving a stale read', async (t) => {
  const database = await freshDatabase(t)
  const store = testStore(t, database)
  const runner = testRunner(t, database, store, [counterProjector()])
  const position = await count(store, 's', ['1'])
  await t.rejects(runner.waitFor(position, 100), ProjectionLagError)
})
