import { randomUUID } from 'node:crypto'
import t from 'tap'
import type { Test } from 'tap'
import { z } from 'zod'
import { EVENT_CATALOGUE } from '../../src/events/catalogue.ts'
import type { EventStore, NewEvent } from '../../src/eventstore/event-store.ts'
import { createKurrentDbEventStore } from '../../src/eventstore/kurrentdb.ts'
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts'
import { MODULES, allProjectors } from '../../src/modules/modules.ts'
import { erasesSubjects, holdsNoPersonalData, holdsNone } from '../../src/projections/privacy/erasing.ts'
import type { Projector } from '../../src/projections/kernel/projector.ts'
import { ERASED, READ_MODEL_ERASED, SEALED, newDataKey, presentErased, sealData, unsealData } from '../../src/privacy/seal.ts'
import { cataloguedPersonalSpecs } from '../../src/privacy/personal-specs.ts'
import { sealingStore } from '../../src/privacy/sealing-store.ts'
import type { SealingStore } from '../../src/privacy/sealing-store.ts'
import { subjectKeys } from '../../src/privacy/subject-keys.ts'
import { TEST_MASTER_KEYS, keyWrapping, rewrapSubjectKeys } from '../../src/privacy/master-key.ts'
import { eventStoreContract, readAllAfter } from '../eventstore/contract.ts'
import { START } from '../../src/eventstore/event-store.ts'
import { freshDatabase } from '../helpers/db.ts'
import type { TestDatabase } from '../helpers/db.ts'

/**
 * Issue 31: personal fields declared per event type, sealed above the store port with a key per
 * person, unsealed on every read, and read as "[erased]" once the key is destroyed.
 */

t.test('every catalogued event type declares its personal fields', async (t) => {
  const undeclared = EVENT_CATALOGUE.filter((definition) => definition.personal === undefined).map((definition) => definition.type)
  t.same(undeclared, [], 'each declares `personal` (`[]` when it holds none; docs/personal-data.md)')
  const subjects = new Set(MODULES.flatMap((module) => module.subjects ?? []))
  for (const { type, stream, personal, subject, data } of EVENT_CATALOGUE) {
    if (!personal?.length) continue
    t.ok(subject || subjects.has(stream), `${type}: on a person's stream (a manifest's \`subjects\`) or naming its subject`)
    const shape = (data as z.ZodObject).shape
    const unknown = personal.filter((path) => !(path.split('.')[0]! in shape))
    t.same(unknown, [], `${type}: its personal paths are fields of its data`)
  }
  t.ok(subjects.has('contact') && subjects.has('lead'), 'contacts and leads are people')
})

const wrapping = keyWrapping(TEST_MASTER_KEYS)

/** The event types of the catalogue that declare personal fields: what a read model consuming them can hold. */
const personalTypes = new Set(EVENT_CATALOGUE.filter((definition) => definition.personal?.length).map((definition) => definition.type))
const canHoldPersonalData = (projector: Projector) => projector.eventTypes.filter((type) => personalTypes.has(type))

t.test('every read model that can hold a personal field handles erasures', async (t) => {
  const holders = allProjectors.filter((projector) => canHoldPersonalData(projector).length > 0)
  t.ok(holders.length >= 5, `read models consuming personal events: ${holders.map((p) => p.name).join(', ')}`)
  const handles = (projector: Projector) => erasesSubjects(projector) || holdsNone(projector)
  for (const projector of holders) {
    t.ok(handles(projector), `${projector.name} consumes ${canHoldPersonalData(projector).join(', ')}: it must handle SubjectErased (withErasure) or declare that it keeps none of their fields (holdsNoPersonalData, src/projections/privacy/erasing.ts)`)
    if (erasesSubjects(projector)) t.ok(projector.eventTypes.includes('SubjectErased'), `${projector.name} reads the erasure event`)
    if (holdsNone(projector)) t.ok(projector.holdsNone.trim(), `${projector.name} says why it holds none`)
  }
  t.ok(holders.some(holdsNone), 'a declaration stands in for a handler with nothing to blank (case_mail_messages)')
  const plain: Projector = { name: 'plain', version: 1, eventTypes: ['ContactCreated'], tables: [], createTables: async () => {}, apply: async () => {} }
  t.equal(canHoldPersonalData(plain).length > 0 && !handles(plain), true, 'a read model of contacts without a handler is caught')
  t.ok(handles(holdsNoPersonalData(plain, 'ids only')), 'the same, declared to keep none of their fields, passes')
})

