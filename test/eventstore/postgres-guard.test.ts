/**
 * Guarded appends in PostgreSQL: a guarded append holds its guard stream's advisory lock shared
 * from its guard check to its commit, and every append takes its own stream's lock exclusive before
 * it gets a transaction id. These tests hold locks and transactions open on purpose to show the
 * interleavings: an append to the guard stream waits for the guarded appends in flight, and those
 * that come after it see it. The appends that interleave come from two stores on one database, as
 * two server processes would: one store sends its appends in batches, one batch at a time
 * (postgres-group-commit.ts), so within a process a later append waits for the batch in flight
 * instead of racing it.
 */
import { randomUUID } from 'node:crypto'
import pg from 'pg'
import t from 'tap'
import type { Test } from 'tap'
import { WrongExpectedRevisionError, comparePositions } from '../../src/eventstore/event-store.ts'
import type { AppendResult, EventStore } from '../../src/eventstore/event-store.ts'
import { createPostgresEventStore, streamLockKey } from '../../src/eventstore/postgres.ts'
import { freshDatabase } from '../helpers/db.ts'

const event = (type: string) => ({ type, data: {} })

async function setUp(t: Test): Promise<{ store: EventStore; other: EventStore; pool: pg.Pool; holder: pg.Client }> {
  const { pool, url } = await freshDatabase(t, { poolSize: 12 })
  const store = createPostgresEventStore({ pool, pollIntervalMs: 100 })
  t.teardown(() => store.close())
  // Another process's store: its own group committer.
  const other = createPostgresEventStore({ pool, pollIntervalMs: 100 })
  t.teardown(() => other.close())
  const holder = new pg.Client({ connectionString: url, application_name: 'lock-holder' })
  await holder.connect()
  t.teardown(() => holder.end())
  return { store, other, pool, holder }
}

/** Backends of this database waiting for a lock of the given type, with their transaction ids (null: none assigned yet). */
async function lockWaiters(pool: pg.Pool, locktype: 'advisory' | 'transactionid'): Promise<{ pid: number; xid: string | null }[]> {
  const { rows } = await pool.query<{ pid: number; xid: string | null }>(
    `SELECT l.pid, a.backend_xid::text AS xid FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
     WHERE NOT l.granted AND l.locktype = $1 AND a.datname = current_database()`,
    [locktype],
  )
  return rows
}

async function waitForWaiters(pool: pg.Pool, locktype: 'advisory' | 'transactionid', count: number): Promise<{ pid: number; xid: string | null }[]> {
  const deadline = Date.now() + 5000
  for (;;) {
    const waiters = await lockWaiters(pool, locktype)
    if (waiters.length >= count) return waiters
    if (Date.now() > deadline) throw new Error(`Expected ${count} backends waiting for ${locktype} locks, found ${waiters.length}`)
    await new Promise((r) => setTimeout(r, 10))
  }
}

/** Tracks whether a promise has settled, without turning its rejection into an unhandled one. */
function track<T>(promise: Promise<T>): { promise: Promise<T>; settled: () => boolean } {
  let done = false
  promise.then(
    () => (done = true),
    () => (done = true),
  )
  return { promise, settled: () => done }
}

t.test('an append to the guard stream waits while a guarded append holds the guard lock, and gets its transaction id only once it has its own lock', async (t) => {
  const { store, other, pool, holder } = await setUp(t)
  await store.appendToStream('pipeline', [event('PipelineCreated')])
  // What a guarded append holds between its guard check and its commit.
  await holder.query('BEGIN')
  await holder.query(`SELECT pg_advisory_xact_lock_shared(${streamLockKey('$1::text')})`, ['pipeline'])

  const pipelineAppend = track(store.appendToStream('pipeline', [event('StageRemoved')], { expectedRevision: 0n }))
  const [waiter] = await waitForWaiters(pool, 'advisory', 1)
  t.equal(waiter!.xid, null, 'the waiting append has no transaction id yet')
  const unrelated = await other.appendToStream('elsewhere', [event('Unrelated')])
  await new Promise((r) => setTimeout(r, 100))
  t.notOk(pipelineAppend.settled(), 'the append to the guard stream is still waiting')

  await holder.query('COMMIT')
  const appended = await pipelineAppend.promise
  t.equal(appended.nextExpectedRevision, 1n, 'it proceeds once the lock is released')
  t.ok(comparePositions(unrelated.position, appended.position) < 0, 'an append committed while it waited precedes it: its transaction id was assigned after the wait')
})

t.test('a guarded append whose guard revision is overtaken while it waits fails and writes nothing', async (t) => {
  const { store, other, pool, holder } = await setUp(t)
  await store.appendToStream('pipeline', [event('PipelineCreated')])
  await holder.query('BEGIN')
  await holder.query(`SELECT pg_advisory_xact_lock_shared(${streamLockKey('$1::text')})`, ['pipeline'])

  const pipelineAppend = track(store.appendToStream('pipeline', [event('StageRemoved')], { expectedRevision: 0n }))
  await waitForWaiters(pool, 'advisory', 1)
  // Decided against revision 0; queues behind the exclusive request rather than slipping in before it.
  const guarded = track(other.appendToStream('deal-1', [event('DealMovedToStage')], { guard: { streamName: 'pipeline', revision: 0n } }))
  await waitForWaiters(pool, 'advisory', 2)
  await new Promise((r) => setTimeout(r, 50))
  t.notOk(guarded.settled(), 'the guarded append waits behind the append to its guard stream')

  await holder.query('COMMIT')
  t.equal((await pipelineAppend.promise).nextExpectedRevision, 1n)
  const error = await guarded.promise.catch((e: unknown) => e)
  t.type(error, WrongExpectedRevisionError)
  t.match(error, { streamName: 'pipeline', expected: 0n, actual: 1n })
  t.same(await store.readStream('deal-1'), [], 'nothing was appended')
  t.same((await store.readStream('pipeline')).map((e) => e.type), ['PipelineCreated', 'StageRemoved'], 'the guard stream holds only its own events')
})

