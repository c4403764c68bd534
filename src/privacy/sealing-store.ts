import { SubjectKeyExistsError } from '../eventstore/event-store.ts'
import type { AppendResult, EventStore, NewEvent, NewSubjectKey, RecordedEvent, StreamWrite } from '../eventstore/event-store.ts'
import { claimNames } from './claim-names.ts'
import type { ClaimNames } from './claim-names.ts'
import { sealData, unsealData } from './seal.ts'
import type { SubjectKeys } from './subject-keys.ts'

/** An event type's personal fields and whose they are (EventDeclaration `personal`, `subject`). */
/**
 * `elsewhere`: the fields are sealed under another stream's subject (a web form's answers under its
 * lead), so erasing that person finds them in no stream of theirs and rebuilds their read models.
 */
export type PersonalSpec = { fields: readonly string[]; subject: (streamName: string, data: Record<string, unknown>) => string | undefined; elsewhere?: boolean }
export type PersonalSpecs = (type: string) => PersonalSpec | undefined

/**
 * A store that seals, with the keys and declarations it seals by: erasure destroys a key through
 * it (so that its cache forgets the key) and reads which events held personal data. It also names
 * the claim streams of unique names (claim-names.ts), which would otherwise put a pseudonym of a
 * person's email into the log's stream names.
 */
export type SealingStore = EventStore & { readonly subjectKeys: SubjectKeys; readonly personal: PersonalSpecs; readonly claimNames: ClaimNames }

export const isSealingStore = (store: EventStore): store is SealingStore => 'subjectKeys' in store

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * The event store port, sealing personal data (issue 31, docs/personal-data.md): above the adapter,
 * so PostgreSQL and KurrentDB hold the same ciphertext. Appends seal each event's personal fields
 * under its subject's key; every read (streams, pages of the log, subscriptions) unseals them, and
 * shows ERASED where the key was destroyed. Events without personal fields pass untouched.
 */
export function sealingStore(inner: EventStore, keys: SubjectKeys, specs: PersonalSpecs): SealingStore {
  type Target = { spec: PersonalSpec; subject: string }
  type Made = ReturnType<SubjectKeys['propose']>
  const targetOf = (streamName: string, type: string, data: unknown): Target | undefined => {
    const spec = specs(type)
    const subject = spec && isObject(data) ? spec.subject(streamName, data) : undefined
    return spec && subject ? { spec, subject } : undefined
  }

  /**
   * The writes with their personal fields sealed, and the keys made for them. With `proposing` (and
   * the keys in the events' database), a subject the append creates (its own stream, expected
   * absent: a contact's create, with its email claim) and this process has not cached gets a fresh
   * key for the append to store in its own transaction (`made`), rather than a round trip first.
   */
  async function seal(writes: readonly StreamWrite[], proposing: boolean): Promise<{ writes: StreamWrite[]; made: Made }> {
    const targets = writes.map((write) => write.events.map((event) => targetOf(write.streamName, event.type, event.data)))
    const subjects = targets.flat().flatMap((target) => (target ? [target.subject] : []))
    if (subjects.length === 0) return { writes: [...writes], made: new Map() }
    const created = new Set(proposing && keys.inEventDatabase ? writes.filter((write) => write.expectedRevision === 'no_stream').map((write) => write.streamName) : [])
    const made = keys.propose(subjects.filter((subject) => created.has(subject)))
    const known = subjects.filter((subject) => !made.has(subject))
    // A create's subjects are all made here: no await, which is a turn of the event loop per append.
    const sealing = known.length ? await keys.forSealing(known) : new Map<string, Buffer | null>()
    for (const [subject, { key }] of made) sealing.set(subject, key)
    const sealed = (event: NewEvent, target: Target | undefined): NewEvent => {
      if (!target) return event
      const key = sealing.get(target.subject)
      // Never written in clear, nor dropped as if erased, for want of a key.
      if (key === undefined) throw new Error(`Expected a data key for ${target.subject}`)
      return { ...event, data: sealData(event.data, target.spec.fields, key, target.subject) }
    }
    return { writes: writes.map((write, w) => ({ ...write, events: write.events.map((event, e) => sealed(event, targets[w]![e])) })), made }
  }

  /**
   * Seals and appends (`store`: the adapter's call). An append whose new key lost to a stored one
   * (another process made it, or erased the person first) wrote nothing: it is sealed again with
   * the stored key, and appended without making one.
   */
  async function append(writes: readonly StreamWrite[], store: (sealed: StreamWrite[], newKeys: NewSubjectKey[]) => Promise<AppendResult>): Promise<AppendResult> {
    const first = await seal(writes, true)
    if (first.made.size === 0) return store(first.writes, [])
    try {
      const result = await store(first.writes, [...first.made.values()].map((made) => made.stored))
      keys.stored(new Map([...first.made].map(([subject, made]) => [subject, made.key])))
      return result
    } catch (error) {
      if (!(error instanceof SubjectKeyExistsError)) throw error
      return store((await seal(writes, false)).writes, [])
    }
  }

  async function unseal(events: RecordedEvent[]): Promise<RecordedEvent[]> {
    const targets = events.map((event) => targetOf(event.streamName, event.type, event.data))
    const subjects = targets.flatMap((target) => (target ? [target.subject] : []))
    if (subjects.length === 0) return events
    const unsealing = await keys.forUnsealing(subjects)
    return events.map((event, i) => {
      const target = targets[i]
      if (!target) return event
      const data = unsealData(event.data, target.spec.fields, unsealing.get(target.subject), target.subject)
      return data === event.data ? event : { ...event, data }
    })
  }

  async function* unsealing(events: AsyncIterable<RecordedEvent>): AsyncIterable<RecordedEvent> {
    for await (const event of events) yield (await unseal([event]))[0]!
  }

  return {
    kind: inner.kind,
    subjectKeys: keys,
    personal: specs,
    // The log is read for stream names only: the adapter's own read, nothing to unseal.
    claimNames: claimNames(inner, keys),
    appendToStream: (streamName, events, options) =>
      append([{ streamName, events, expectedRevision: options?.expectedRevision ?? 'any' }], ([sealed], newKeys) => inner.appendToStream(streamName, sealed!.events, { ...options, newKeys })),
    appendToStreams: (writes, options) => append(writes, (sealed, newKeys) => inner.appendToStreams(sealed, { ...options, newKeys })),
    readStream: async (streamName, options) => unseal(await inner.readStream(streamName, options)),
    readAll: async (options) => {
      const page = await inner.readAll(options)
      return { ...page, events: await unseal(page.events) }
    },
    subscribeToAll: (options) => unsealing(inner.subscribeToAll(options)),
    onAppended: (listener) => inner.onAppended(listener),
    visibilityLag: () => inner.visibilityLag(),
    lastPosition: () => inner.lastPosition(),
    close: () => inner.close(),
  }
}