t.test('sealing one event: a box under the subject key, opened only with it, erased without it', async (t) => {
  const key = newDataKey()
  const data = { first_name: 'Ada', last_name: null, changes: { email: { from: null, to: 'ada@example.test' } }, amount: '10.00', at: '2026-11-22T09:00:00Z' }
  const fields = ['first_name', 'last_name', 'changes.email.from', 'changes.email.to']
  const sealed = sealData(data, fields, key, 'contact-1') as Record<string, unknown>
  t.notMatch(JSON.stringify(sealed), /Ada|ada@example/, 'no personal value in clear')
  t.match(sealed, { last_name: null, amount: '10.00', at: data.at, [SEALED]: { fields: ['first_name', 'changes.email.to'], box: String } }, 'nulls, amounts and dates stay in clear')
  t.equal(data.first_name, 'Ada', "the caller's object is left alone")
  t.same(unsealData(sealed, fields, key, 'contact-1'), data, 'the key opens it')
  t.same(unsealData(sealed, fields, null, 'contact-1'), { ...data, first_name: ERASED, changes: { email: { from: null, to: ERASED } } }, 'a destroyed key: erased, never an exception')
  t.same((unsealData(sealed, fields, key, 'contact-2') as { first_name: unknown }).first_name, ERASED, "another person's subject does not open it")
  t.same(unsealData(data, fields, null, 'contact-1'), { ...data, first_name: ERASED, changes: { email: { from: null, to: ERASED } } }, 'plain (older) fields of an erased person read erased too')
  t.same(sealData(data, fields, null, 'contact-1'), { ...data, first_name: ERASED, changes: { email: { from: null, to: ERASED } } }, 'writing for an erased person keeps nothing')
  t.same(JSON.parse(JSON.stringify(unsealData(sealed, fields, null, 'contact-1'))).first_name, { erased: true }, 'the typed tombstone, as the log\'s readers serialize it')
  const written = sealData(data, fields, null, 'contact-1')
  t.same(unsealData(written, fields, null, 'contact-1'), written, 'what was written as erased reads erased')
  const presented = presentErased(unsealData(sealed, fields, null, 'contact-1'))
  t.same(presented, { ...data, first_name: READ_MODEL_ERASED, changes: { email: { from: null, to: READ_MODEL_ERASED } } }, 'folds and read models see blank strings, never the tombstone')
  t.equal(presentErased(data), data, 'data without tombstones is not copied')
})

