/**
 * The KurrentDB (EventStoreDB) adapter, and the only file importing its client: switching to
 * @kurrent/kurrentdb-client changes this file alone. Positions are KurrentDB's own $all positions.
 */
import { BACKWARDS, END, EventStoreDBClient, StreamNotFoundError, WrongExpectedVersionError, eventTypeFilter, excludeSystemEvents, jsonEvent } from '@eventstore/db-client'
import type { AllStreamRecordedEvent, AllStreamSubscription, JSONType } from '@eventstore/db-client'
import { START, WrongExpectedRevisionError, comparePositions } from './event-store.ts'
import type { AppendOptions, AppendResult, EventStore, MultiAppendOptions, NewSubjectKey, NewEvent, Position, ReadAllOptions, ReadAllPage, RecordedEvent, StreamWrite, SubscribeOptions, VisibilityLag } from './event-store.ts'
import { eventTypesRegex, isWanted, toActualRevision, toReadAllPage, toReadPosition, toRecordedEvent, toStoredMetadata } from './kurrentdb-mapping.ts'

export type KurrentDbEventStoreOptions = {
  /** For example `esdb://localhost:2113?tls=false`. */
  connectionString: string
  /** Delay before restarting the wake-up subscription behind onAppended after it dropped. */
  pollIntervalMs?: number
  defaultPageSize?: number
}

/** The data keys live in PostgreSQL, apart from KurrentDB: no append here can store one, so none may be lost by being ignored. */
function refuseKeys(keys: readonly NewSubjectKey[] | undefined): void {
  if (keys?.length) throw new Error('Expected no data keys in a KurrentDB append: they are made in PostgreSQL before it (subjectKeys without inEventDatabase)')
}

