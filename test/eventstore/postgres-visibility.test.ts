/**
 * The hazard a bigserial-ordered log has: a transaction that took a lower position commits after
 * a higher one, and a reader that already moved past the higher one never sees it. Our reads stop
 * below the oldest open transaction instead; these tests hold a transaction open on purpose.
 */
import { randomUUID } from 'node:crypto'
import pg from 'pg'
import t from 'tap'
import { START } from '../../src/eventstore/event-store.ts'
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts'
import { freshDatabase } from '../helpers/db.ts'
import { eventually } from '../helpers/webhook-receiver.ts'
import { readAllAfter } from './contract.ts'

t.test('an append that commits late is delivered, not skipped', async (t) => {
  const { pool, url } = await freshDatabase(t)
  const store = createPostgresEventStore({ pool, pollIntervalMs: 50 })
  t.teardown(() => store.close())
  const slow = new pg.Client({ connectionString: url, application_name: 'slow-appender' })
  await slow.connect()
  t.teardown(() => slow.end())

  await slow.query('BEGIN')
  const { rows } = await slow.query<{ global_position: string }>(
    `INSERT INTO events (stream_name, stream_revision, event_id, event_type, schema_version, data, metadata)
     VALUES ('slow', 0, $1, 'Slow', 1, '{}', '{}') RETURNING global_position`, [randomUUID()])
  const fast = await store.appendToStream('fast', [{ type: 'Fast', data: {} }])
  t.ok(BigInt(rows[0]!.global_position) < fast.position.prepare, 'the slow event holds the lower sequence number')

  const whileOpen = await store.readAll({ after: START })
  t.same(whileOpen.events, [], 'the committed fast event is not readable past the open transaction')
  t.ok(whileOpen.moreHidden, 'the page says committed events are waiting')
  const lag = await store.visibilityLag()
  // The horizon is cluster-wide: an older transaction of a test file running beside this one may be the one named.
  t.ok(lag.hiddenEvents >= 1, 'the hidden event is counted')
  t.ok(lag.blocker?.application, `the blocking transaction is named (${lag.blocker?.application})`)

  const delivered: string[] = []
  const controller = new AbortController()
  const subscription = (async () => {
    for await (const e of store.subscribeToAll({ signal: controller.signal })) {
      delivered.push(e.type)
      if (delivered.length === 2) controller.abort()
    }
  })()
  await new Promise((r) => setTimeout(r, 200))
  t.same(delivered, [], 'the subscriber waits rather than skipping ahead')
  await slow.query('COMMIT')
  const timer = setTimeout(() => controller.abort(), 5000)
  await subscription
  clearTimeout(timer)
  t.same(delivered, ['Slow', 'Fast'], 'both arrive, in commit-visibility order')
  t.same((await readAllAfter(store, START)).map((e) => e.type), ['Slow', 'Fast'])
  t.same((await store.visibilityLag()).hiddenEvents, 0)
})

t.test('a long transaction that wrote nothing to the log still holds the horizon, visibly', async (t) => {
  const { pool, url } = await freshDatabase(t)
  const store = createPostgresEventStore({ pool })
  t.teardown(() => store.close())
  const other = new pg.Client({ connectionString: url, application_name: 'unrelated-batch-job' })
  await other.connect()
  t.teardown(() => other.end())
  await other.query('BEGIN')
  await other.query('CREATE TEMP TABLE scratch (x int)')
  await other.query('SELECT pg_current_xact_id()')
  await store.appendToStream('s', [{ type: 'E', data: {} }])
  await new Promise((r) => setTimeout(r, 150))
  // The horizon is cluster-wide: a test file running beside this one may briefly hold an older
  // transaction, so wait until ours is the oldest (theirs are short) before naming it.
  const lag = await eventually('our transaction to be the oldest', async () => {
    const reading = await store.visibilityLag()
    return reading.blocker?.application === 'unrelated-batch-job' && reading
  }, 10_000)
  t.equal(lag.hiddenEvents, 1)
  t.ok(lag.hiddenForMs >= 100, `hidden for ${lag.hiddenForMs} ms`)
  t.equal(lag.blocker?.application, 'unrelated-batch-job')
  await other.query('ROLLBACK')
  const after = await eventually('the event to be readable', async () => {
    const page = await store.readAll()
    return page.events.length > 0 && page
  }, 10_000)
  t.equal(after.events.length, 1, 'visible once the transaction ends')
})

t.test('an append in one process wakes subscribers of another through LISTEN/NOTIFY', async (t) => {
  const { pool, url } = await freshDatabase(t)
  const writer = createPostgresEventStore({ pool })
  t.teardown(() => writer.close())
  const otherPool = new pg.Pool({ connectionString: url, max: 2 })
  const reader = createPostgresEventStore({ pool: otherPool })
  t.teardown(async () => {
    await reader.close()
    await otherPool.end()
  })
  let woken = 0
  reader.onAppended(() => woken++)
  // The first wake-up comes from the listener connecting; wait for it, then count only NOTIFYs.
  for (let i = 0; i < 100 && woken === 0; i++) await new Promise((r) => setTimeout(r, 20))
  woken = 0
  await writer.appendToStream('s', [{ type: 'E', data: {} }])
  for (let i = 0; i < 100 && woken === 0; i++) await new Promise((r) => setTimeout(r, 20))
  t.ok(woken > 0, 'the other store was notified')
})