/** The sealing store over an adapter: the same checks for PostgreSQL and, where EVENTSTORE_URL is set, KurrentDB. */
async function sealingOver(t: Test, database: TestDatabase, raw: EventStore) {
  const store = sealingStore(raw, subjectKeys(database.db, wrapping, { inEventDatabase: raw.kind === 'postgres' }), cataloguedPersonalSpecs)

  t.test('passes the event store contract (events without personal fields go through untouched)', async (t) => {
    eventStoreContract(t, async () => store)
  })

  t.test('seals on append, unseals on every read, erases when the key is destroyed', async (t) => {
    const id = randomUUID()
    const orgId = randomUUID()
    const stream = `contact-${id}`
    const created = { contact_id: id, org_id: orgId, first_name: 'Grace', last_name: 'Hopper', email: 'grace@navy.test', phone: '+1 555 0100', address_line: '1 Harbor Road', do_not_call: false, at: '2026-11-22T09:00:00Z' }
    const { keyed: claim } = await store.claimNames.streamsOf('contact_email', orgId, 'grace@navy.test')
    await store.appendToStreams([
      { streamName: stream, events: [{ type: 'ContactCreated', data: created }], expectedRevision: 'no_stream' },
      { streamName: claim, events: [{ type: 'NameClaimed', data: { owner_id: id, name: 'grace@navy.test' } }], expectedRevision: 'no_stream' },
    ])
    const stored = JSON.stringify([...(await raw.readStream(stream)), ...(await raw.readStream(claim))].map((e) => e.data))
    t.notMatch(stored, /Grace|Hopper|grace@navy|555 0100|Harbor/, 'the log holds no personal value, the name claim included')
    t.match(stored, new RegExp(id), 'ids stay in clear')
    t.same((await store.readStream(stream))[0]!.data, created, 'readStream unseals')
    t.same((await store.readStream(claim))[0]!.data, { owner_id: id, name: 'grace@navy.test' })
    const inLog = (await readAllAfter(store, START)).filter((e) => e.streamName === stream)
    t.same(inLog[0]!.data, created, 'readAll unseals')

    await store.subjectKeys.destroy(stream)
    const erased = (await store.readStream(stream))[0]!.data as Record<string, unknown>
    t.match(erased, { contact_id: id, org_id: orgId, first_name: ERASED, last_name: ERASED, email: ERASED, phone: ERASED, address_line: ERASED, do_not_call: false, at: created.at })
    t.same(((await store.readStream(claim))[0]!.data as { name: unknown }).name, ERASED, "the name claim is the person's too")
    const fresh = sealingStore(raw, subjectKeys(database.db, wrapping), cataloguedPersonalSpecs)
    t.same(((await fresh.readStream(stream))[0]!.data as { email: unknown }).email, ERASED, 'another process reads it erased (no cache)')
    await store.appendToStream(stream, [{ type: 'ContactUpdated', data: { email: 'new@navy.test', at: created.at } }])
    t.notMatch(JSON.stringify((await raw.readStream(stream)).map((e) => e.data)), /new@navy/, 'what is written for an erased person is dropped')
  })

  return store
}

