/**
 * The event store contract: every adapter must pass it (postgres.test.ts, kurrentdb.test.ts).
 * Stream names are random so the suite can also run against a shared KurrentDB server.
 */
import { randomUUID } from 'node:crypto'
import type { Test } from 'tap'
import { START, WrongExpectedRevisionError, comparePositions } from '../../src/eventstore/event-store.ts'
import type { EventStore, Position, RecordedEvent } from '../../src/eventstore/event-store.ts'

export type StoreFactory = (t: Test) => Promise<EventStore>

const stream = (label: string) => `${label}-${randomUUID()}`
const event = (type: string, data: unknown = {}) => ({ type, data })

/** Reads the whole log after `after`, following `scannedTo` the way a subscriber does. */
export async function readAllAfter(store: EventStore, after: Position, eventTypes?: string[]): Promise<RecordedEvent[]> {
  const events: RecordedEvent[] = []
  let cursor = after
  for (;;) {
    const page = await store.readAll({ after: cursor, maxCount: 7, eventTypes })
    events.push(...page.events)
    cursor = page.scannedTo
    // Committed but hidden behind another open transaction (another test's database on this server): read on.
    if (page.isEnd && !page.moreHidden) return events
    if (page.isEnd) await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

async function headPosition(store: EventStore): Promise<Position> {
  let cursor = START
  for (;;) {
    const page = await store.readAll({ after: cursor, maxCount: 1000 })
    cursor = page.scannedTo
    if (page.isEnd) return cursor
  }
}

export function eventStoreContract(t: Test, makeStore: StoreFactory): void {
  t.test('append with expected revisions', async (t) => {
    const store = await makeStore(t)
    const s = stream('deal')

    t.test('no_stream creates the stream and refuses a second creation', async (t) => {
      const first = await store.appendToStream(s, [event('Created'), event('Renamed')], { expectedRevision: 'no_stream' })
      t.equal(first.nextExpectedRevision, 1n)
      await t.rejects(store.appendToStream(s, [event('Created')], { expectedRevision: 'no_stream' }), WrongExpectedRevisionError)
    })
    t.test('an exact revision appends only at the head', async (t) => {
      const next = await store.appendToStream(s, [event('Moved')], { expectedRevision: 1n })
      t.equal(next.nextExpectedRevision, 2n)
      const stale = await store.appendToStream(s, [event('Moved')], { expectedRevision: 1n }).catch((e: unknown) => e)
      t.type(stale, WrongExpectedRevisionError)
      t.equal((stale as WrongExpectedRevisionError).actual, 2n, 'the error names the actual revision')
      await t.rejects(store.appendToStream(s, [event('Moved')], { expectedRevision: 5n }), WrongExpectedRevisionError, 'ahead of the stream')
    })
    t.test('stream_exists refuses a missing stream; any accepts both', async (t) => {
      await t.rejects(store.appendToStream(stream('missing'), [event('X')], { expectedRevision: 'stream_exists' }), WrongExpectedRevisionError)
      t.equal((await store.appendToStream(s, [event('X')], { expectedRevision: 'stream_exists' })).nextExpectedRevision, 3n)
      t.equal((await store.appendToStream(s, [event('Y')])).nextExpectedRevision, 4n)
      t.equal((await store.appendToStream(stream('fresh'), [event('Y')], { expectedRevision: 'any' })).nextExpectedRevision, 0n)
    })
    t.test('an empty append is refused', async (t) => {
      await t.rejects(store.appendToStream(s, []), /at least one event/)
    })
  })

  t.test('guarded appends', async (t) => {
    const store = await makeStore(t)
    const pipeline = stream('pipeline')
    await store.appendToStream(pipeline, [event('PipelineCreated'), event('StageAdded')], { expectedRevision: 'no_stream' })
    const pipelineBefore = await store.readStream(pipeline)

    t.test('appends when the guard stream is at the guarded revision', async (t) => {
      const deal = stream('deal')
      const result = await store.appendToStream(deal, [event('DealCreated')], { expectedRevision: 'no_stream', guard: { streamName: pipeline, revision: 1n } })
      t.equal(result.nextExpectedRevision, 0n)
      t.same((await store.readStream(deal)).map((e) => e.type), ['DealCreated'])
      t.same((await store.readStream(deal)).at(-1)!.position, result.position, 'the position reported is the one recorded')
    })
    t.test('refuses, naming the guard stream, and writes nothing when the guard stream moved', async (t) => {
      const deal = stream('deal')
      await store.appendToStream(deal, [event('DealCreated')])
      for (const revision of [0n, 2n, 'no_stream'] as const) {
        const error = await store.appendToStream(deal, [event('DealMoved')], { guard: { streamName: pipeline, revision } }).catch((e: unknown) => e)
        t.type(error, WrongExpectedRevisionError, `guard at ${String(revision)}`)
        const wrong = error as WrongExpectedRevisionError
        t.equal(wrong.streamName, pipeline, 'the error names the guard stream')
        t.equal(wrong.expected, revision)
        t.equal(wrong.actual, 1n)
      }
      t.same((await store.readStream(deal)).map((e) => e.type), ['DealCreated'], 'nothing appended')
      const fresh = stream('deal')
      await t.rejects(store.appendToStream(fresh, [event('DealCreated')], { guard: { streamName: pipeline, revision: 0n } }), WrongExpectedRevisionError)
      t.same(await store.readStream(fresh), [], 'a refused guarded append creates no stream')
    })
    t.test("'no_stream' guards on an absent stream", async (t) => {
      const absent = stream('absent-pipeline')
      const deal = stream('deal')
      t.equal((await store.appendToStream(deal, [event('DealCreated')], { guard: { streamName: absent, revision: 'no_stream' } })).nextExpectedRevision, 0n)
      const error = await store.appendToStream(deal, [event('X')], { guard: { streamName: absent, revision: 0n } }).catch((e: unknown) => e)
      t.type(error, WrongExpectedRevisionError)
      t.equal((error as WrongExpectedRevisionError).actual, 'no_stream')
      t.same(await store.readStream(absent), [], 'the absent guard stream stays absent')
      await store.appendToStream(absent, [event('PipelineCreated')])
      await t.rejects(store.appendToStream(deal, [event('X')], { guard: { streamName: absent, revision: 'no_stream' } }), WrongExpectedRevisionError, 'no longer absent')
      t.equal((await store.appendToStream(deal, [event('X')], { guard: { streamName: absent, revision: 0n } })).nextExpectedRevision, 1n)
    })
    t.test('the guard and the expected revision are both checked', async (t) => {
      const deal = stream('deal')
      await store.appendToStream(deal, [event('DealCreated')])
      const error = await store.appendToStream(deal, [event('X')], { expectedRevision: 5n, guard: { streamName: pipeline, revision: 1n } }).catch((e: unknown) => e)
      t.type(error, WrongExpectedRevisionError)
      t.equal((error as WrongExpectedRevisionError).streamName, deal, 'the guard held; the appended stream did not')
      t.equal((await store.appendToStream(deal, [event('X')], { expectedRevision: 0n, guard: { streamName: pipeline, revision: 1n } })).nextExpectedRevision, 1n)
    })
    t.test('concurrent guarded appends against one guard all succeed', async (t) => {
      const deals = Array.from({ length: 6 }, () => stream('deal'))
      const results = await Promise.allSettled(deals.map((deal) => store.appendToStream(deal, [event('DealCreated')], { expectedRevision: 'no_stream', guard: { streamName: pipeline, revision: 1n } })))
      t.same(results.map((r) => r.status), deals.map(() => 'fulfilled'))
    })
    t.test('the guard stream is untouched', async (t) => {
      t.same(await store.readStream(pipeline), pipelineBefore)
    })
  })

  t.test('multi-stream appends', async (t) => {
    const store = await makeStore(t)
    const pipeline = stream('pipeline')
    await store.appendToStream(pipeline, [event('PipelineCreated')], { expectedRevision: 'no_stream' })

    t.test('appends to every stream at its expected revision; the answer is the latest position', async (t) => {
      const claim = stream('name_claim')
      const deal = stream('deal')
      const result = await store.appendToStreams([
        { streamName: claim, events: [event('NameClaimed')], expectedRevision: 'no_stream' },
        { streamName: deal, events: [event('DealCreated'), event('DealMoved')], expectedRevision: 'no_stream' },
      ], { guards: [{ streamName: pipeline, revision: 0n }] })
      const [claimed, created] = [await store.readStream(claim), await store.readStream(deal)]
      t.same(claimed.map((e) => e.type), ['NameClaimed'])
      t.same(created.map((e) => e.type), ['DealCreated', 'DealMoved'])
      t.equal(result.nextExpectedRevision, 1n, "the last write's next revision")
      t.same(result.position, created.at(-1)!.position)
      t.ok(comparePositions(claimed[0]!.position, created[0]!.position) < 0, 'in the order given')
    })
    t.test(`a refused write (expected revision or guard) ${store.kind === 'postgres' ? 'leaves every stream untouched: one transaction' : 'leaves the writes before it: KurrentDB has no multi-stream transaction'}`, async (t) => {
      const claim = stream('name_claim')
      const deal = stream('deal')
      await store.appendToStream(deal, [event('DealCreated')])
      const stale = await store.appendToStreams([
        { streamName: claim, events: [event('NameClaimed')], expectedRevision: 'no_stream' },
        { streamName: deal, events: [event('DealRenamed')], expectedRevision: 'no_stream' },
      ]).catch((e: unknown) => e)
      t.type(stale, WrongExpectedRevisionError)
      t.equal((stale as WrongExpectedRevisionError).streamName, deal, 'the error names the stream that moved')
      t.same((await store.readStream(claim)).map((e) => e.type), store.kind === 'postgres' ? [] : ['NameClaimed'])
      const guarded = stream('name_claim')
      await t.rejects(store.appendToStreams([
        { streamName: guarded, events: [event('NameClaimed')], expectedRevision: 'no_stream' },
        { streamName: stream('deal'), events: [event('DealCreated')], expectedRevision: 'no_stream' },
      ], { guards: [{ streamName: pipeline, revision: 5n }] }), WrongExpectedRevisionError)
      t.same(await store.readStream(guarded), [], 'a guard that moved refuses before anything is written')
      t.same((await store.readStream(deal)).map((e) => e.type), ['DealCreated'])
    })
    t.test('concurrent multi-stream appends over crossing streams neither deadlock nor lose a write', async (t) => {
      const [a, b] = [stream('a'), stream('b')]
      const writes = Array.from({ length: 8 }, (_, i) => (i % 2 ? [a, b] : [b, a]).map((streamName) => ({ streamName, events: [event(`E${i}`)], expectedRevision: 'any' as const })))
      await Promise.all(writes.map((w) => store.appendToStreams(w)))
      t.equal((await store.readStream(a)).length, 8)
      t.equal((await store.readStream(b)).length, 8)
    })
  })

  t.test('read a stream', async (t) => {
    const store = await makeStore(t)
    const s = stream('deal')
    const id = randomUUID()
    const appended = await store.appendToStream(s, [
      { type: 'Created', data: { name: 'Acme', amount: '10.50', nested: { list: [1, 'two', null] } }, metadata: { actorId: 'p1', orgId: 'o1', requestId: 'r1', correlationId: 'c1' }, schemaVersion: 2, id },
      event('Renamed', { name: 'Acme 2' }),
      event('Moved', { stage: 'PROPOSAL' }),
    ])
    const events = await store.readStream(s)
    t.same(events.map((e) => [e.type, e.revision]), [['Created', 0n], ['Renamed', 1n], ['Moved', 2n]])
    const created = events[0]!
    t.equal(created.id, id)
    t.equal(created.streamName, s)
    t.equal(created.schemaVersion, 2)
    t.same(created.data, { name: 'Acme', amount: '10.50', nested: { list: [1, 'two', null] } })
    t.match(created.metadata, { actorId: 'p1', orgId: 'o1', requestId: 'r1', correlationId: 'c1' })
    t.type(created.createdAt, Date)
    t.equal(events[1]!.schemaVersion, 1, 'schema version defaults to 1')
    t.same(events.at(-1)!.position, appended.position, 'the append reports the position of its last event')
    t.same((await store.readStream(s, { fromRevision: 1n, maxCount: 1 })).map((e) => e.type), ['Renamed'])
    t.same(await store.readStream(stream('missing')), [])
  })

  t.test('read all in order, after a position, by type', async (t) => {
    const store = await makeStore(t)
    const from = await headPosition(store)
    const a = stream('a')
    const b = stream('b')
    await store.appendToStream(a, [event('A1'), event('A2')])
    await store.appendToStream(b, [event('B1')])
    await store.appendToStream(a, [event('A3')])
    const mine = (events: RecordedEvent[]) => events.filter((e) => e.streamName === a || e.streamName === b)
    const all = mine(await readAllAfter(store, from))
    t.same(all.map((e) => e.type), ['A1', 'A2', 'B1', 'A3'])
    for (let i = 1; i < all.length; i++) t.ok(comparePositions(all[i - 1]!.position, all[i]!.position) < 0, 'positions increase')
    t.same(mine(await readAllAfter(store, all[1]!.position)).map((e) => e.type), ['B1', 'A3'], 'after is exclusive')
    t.same(mine(await readAllAfter(store, from, ['A3', 'B1'])).map((e) => e.type), ['B1', 'A3'], 'filtered by type')
    const filteredPage = await store.readAll({ after: from, eventTypes: ['NoSuchType'] })
    t.same(filteredPage.events, [])
    t.ok(comparePositions(filteredPage.scannedTo, all.at(-1)!.position) >= 0, 'a filtered page still reports how far it scanned')
    t.same(await store.lastPosition(), await headPosition(store), 'lastPosition is where reading all ends')
  })

  t.test('optimistic concurrency: concurrent writers at one revision, one wins', async (t) => {
    const store = await makeStore(t)
    const s = stream('hot')
    await store.appendToStream(s, [event('Created')], { expectedRevision: 'no_stream' })
    const results = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => store.appendToStream(s, [event('Edited', { i })], { expectedRevision: 0n })))
    t.equal(results.filter((r) => r.status === 'fulfilled').length, 1)
    t.ok(results.filter((r) => r.status === 'rejected').every((r) => (r as PromiseRejectedResult).reason instanceof WrongExpectedRevisionError))
    t.same((await store.readStream(s)).map((e) => e.revision), [0n, 1n])
  })

  t.test('concurrent appenders and a concurrent subscriber: no event missed or repeated', async (t) => {
    const store = await makeStore(t)
    const from = await headPosition(store)
    const writers = 8
    const appendsPerWriter = 40
    const expected = new Set<string>()
    const seen: RecordedEvent[] = []
    const controller = new AbortController()
    const prefix = `race-${randomUUID()}`
    const subscription = (async () => {
      for await (const e of store.subscribeToAll({ after: from, maxCount: 5, signal: controller.signal })) {
        if (!e.streamName.startsWith(prefix)) continue
        seen.push(e)
        if (seen.length === writers * appendsPerWriter * 2) controller.abort()
      }
    })()
    await Promise.all(
      Array.from({ length: writers }, async (_, w) => {
        for (let i = 0; i < appendsPerWriter; i++) {
          const ids = [randomUUID(), randomUUID()]
          ids.forEach((id) => expected.add(id))
          // Half the writers hit shared hot streams, so commits interleave and conflicts retry.
          const name = w % 2 ? `${prefix}-hot-${i % 3}` : `${prefix}-${w}-${i}`
          await store.appendToStream(name, ids.map((id) => ({ type: 'Raced', data: { w, i }, id })))
        }
      }),
    )
    const timeout = setTimeout(() => controller.abort(), 20_000)
    await subscription
    clearTimeout(timeout)
    const ids = seen.map((e) => e.id)
    t.equal(new Set(ids).size, ids.length, 'no duplicates')
    t.same(new Set(ids), expected, 'every appended event delivered')
    t.ok(seen.every((e, i) => i === 0 || comparePositions(seen[i - 1]!.position, e.position) < 0), 'delivered in position order')
    const reread = (await readAllAfter(store, from)).filter((e) => e.streamName.startsWith(prefix)).map((e) => e.id)
    t.same(reread, ids, 'a later full read gives the same order')
  })

  t.test('subscription catches up, then follows live appends', async (t) => {
    const store = await makeStore(t)
    const from = await headPosition(store)
    const s = stream('live')
    await store.appendToStream(s, [event('Old1'), event('Old2')])
    const controller = new AbortController()
    const received: string[] = []
    const done = (async () => {
      for await (const e of store.subscribeToAll({ after: from, signal: controller.signal })) {
        if (e.streamName !== s) continue
        received.push(e.type)
        if (received.length === 2) void store.appendToStream(s, [event('New1'), event('New2')])
        if (received.length === 4) controller.abort()
      }
    })()
    const timeout = setTimeout(() => controller.abort(), 10_000)
    await done
    clearTimeout(timeout)
    t.same(received, ['Old1', 'Old2', 'New1', 'New2'])
  })

  t.test('onAppended wakes listeners after an append', async (t) => {
    const store = await makeStore(t)
    let woken = 0
    const unsubscribe = store.onAppended(() => woken++)
    await store.appendToStream(stream('wake'), [event('X')])
    const deadline = Date.now() + 5000
    while (woken === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10))
    unsubscribe()
    t.ok(woken > 0)
  })
}
