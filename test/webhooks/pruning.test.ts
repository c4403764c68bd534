import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import t from 'tap'
import { createWebhookDispatcher } from '../../src/webhooks/dispatcher.ts'
import { pruneDeliveries } from '../../src/webhooks/pruning.ts'
import { recordDelivery } from '../../src/webhooks/store.ts'
import type { DeliveryStatus } from '../../src/webhooks/store.ts'
import { onTeardown } from '../helpers/cleanup.ts'
import { freshDatabase } from '../helpers/db.ts'
import { webhooksProjector } from '../../src/projections/webhook/webhooks.ts'
import { silentLogger, testRunner, testStore } from '../helpers/runner.ts'

const NOW = new Date('2026-11-22T09:00:00Z')
const DAY = 86_400_000

t.test('the delivery log is pruned: newest N per webhook, nothing older than D days, pending kept', async (t) => {
  const database = await freshDatabase(t)
  const { db } = database
  const org = randomUUID()
  let revision = 0
  /** A delivery attempt of `webhookId`, `ageDays` old. */
  const delivery = async (webhookId: string, ageDays: number, status: DeliveryStatus = 'failed') => {
    const event = { id: randomUUID(), type: 'TagCreated', streamName: 'tag-x', revision: BigInt(revision), position: { commit: 1n, prepare: BigInt(revision++) } }
    const row = await recordDelivery(db, { id: randomUUID(), webhookId, orgId: org, event, kind: status === 'pending' ? 'redelivery' : 'delivery', attempt: 1, status })
    await sql`UPDATE webhook_deliveries SET created_at = ${new Date(NOW.getTime() - ageDays * DAY)} WHERE id = ${row.id}`.execute(db)
    return row.id
  }
  const remaining = async (webhookId: string) => (await sql<{ id: string }>`SELECT id FROM webhook_deliveries WHERE webhook_id = ${webhookId} ORDER BY seq`.execute(db)).rows.map((r) => r.id)
  const pruneAll = async (policy: Parameters<typeof pruneDeliveries>[1]) => {
    const batches: number[] = []
    for (let n = -1; n !== 0; ) batches.push((n = await pruneDeliveries(db, policy, NOW)))
    return batches
  }

  const busy = randomUUID()
  const quiet = randomUUID()
  const busyRows: string[] = []
  for (let i = 0; i < 8; i++) busyRows.push(await delivery(busy, 8 - i))
  const queued = await delivery(busy, 9, 'pending')
  const quietRows = [await delivery(quiet, 1), await delivery(quiet, 0)]

  t.test('keep: the newest N of each webhook, in batches', async (t) => {
    t.same(await pruneAll({ keep: 4, keepDays: 0, batchSize: 2, everyMs: 0 }), [2, 2, 0], 'small batches')
    t.same(await remaining(busy), [...busyRows.slice(4), queued], 'the 4 newest and the queued redelivery (never pruned)')
    t.same(await remaining(quiet), quietRows, 'a webhook under the limit keeps everything')
  })

  t.test('keepDays: nothing older than D days', async (t) => {
    t.same(await pruneAll({ keep: 0, keepDays: 2, batchSize: 10, everyMs: 0 }), [2, 0])
    t.same(await remaining(busy), [...busyRows.slice(6), queued], 'only deliveries from the last 2 days, and the queued one')
    t.same(await remaining(quiet), quietRows)
  })

  t.test('both limits off: nothing is deleted', async (t) => {
    t.same(await pruneAll({ keep: 0, keepDays: 0, batchSize: 10, everyMs: 0 }), [0])
  })

  t.test('the delivery worker prunes on its own, periodically', async (t) => {
    const store = testStore(t, database)
    // The worker lists subscriptions from the webhooks read model: its table must exist.
    const runner = testRunner(t, database, store, [webhooksProjector])
    runner.start()
    await runner.waitFor((await store.appendToStream('probe-1', [{ type: 'Probed', data: {} }])).position, 10_000)
    const dispatcher = createWebhookDispatcher({ db, store, logger: silentLogger, clock: () => NOW, pollMs: 20, leaderRetryMs: 20, prune: { keep: 1, batchSize: 1, everyMs: 20 } })
    dispatcher.start()
    onTeardown(t, () => dispatcher.stop())
    const deadline = Date.now() + 10_000
    const pruned = async () => (await remaining(quiet)).length === 1 && (await remaining(busy)).length === 1
    while (!(await pruned()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
    t.same(await remaining(quiet), quietRows.slice(1), 'the newest one')
    t.same(await remaining(busy), [queued], 'the newest one: the queued redelivery, which the worker has completed meanwhile (its webhook does not exist)')
  })
})