t.test('the sealing store over PostgreSQL', async (t) => {
  const database = await freshDatabase(t, { poolSize: 12 })
  const raw = createPostgresEventStore({ pool: database.pool, pollIntervalMs: 50 })
  t.teardown(() => raw.close())
  const store = await sealingOver(t, database, raw)

  t.test('the data keys are stored wrapped by the master key; a rotation reads both, then rewraps', async (t) => {
    const id = randomUUID()
    const stream = `contact-${id}`
    const created = { contact_id: id, org_id: randomUUID(), first_name: 'Katherine', email: 'kj@nasa.test', at: '2026-11-22T09:00:00Z' }
    await store.appendToStream(stream, [{ type: 'ContactCreated', data: created }])
    const storedKey = async () => (await database.pool.query<{ data_key: Buffer }>('SELECT data_key FROM subject_keys WHERE subject = $1', [stream])).rows[0]!.data_key
    const before = await storedKey()
    t.equal(before.length, 1 + 4 + 12 + 16 + 32, 'wrapped: version, master key id, IV, tag, key')
    const claimStream = async (names: SealingStore) => (await names.claimNames.streamsOf('contact_email', created.org_id, created.email)).keyed
    const claimed = await claimStream(store)
    const next = newDataKey()
    const openWith = (current: Buffer, retired: Buffer[] = []) => sealingStore(raw, subjectKeys(database.db, keyWrapping({ current, retired })), cataloguedPersonalSpecs)
    t.same((await openWith(next, [TEST_MASTER_KEYS.current]).readStream(stream))[0]!.data, created, 'during a rotation: the retired master key still opens it')
    await t.rejects(openWith(next).readStream(stream), /Expected the master key/, 'without it: an error, never an erasure')
    t.ok((await rewrapSubjectKeys(database.db, keyWrapping({ current: next, retired: [TEST_MASTER_KEYS.current] }))).rewrapped >= 1)
    t.not((await storedKey()).toString('hex'), before.toString('hex'), 'rewrapped')
    t.same((await openWith(next).readStream(stream))[0]!.data, created, 'after it the new master key alone opens it')
    t.equal(await claimStream(openWith(next)), claimed, 'the claim key is rewrapped with them: a claim keeps its stream across a rotation')
    // Back to the test key, for the rest of this file.
    await rewrapSubjectKeys(database.db, keyWrapping({ current: TEST_MASTER_KEYS.current, retired: [next] }))
    await database.pool.query('INSERT INTO subject_keys (subject, data_key) VALUES ($1, $2)', [`contact-${randomUUID()}`, newDataKey()])
    t.ok((await rewrapSubjectKeys(database.db, wrapping)).rewrapped === 1, 'a key stored before wrapping began is wrapped too')
  })

  t.test("a new person's key is stored by the append that creates them, with its events or not at all", async (t) => {
    const keyRows = async (subject: string) => (await database.pool.query<{ data_key: Buffer | null }>('SELECT data_key FROM subject_keys WHERE subject = $1', [subject])).rows
    const created = (id: string, email: string): NewEvent => ({ type: 'ContactCreated', data: { contact_id: id, org_id: randomUUID(), first_name: 'Mary', email, at: '2026-11-22T09:00:00Z' } })

    const id = randomUUID()
    const stream = `contact-${id}`
    const fresh = sealingStore(raw, subjectKeys(database.db, wrapping, { inEventDatabase: true }), cataloguedPersonalSpecs)
    await fresh.appendToStream(stream, [created(id, 'mary@jackson.test')], { expectedRevision: 'no_stream' })
    t.equal((await keyRows(stream)).length, 1, 'its key is stored')
    const writers = await database.pool.query<{ key: string; event: string }>('SELECT (SELECT xmin::text FROM subject_keys WHERE subject = $1) AS key, (SELECT xmin::text FROM events WHERE stream_name = $1) AS event', [stream])
    t.equal(writers.rows[0]!.key, writers.rows[0]!.event, 'by the transaction that wrote the events: no round trip of its own')
    t.same(((await sealingStore(raw, subjectKeys(database.db, wrapping), cataloguedPersonalSpecs).readStream(stream))[0]!.data as { email: string }).email, 'mary@jackson.test', 'another process opens it with the stored key')

    const lost = randomUUID()
    await raw.appendToStream(`contact-${lost}`, [{ type: 'Warmup', data: {} }])
    await t.rejects(fresh.appendToStream(`contact-${lost}`, [created(lost, 'lost@jackson.test')], { expectedRevision: 'no_stream' }), { name: 'WrongExpectedRevisionError' })
    t.same(await keyRows(`contact-${lost}`), [], 'an append that fails stores no key')

    // Another process made the key first: the append seals again with the stored key.
    const raced = randomUUID()
    const elsewhere = sealingStore(raw, subjectKeys(database.db, wrapping), cataloguedPersonalSpecs)
    await elsewhere.subjectKeys.forSealing([`contact-${raced}`])
    const before = await keyRows(`contact-${raced}`)
    await fresh.appendToStream(`contact-${raced}`, [created(raced, 'raced@jackson.test')], { expectedRevision: 'no_stream' })
    t.same(await keyRows(`contact-${raced}`), before, 'the stored key is kept')
    t.same(((await elsewhere.readStream(`contact-${raced}`))[0]!.data as { email: string }).email, 'raced@jackson.test', 'and the events are sealed with it')

    // In one batch (appends of one turn go together): the one whose key lost goes again, its neighbour is kept.
    const [lostAgain, neighbour] = [randomUUID(), randomUUID()]
    await elsewhere.subjectKeys.forSealing([`contact-${lostAgain}`])
    await Promise.all([
      fresh.appendToStream(`contact-${lostAgain}`, [created(lostAgain, 'again@jackson.test')], { expectedRevision: 'no_stream' }),
      fresh.appendToStream(`contact-${neighbour}`, [created(neighbour, 'neighbour@jackson.test')], { expectedRevision: 'no_stream' }),
    ])
    const emails = await Promise.all([lostAgain, neighbour].map(async (id) => ((await elsewhere.readStream(`contact-${id}`))[0]!.data as { email: string }).email))
    t.same(emails, ['again@jackson.test', 'neighbour@jackson.test'], 'both written once, each under its stored key')
    t.equal((await raw.readStream(`contact-${neighbour}`)).length + (await raw.readStream(`contact-${lostAgain}`)).length, 2)

    // Erased before the create reached this process: nothing personal is written.
    const gone = randomUUID()
    await elsewhere.subjectKeys.destroy(`contact-${gone}`)
    await fresh.appendToStream(`contact-${gone}`, [created(gone, 'gone@jackson.test')], { expectedRevision: 'no_stream' })
    t.notMatch(JSON.stringify((await raw.readStream(`contact-${gone}`))[0]!.data), /gone@jackson/, 'a destroyed key wins over a new one')
    t.same(await keyRows(`contact-${gone}`), [{ data_key: null }], 'and stays destroyed')
  })

  t.test('the cost of sealing on the write path', async (t) => {
    const orgId = randomUUID()
    const created = (id: string): NewEvent => ({ type: 'ContactCreated', data: { contact_id: id, org_id: orgId, first_name: 'Some', last_name: 'One', email: `${id}@example.test`, phone: '+1 555 0101', at: '2026-11-22T09:00:00Z' } })
    const edited = (i: number): NewEvent => ({ type: 'ContactUpdated', data: { email: `${i}@example.test`, at: '2026-11-22T09:00:00Z' } })
    const spent = { plain: { create: 0, edit: 0 }, sealed: { create: 0, edit: 0 } }
    // A create expects no stream, as a command's does (handle-command.ts): its key goes with its events.
    const timed = async (target: EventStore, stream: string, event: NewEvent, expectedRevision: 'no_stream' | 'any') => {
      const started = performance.now()
      await target.appendToStream(stream, [event], { expectedRevision })
      return performance.now() - started
    }
    // Interleaved, so that the load of a shared machine weighs on both alike.
    const n = 100
    const people = { plain: randomUUID(), sealed: randomUUID() }
    const ways = [['plain', raw], ['sealed', store]] as const
    for (let i = 0; i < n; i++) {
      for (const [way, target] of ways) {
        const id = randomUUID()
        spent[way].create += await timed(target, `contact-${id}`, created(id), 'no_stream')
      }
    }
    for (let i = 0; i < n; i++) for (const [way, target] of ways) spent[way].edit += await timed(target, `contact-${people[way]}`, edited(i), 'any')
    const each = (ms: number) => (ms / n).toFixed(2)
    t.comment(`append, ms each over ${n}: create ${each(spent.plain.create)} plain / ${each(spent.sealed.create)} sealed (a new key, stored by the append); edit ${each(spent.plain.edit)} plain / ${each(spent.sealed.edit)} sealed (key cached)`)
    t.ok(spent.sealed.edit < spent.plain.edit * 2, 'an edit of a known person costs no extra round trip')
  })

  t.test('the cost of unsealing on a replay (a rebuild reads the whole log)', async (t) => {
    // Pages as a rebuild reads them (its batch size is 2000).
    const replay = async (target: EventStore) => {
      const started = performance.now()
      let events = 0
      for (let cursor = START; ; ) {
        const page = await target.readAll({ after: cursor, maxCount: 2000 })
        events += page.events.length
        cursor = page.scannedTo
        if (page.isEnd) break
      }
      return { ms: performance.now() - started, events }
    }
    await replay(raw) // warm-up
    // A fresh store: a rebuild in another process meets every key for the first time.
    const cold = sealingStore(raw, subjectKeys(database.db, wrapping), cataloguedPersonalSpecs)
    const [plain, sealed] = [await replay(raw), await replay(cold)]
    t.equal(sealed.events, plain.events)
    t.comment(`replay of ${plain.events} events: ${plain.ms.toFixed(0)} ms plain, ${sealed.ms.toFixed(0)} ms unsealing with cold keys`)
  })
})

// No KurrentDB runs in the default suite (test/eventstore/kurrentdb.test.ts says how to start one); its keys live in PostgreSQL.
t.test('the sealing store over KurrentDB', { skip: process.env.EVENTSTORE_URL ? false : 'EVENTSTORE_URL is not set' }, async (t) => {
  const database = await freshDatabase(t)
  const raw = createKurrentDbEventStore({ connectionString: process.env.EVENTSTORE_URL! })
  t.teardown(() => raw.close())
  await sealingOver(t, database, raw)
})
