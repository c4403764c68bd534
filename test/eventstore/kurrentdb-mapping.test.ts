import t from 'tap'
import { START } from '../../src/eventstore/event-store.ts'
import type { Position } from '../../src/eventstore/event-store.ts'
import {
  SCHEMA_VERSION_KEY,
  eventTypesRegex,
  isWanted,
  splitMetadata,
  toActualRevision,
  toReadAllPage,
  toReadPosition,
  toRecordedEvent,
  toStoredMetadata,
} from '../../src/eventstore/kurrentdb-mapping.ts'
import type { AllLogEvent } from '../../src/eventstore/kurrentdb-mapping.ts'

const at = (commit: bigint): Position => ({ commit, prepare: commit })
const created = new Date('2024-05-01T12:00:00.000Z')
const logEvent = (type: string, commit: bigint, extra: Partial<AllLogEvent> = {}): AllLogEvent => ({
  id: `id-${commit}`,
  type,
  streamId: 'deal-1',
  revision: 0n,
  created,
  data: { n: Number(commit) },
  metadata: { [SCHEMA_VERSION_KEY]: 1 },
  position: at(commit),
  ...extra,
})

t.test('positions', async (t) => {
  t.equal(toReadPosition(START), 'start', 'the port START is the client START')
  t.same(toReadPosition({ commit: 120n, prepare: 118n }), { commit: 120n, prepare: 118n })
})

t.test('metadata carries the schema version under a reserved key', async (t) => {
  const metadata = { actorId: 'p1', orgId: 'o1', correlationId: 'c1' }
  t.same(toStoredMetadata({ type: 'Created', data: {}, metadata, schemaVersion: 3 }), { ...metadata, $schemaVersion: 3 })
  t.same(toStoredMetadata({ type: 'Created', data: {} }), { $schemaVersion: 1 }, 'version 1 and empty metadata by default')
  t.same(splitMetadata(toStoredMetadata({ type: 'Created', data: {}, metadata, schemaVersion: 3 })), { metadata, schemaVersion: 3 }, 'round trip')
})

t.test('metadata written by other tools', async (t) => {
  for (const [label, stored] of [
    ['none', undefined],
    ['bytes', new Uint8Array([1, 2])],
    ['an array', [1]],
    ['a string', 'x'],
  ] as const) {
    t.same(splitMetadata(stored), { metadata: {}, schemaVersion: 1 }, label)
  }
  t.same(splitMetadata({ $correlationId: 'c', [SCHEMA_VERSION_KEY]: 'two' }), { metadata: { $correlationId: 'c' }, schemaVersion: 1 }, 'an invalid version reads as 1')
  t.same(splitMetadata({ [SCHEMA_VERSION_KEY]: 0 }).schemaVersion, 1)
})

t.test('recorded events', async (t) => {
  const event = toRecordedEvent(logEvent('Created', 7n, { revision: 4n, metadata: { actorId: 'p1', [SCHEMA_VERSION_KEY]: 2 } }))
  t.same(event, {
    id: 'id-7',
    type: 'Created',
    data: { n: 7 },
    metadata: { actorId: 'p1' },
    schemaVersion: 2,
    streamName: 'deal-1',
    revision: 4n,
    position: at(7n),
    createdAt: created,
  })
  const { position: _, ...withoutPosition } = logEvent('Created', 7n)
  t.throws(() => toRecordedEvent(withoutPosition), /Expected KurrentDB to report the \$all position of event id-7/)
})

t.test('the actual revision of a wrong expected version', async (t) => {
  t.equal(toActualRevision(3n), 3n)
  t.equal(toActualRevision(0n), 0n)
  t.equal(toActualRevision('no_stream'), 'no_stream')
  t.equal(toActualRevision(-1n), 'no_stream', 'older servers send -1')
  t.equal(toActualRevision(undefined), 'unknown')
})

t.test('event type filters', async (t) => {
  t.ok(isWanted('Created'))
  t.notOk(isWanted('$statsCollected'), 'system events never pass')
  t.notOk(isWanted('$>', ['$>']), 'not even when asked for')
  t.ok(isWanted('Moved', ['Created', 'Moved']))
  t.notOk(isWanted('Renamed', ['Created', 'Moved']))
  t.notOk(isWanted('Created', []))

  const regex = new RegExp(eventTypesRegex(['Deal.Created', 'Moved(v2)', 'a|b']))
  for (const type of ['Deal.Created', 'Moved(v2)', 'a|b']) t.ok(regex.test(type), `matches ${type}`)
  for (const type of ['DealxCreated', 'Deal.CreatedV2', 'xMoved(v2)', 'a', 'b', '$statsCollected']) t.notOk(regex.test(type), `does not match ${type}`)
})

t.test('readAll pages', async (t) => {
  const read = [logEvent('Created', 10n), logEvent('$metadata', 11n), logEvent('Moved', 12n), logEvent('Renamed', 13n)]

  t.test('the event at `after` is skipped: fromPosition is inclusive', async (t) => {
    const page = toReadAllPage(read, at(10n), 3)
    t.same(page.events.map((e) => e.type), ['Moved', 'Renamed'], 'system events are dropped')
    t.same(page.scannedTo, at(13n))
    t.equal(page.isEnd, false, 'maxCount + 1 events read: the log may go on')
    t.equal(page.moreHidden, false)
  })
  t.test('a short read is the end', async (t) => {
    const page = toReadAllPage(read.slice(0, 3), at(10n), 3)
    t.same(page.events.map((e) => e.type), ['Moved'])
    t.equal(page.isEnd, true)
  })
  t.test('from START nothing is skipped and the page stops at maxCount', async (t) => {
    const page = toReadAllPage(read, START, 3)
    t.same(page.events.map((e) => e.type), ['Created', 'Moved'])
    t.same(page.scannedTo, at(12n), 'the fourth event was read only to tell whether the log goes on')
    t.equal(page.isEnd, false)
  })
  t.test('filtered-out events still move scannedTo', async (t) => {
    const page = toReadAllPage(read, START, 10, ['NoSuchType'])
    t.same(page.events, [])
    t.same(page.scannedTo, at(13n))
    t.equal(page.isEnd, true)
  })
  t.test('nothing read', async (t) => {
    t.same(toReadAllPage([], at(13n), 10), { events: [], scannedTo: at(13n), isEnd: true, moreHidden: false })
    t.same(toReadAllPage([logEvent('Renamed', 13n)], at(13n), 10).scannedTo, at(13n), 'only the event at `after`')
  })
})