t.test('an append to the guard stream waits for a guarded append in flight, which commits first and precedes it in the log', async (t) => {
  const { store, other, pool, holder } = await setUp(t)
  await store.appendToStream('pipeline', [event('PipelineCreated')])
  // An uncommitted row at deal-1 revision 0 (written past the locks) stalls the guarded append's
  // insert after its guard check, with the guard lock held.
  await holder.query('BEGIN')
  await holder.query(`INSERT INTO events (stream_name, stream_revision, event_id, event_type, schema_version, data, metadata)
    VALUES ('deal-1', 0, $1, 'Blocker', 1, '{}', '{}')`, [randomUUID()])
  const guarded = track(store.appendToStream('deal-1', [event('DealCreated')], { guard: { streamName: 'pipeline', revision: 0n } }))
  await waitForWaiters(pool, 'transactionid', 1)

  const pipelineAppend = track(other.appendToStream('pipeline', [event('StageRemoved')]))
  await waitForWaiters(pool, 'advisory', 1)
  await new Promise((r) => setTimeout(r, 50))
  t.notOk(pipelineAppend.settled(), 'the append to the guard stream waits for the guarded append')

  await holder.query('ROLLBACK')
  const deal = await guarded.promise
  const pipeline = await pipelineAppend.promise
  t.equal(deal.nextExpectedRevision, 0n, 'the guarded append commits, its guard still valid')
  t.ok(comparePositions(deal.position, pipeline.position) < 0, 'and precedes the append to its guard stream in the log')
})

t.test('guarded appends sharing a guard stream do not wait for each other', async (t) => {
  const { store, holder } = await setUp(t)
  await store.appendToStream('pipeline', [event('PipelineCreated')])
  // Another guarded append in flight holds the same guard lock shared: no one here waits for it.
  await holder.query('BEGIN')
  await holder.query(`SELECT pg_advisory_xact_lock_shared(${streamLockKey('$1::text')})`, ['pipeline'])
  const deals = Array.from({ length: 10 }, (_, i) => `deal-${i}`)
  const appends = Promise.allSettled(deals.map((deal) => store.appendToStream(deal, [event('DealCreated')], { expectedRevision: 'no_stream', guard: { streamName: 'pipeline', revision: 0n } })))
  const results = await Promise.race([appends, new Promise<'blocked'>((r) => setTimeout(() => r('blocked'), 5000))])
  await holder.query('COMMIT')
  t.not(results, 'blocked', 'none waits for the shared lock held elsewhere')
  if (results !== 'blocked') t.same(results.map((r) => r.status), deals.map(() => 'fulfilled'), 'all succeed while the shared lock is held elsewhere')
  t.same((await store.readStream('pipeline')).length, 1, 'the guard stream is untouched')
})

t.test('racing an append to the guard stream: no guarded append expecting the old revision commits after it', async (t) => {
  const { store, other } = await setUp(t)
  const outcomes = { before: 0, refused: 0 }
  for (let round = 0; round < 10; round++) {
    const pipeline = `pipeline-${round}`
    await store.appendToStream(pipeline, [event('PipelineCreated')])
    const guardedAppends = Array.from({ length: 16 }, (_, i) =>
      store.appendToStream(`deal-${round}-${i}`, [event('DealMoved')], { guard: { streamName: pipeline, revision: 0n } }),
    )
    const removal = other.appendToStream(pipeline, [event('StageRemoved')], { expectedRevision: 0n })
    const [removed, ...results] = await Promise.allSettled([removal, ...guardedAppends])
    if (removed!.status !== 'fulfilled') throw removed!.reason
    const cut = removed!.value.position
    for (const result of results) {
      if (result.status === 'fulfilled') {
        outcomes.before++
        t.ok(comparePositions((result.value as AppendResult).position, cut) < 0, `round ${round}: a committed guarded append precedes the removal`)
      } else {
        outcomes.refused++
        t.match(result.reason, { name: 'WrongExpectedRevisionError', streamName: pipeline, expected: 0n, actual: 1n }, `round ${round}: a late guarded append is refused`)
      }
    }
  }
  t.comment(`${outcomes.before} guarded appends committed before the removal, ${outcomes.refused} were refused after it`)
})

t.test('crossed guards (A guarded by B while B is guarded by A) never deadlock', async (t) => {
  const { store } = await setUp(t)
  await store.appendToStream('a', [event('Created')])
  await store.appendToStream('b', [event('Created')])
  let committed = 0
  for (let round = 0; round < 30; round++) {
    const headA = (await store.readStream('a')).at(-1)!.revision
    const headB = (await store.readStream('b')).at(-1)!.revision
    const results = await Promise.allSettled([
      store.appendToStream('a', [event('E')], { guard: { streamName: 'b', revision: headB } }),
      store.appendToStream('b', [event('E')], { guard: { streamName: 'a', revision: headA } }),
      store.appendToStream('a', [event('Self')], { guard: { streamName: 'a', revision: headA } }),
    ])
    for (const r of results) {
      if (r.status === 'fulfilled') committed++
      else if (!(r.reason instanceof WrongExpectedRevisionError)) throw r.reason
    }
  }
  t.ok(committed >= 30, `every round committed at least one append (${committed} in all), and no error but guard conflicts`)
})
