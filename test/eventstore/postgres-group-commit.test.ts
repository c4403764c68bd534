/**
 * Group commit (issue 20): the appends one store receives in the same turn of the event loop, or
 * while a batch is in flight, go to PostgreSQL as one statement and commit as one transaction
 * (they share the commit part of their positions), yet each keeps its own outcome.
 */
import pg from 'pg'
import t from 'tap'
import type { Test } from 'tap'
import { WrongExpectedRevisionError } from '../../src/eventstore/event-store.ts'
import type { AppendResult, EventStore } from '../../src/eventstore/event-store.ts'
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts'
import { freshDatabase } from '../helpers/db.ts'

const event = (type: string, data: unknown = {}) => ({ type, data })

async function setUp(t: Test): Promise<{ store: EventStore; pool: pg.Pool; url: string }> {
  const { pool, url } = await freshDatabase(t, { poolSize: 12 })
  const store = createPostgresEventStore({ pool, pollIntervalMs: 100 })
  t.teardown(() => store.close())
  return { store, pool, url }
}

const fulfilled = (results: PromiseSettledResult<AppendResult>[]) => results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []))
const commits = (results: AppendResult[]) => new Set(results.map((r) => r.position.commit))

t.test('in one batch, a failed expectation, a failed guard and a failed statement fail only their own appends', async (t) => {
  const { store } = await setUp(t)
  await store.appendToStream('taken', [event('Created')])
  await store.appendToStream('pipeline', [event('PipelineCreated'), event('StageAdded')])
  // Called in one turn of the event loop: one batch.
  const results = await Promise.allSettled([
    store.appendToStream('deal-1', [event('DealCreated')], { expectedRevision: 'no_stream' }),
    store.appendToStream('taken', [event('Created')], { expectedRevision: 'no_stream' }),
    store.appendToStream('deal-2', [event('DealCreated')], { guard: { streamName: 'pipeline', revision: 1n } }),
    store.appendToStream('deal-3', [event('DealCreated')], { guard: { streamName: 'pipeline', revision: 0n } }),
    store.appendToStream('deal-4', [{ ...event('DealCreated'), id: 'not a uuid' }]),
    store.appendToStreams([
      { streamName: 'name-claim', events: [event('NameClaimed')], expectedRevision: 'no_stream' },
      { streamName: 'deal-5', events: [event('DealCreated')], expectedRevision: 'no_stream' },
    ]),
  ])
  t.same(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled', 'rejected', 'rejected', 'fulfilled'])
  t.match((results[1] as PromiseRejectedResult).reason, { name: 'WrongExpectedRevisionError', streamName: 'taken', expected: 'no_stream', actual: 0n }, 'the failed expectation names its stream and revision')
  t.match((results[3] as PromiseRejectedResult).reason, { name: 'WrongExpectedRevisionError', streamName: 'pipeline', expected: 0n, actual: 1n }, 'the failed guard names its stream and revision')
  t.match((results[4] as PromiseRejectedResult).reason, { code: '22P02' }, 'a statement error is its own append\'s')
  t.equal(commits(fulfilled(results)).size, 1, 'the appends that succeeded committed in one transaction')
  for (const stream of ['deal-1', 'deal-2', 'name-claim', 'deal-5']) t.equal((await store.readStream(stream)).length, 1, `${stream} holds its event`)
  for (const stream of ['deal-3', 'deal-4']) t.same(await store.readStream(stream), [], `${stream} holds nothing`)
  t.equal((await store.readStream('taken')).length, 1, 'the refused append wrote nothing')
})

t.test('two appends to one stream in one batch behave as if one after the other', async (t) => {
  const { store } = await setUp(t)
  const results = await Promise.allSettled([
    store.appendToStream('deal', [event('Created')], { expectedRevision: 'no_stream' }),
    store.appendToStream('deal', [event('Renamed'), event('Moved')], { expectedRevision: 0n }),
    store.appendToStream('deal', [event('Created')], { expectedRevision: 'no_stream' }),
    store.appendToStream('deal', [event('Noted')]),
    store.appendToStream('other', [event('E')], { guard: { streamName: 'deal', revision: 3n } }),
  ])
  t.same(results.map((r) => r.status), ['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled'])
  t.same(fulfilled(results).map((r) => r.nextExpectedRevision), [0n, 2n, 3n, 0n], 'each saw the ones before it')
  t.match((results[2] as PromiseRejectedResult).reason, { streamName: 'deal', expected: 'no_stream', actual: 2n }, 'the second creation finds the stream the batch already wrote')
  const positions = fulfilled(results).map((r) => r.position.prepare)
  t.same(positions, [...positions].sort((a, b) => (a < b ? -1 : 1)), 'positions follow the order of the calls')
  t.same((await store.readStream('deal')).map((e) => e.type), ['Created', 'Renamed', 'Moved', 'Noted'])
})

t.test('concurrent appends share transactions, batches of at most 64, and wake listeners once per batch', async (t) => {
  const { store } = await setUp(t)
  let wakeups = 0
  store.onAppended(() => wakeups++)
  const results = await Promise.all(Array.from({ length: 100 }, (_, i) => store.appendToStream(`deal-${i}`, [event('DealCreated')], { expectedRevision: 'no_stream' })))
  const transactions = commits(results).size
  t.ok(transactions >= 2 && transactions <= 10, `100 appends in ${transactions} transactions`)
  // Plus, perhaps, the one the listening connection gives once it listens.
  t.ok(wakeups <= transactions + 1, `${wakeups} wake-ups: one per transaction`)
  const perCommit = new Map<bigint, number>()
  for (const r of results) perCommit.set(r.position.commit, (perCommit.get(r.position.commit) ?? 0) + 1)
  t.ok(Math.max(...perCommit.values()) <= 64, 'no batch beyond 64 appends')
})

t.test('appends to one stream at exact revisions from two processes: exactly one wins each revision', async (t) => {
  const { store, pool } = await setUp(t)
  const other = createPostgresEventStore({ pool, pollIntervalMs: 100 })
  t.teardown(() => other.close())
  await store.appendToStream('hot', [event('Created')])
  for (let revision = 0n; revision < 20n; revision++) {
    const results = await Promise.allSettled([store, other, store, other].map((s, i) => s.appendToStream('hot', [event(`E${i}`)], { expectedRevision: revision })))
    t.equal(fulfilled(results).length, 1, `one append wins revision ${revision}`)
    for (const r of results) if (r.status === 'rejected') t.type(r.reason, WrongExpectedRevisionError)
  }
  t.equal((await store.readStream('hot')).length, 21)
})

t.test('PostgreSQL releases the advisory locks a rolled-back subtransaction took, and keeps its parent\'s', async (t) => {
  const { url } = await setUp(t)
  const [holder, probe] = [new pg.Client(url), new pg.Client(url)]
  await Promise.all([holder.connect(), probe.connect()])
  t.teardown(() => Promise.all([holder.end(), probe.end()]))
  const free = async (key: number) => {
    const { rows } = await probe.query<{ free: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS free', [key])
    return rows[0]!.free
  }
  await holder.query('BEGIN')
  await holder.query('SELECT pg_advisory_xact_lock(1)')
  // What crm_append_batch does for a failed append: its block's subtransaction rolls back.
  await holder.query(`DO $$ BEGIN
      PERFORM pg_advisory_xact_lock(1); PERFORM pg_advisory_xact_lock(2);
      RAISE EXCEPTION 'the append fails';
    EXCEPTION WHEN OTHERS THEN NULL;
    END $$`)
  t.equal(await free(2), true, 'the lock taken only in the subtransaction is released')
  t.equal(await free(1), false, 'the lock the transaction held before is still held')
  await holder.query('COMMIT')
})