export function createKurrentDbEventStore(options: KurrentDbEventStoreOptions): EventStore {
  const client = EventStoreDBClient.connectionString(options.connectionString)
  const retryMs = options.pollIntervalMs ?? 1000
  const defaultPageSize = options.defaultPageSize ?? 500
  const subscriptions = new Set<AllStreamSubscription>()
  const listeners = new Set<() => void>()
  let wakeups: AllStreamSubscription | null = null
  let retryTimer: NodeJS.Timeout | undefined
  let closed = false

  const fire = () => {
    for (const listener of [...listeners]) listener()
  }

  async function appendToStream(streamName: string, events: readonly NewEvent[], opts: AppendOptions = {}): Promise<AppendResult> {
    if (events.length === 0) throw new Error(`Expected at least one event to append to ${streamName}`)
    refuseKeys(opts.newKeys)
    /*
     * NOT ATOMIC on KurrentDB: the client has no multi-stream conditional append, so the guard is
     * read, then the events appended. An append to the guard stream landing between the two goes
     * unnoticed (the README states this window); PostgreSQL checks the guard inside the append's
     * transaction, under a lock that serializes with appends to the guard stream.
     */
    if (opts.guard) {
      const { streamName: guardStream, revision } = opts.guard
      const actual = await lastRevision(guardStream)
      if (actual !== revision) throw new WrongExpectedRevisionError(guardStream, revision, actual)
    }
    // The port's expectations are the client's own constants ('any', 'no_stream', 'stream_exists') or a bigint, so they pass unchanged.
    const expected = opts.expectedRevision ?? 'any'
    const proposed = events.map((e) =>
      // The client serializes any JSON value with JSON.stringify, though its type only admits objects, arrays and strings.
      jsonEvent({ id: e.id, type: e.type, data: (e.data ?? null) as JSONType, metadata: toStoredMetadata(e) }),
    )
    const result = await client.appendToStream(streamName, proposed, { expectedRevision: expected }).catch((error: unknown) => {
      throw error instanceof WrongExpectedVersionError ? new WrongExpectedRevisionError(streamName, expected, toActualRevision(error.actualVersion)) : error
    })
    // Local listeners need not wait for the wake-up subscription's round trip.
    fire()
    return { nextExpectedRevision: result.nextExpectedRevision, position: result.position ?? (await positionOf(streamName, result.nextExpectedRevision)) }
  }

  // NOT ATOMIC (see the port): the guards are read first, then each write appended after the previous one.
  async function appendToStreams(writes: readonly StreamWrite[], opts: MultiAppendOptions = {}): Promise<AppendResult> {
    if (writes.length === 0) throw new Error('Expected at least one stream to append to')
    refuseKeys(opts.newKeys)
    for (const { streamName: guardStream, revision } of opts.guards ?? []) {
      const actual = await lastRevision(guardStream)
      if (actual !== revision) throw new WrongExpectedRevisionError(guardStream, revision, actual)
    }
    let last: AppendResult | undefined
    for (const write of writes) last = await appendToStream(write.streamName, write.events, { expectedRevision: write.expectedRevision })
    return last!
  }

  async function lastRevision(streamName: string): Promise<bigint | 'no_stream'> {
    try {
      for await (const { event } of client.readStream(streamName, { direction: BACKWARDS, fromRevision: END, maxCount: 1 })) {
        if (event) return event.revision
      }
    } catch (error) {
      if (error instanceof StreamNotFoundError) return 'no_stream'
      throw error
    }
    // A stream whose events were all truncated away reads empty without StreamNotFoundError: it counts as absent.
    return 'no_stream'
  }

  /** Older servers report no position when an append repeats earlier events (same ids, so idempotent): read it back. */
  async function positionOf(streamName: string, revision: bigint): Promise<Position> {
    const [event] = await readStream(streamName, { fromRevision: revision, maxCount: 1 })
    if (!event) throw new Error(`Expected ${streamName} to hold revision ${revision} after appending it`)
    return event.position
  }

  async function readStream(streamName: string, opts: { fromRevision?: bigint; maxCount?: number } = {}): Promise<RecordedEvent[]> {
    const events: RecordedEvent[] = []
    try {
      for await (const { event } of client.readStream(streamName, { fromRevision: opts.fromRevision, maxCount: opts.maxCount })) {
        if (event) events.push(toRecordedEvent(event))
      }
    } catch (error) {
      if (error instanceof StreamNotFoundError) return []
      throw error
    }
    return events
  }

  async function readAll(opts: ReadAllOptions = {}): Promise<ReadAllPage> {
    const after = opts.after ?? START
    const maxCount = opts.maxCount ?? defaultPageSize
    const read: AllStreamRecordedEvent[] = []
    for await (const { event } of client.readAll({ fromPosition: toReadPosition(after), maxCount: maxCount + 1 })) {
      if (event) read.push(event)
    }
    return toReadAllPage(read, after, maxCount, opts.eventTypes)
  }

  async function* subscribeToAll(opts: SubscribeOptions = {}): AsyncIterable<RecordedEvent> {
    const { signal, eventTypes } = opts
    const after = opts.after ?? START
    if (signal?.aborted) return
    const filter = eventTypes ? eventTypeFilter({ regex: eventTypesRegex(eventTypes) }) : excludeSystemEvents()
    const subscription = client.subscribeToAll({ fromPosition: toReadPosition(after), filter })
    subscriptions.add(subscription)
    // Unsubscribing ends the stream, which ends the loop below.
    const stop = () => void unsubscribe(subscription)
    signal?.addEventListener('abort', stop, { once: true })
    try {
      for await (const { event } of subscription) {
        if (signal?.aborted) return
        // A catch-up subscription already starts after its position; the check keeps the port's promise on any server.
        if (event && comparePositions(event.position, after) > 0 && isWanted(event.type, eventTypes)) yield toRecordedEvent(event)
      }
    } finally {
      signal?.removeEventListener('abort', stop)
      subscriptions.delete(subscription)
      await unsubscribe(subscription)
    }
  }

  /**
   * One live subscription from the end of $all wakes the listeners on every event appended by any
   * process. It starts with the first listener and restarts after a drop; appends that landed
   * before the server confirmed it are covered by the wake-up on confirmation.
   */
  function watchAppends(): void {
    if (closed || wakeups) return
    const subscription = client.subscribeToAll({ fromPosition: END, filter: excludeSystemEvents() })
    wakeups = subscription
    subscriptions.add(subscription)
    const restart = () => {
      if (wakeups !== subscription) return
      wakeups = null
      subscriptions.delete(subscription)
      void unsubscribe(subscription)
      if (!closed) retryTimer = setTimeout(watchAppends, retryMs)
    }
    subscription.on('confirmation', fire).on('data', fire).on('error', restart).on('end', restart)
  }

  function onAppended(listener: () => void): () => void {
    listeners.add(listener)
    watchAppends()
    return () => listeners.delete(listener)
  }

  async function visibilityLag(): Promise<VisibilityLag> {
    // An acknowledged append is readable at once: nothing is ever hidden.
    return { hiddenEvents: 0, hiddenForMs: 0, blocker: null }
  }

  async function close(): Promise<void> {
    closed = true
    clearTimeout(retryTimer)
    await Promise.all([...subscriptions].map(unsubscribe))
    await client.dispose()
  }

  async function lastPosition(): Promise<Position> {
    for await (const { event } of client.readAll({ direction: BACKWARDS, fromPosition: END, maxCount: 1 })) {
      if (event?.position) return { commit: event.position.commit, prepare: event.position.prepare }
    }
    return START
  }

  return { kind: 'kurrentdb', appendToStream, appendToStreams, readStream, readAll, subscribeToAll, onAppended, visibilityLag, lastPosition, close }
}

/** A subscription that never reached the server has nothing to cancel, and its error was already reported. */
function unsubscribe(subscription: AllStreamSubscription): Promise<void> {
  return subscription.unsubscribe().catch(() => {})
}
