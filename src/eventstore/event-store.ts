/**
 * The event store port. Two adapters implement it: postgres.ts (default, also embedded) and
 * kurrentdb.ts. Global positions are (commit, prepare) pairs in both: KurrentDB's own $all
 * positions, and (transaction id, sequence) in PostgreSQL, which orders events by commit visibility.
 */

export type Position = Readonly<{ commit: bigint; prepare: bigint }>

/** Before the first event of the log. */
export const START: Position = Object.freeze({ commit: 0n, prepare: 0n })

export function comparePositions(a: Position, b: Position): number {
  if (a.commit !== b.commit) return a.commit < b.commit ? -1 : 1
  if (a.prepare !== b.prepare) return a.prepare < b.prepare ? -1 : 1
  return 0
}

export const maxPosition = (a: Position, b: Position): Position => (comparePositions(a, b) >= 0 ? a : b)

/** `commit-prepare`, the form used in headers, query strings and the CLI. */
export function formatPosition(p: Position): string {
  return `${p.commit}-${p.prepare}`
}

export function parsePosition(text: string): Position | undefined {
  const match = /^(\d{1,20})-(\d{1,20})$/.exec(text.trim())
  if (!match) return undefined
  return { commit: BigInt(match[1]!), prepare: BigInt(match[2]!) }
}

/** What the appender expects the stream to be: absent, present, at an exact revision, or anything. */
export type ExpectedRevision = 'any' | 'no_stream' | 'stream_exists' | bigint

/**
 * A condition on another stream: the append commits only if `streamName` is still at exactly
 * `revision` ('no_stream': still absent). Nothing is written to that stream. Guarded appends
 * sharing a guard stream do not block each other; an append to the guard stream serializes with
 * them in PostgreSQL. KurrentDB checks it just before the append, not atomically with it.
 */
export type StreamGuard = { streamName: string; revision: bigint | 'no_stream' }

/**
 * A person's new data key (issue 31), wrapped by the master key, for the append that first seals
 * with it to store in its own transaction (src/privacy/sealing-store.ts). PostgreSQL only, where the
 * keys live in the events' database; KurrentDB refuses them.
 */
export type NewSubjectKey = { subject: string; wrappedKey: Buffer }

export type AppendOptions = {
  expectedRevision?: ExpectedRevision
  /** Fails with WrongExpectedRevisionError naming the guard stream when it moved. */
  guard?: StreamGuard
  /** Stored with the events, all or none; fails with SubjectKeyExistsError when one of the subjects has a key (or a destroyed one) already. */
  newKeys?: readonly NewSubjectKey[]
}

export type MultiAppendOptions = { guards?: readonly StreamGuard[]; newKeys?: readonly NewSubjectKey[] }

export type EventMetadata = {
  /** Profile id of the caller who caused the event; null for system work (seeding, migrations). */
  actorId?: string | null
  orgId?: string | null
  correlationId?: string
  causationId?: string
  requestId?: string
  [key: string]: unknown
}

export type NewEvent = {
  type: string
  data: unknown
  metadata?: EventMetadata
  /** Schema version of `data`, so readers can upcast older shapes. Defaults to 1. */
  schemaVersion?: number
  /** Defaults to a random uuid. */
  id?: string
}

export type RecordedEvent = Readonly<{
  id: string
  type: string
  data: unknown
  metadata: EventMetadata
  schemaVersion: number
  streamName: string
  revision: bigint
  position: Position
  createdAt: Date
}>

/** One stream's share of a multi-stream append. */
export type StreamWrite = { streamName: string; events: readonly NewEvent[]; expectedRevision: ExpectedRevision }

export type AppendResult = Readonly<{
  /** Revision of the last event appended: the expected revision of the next append. */
  nextExpectedRevision: bigint
  /** Global position of the last event appended; wait for it to read your own writes. */
  position: Position
}>

export type ReadAllOptions = {
  /** Exclusive lower bound. */
  after?: Position
  maxCount?: number
  /** Only these event types; the page still reports how far the log was scanned. */
  eventTypes?: readonly string[]
}

export type ReadAllPage = Readonly<{
  events: RecordedEvent[]
  /**
   * Every event at or before this position has been considered (returned or filtered out), so a
   * consumer may checkpoint here even when `events` is empty. Never beyond what is safely visible.
   */
  scannedTo: Position
  /** True when the page reached the visible end of the log. */
  isEnd: boolean
  /** Committed events wait beyond the visible end (an older transaction is still open): ask again soon. */
  moreHidden: boolean
}>

export type SubscribeOptions = ReadAllOptions & { signal?: AbortSignal }

/** Why the visible end of the log is behind what has been committed, when it is. */
export type VisibilityLag = Readonly<{
  /** Committed events that readers cannot see yet because an older transaction is still open. */
  hiddenEvents: number
  /** How long the oldest hidden event has been waiting, in ms; 0 when nothing is hidden. */
  hiddenForMs: number
  /** The open transaction holding the horizon back, when known. */
  blocker: { pid: number; startedAt: Date | null; state: string | null; application: string | null } | null
}>

export interface EventStore {
  readonly kind: 'postgres' | 'kurrentdb'
  appendToStream(streamName: string, events: readonly NewEvent[], options?: AppendOptions): Promise<AppendResult>
  /**
   * Appends to several streams, each at its expected revision (and each guard at its own): on
   * PostgreSQL in one transaction, so the store holds all of them or none (a name claim and the
   * record that holds it). KurrentDB has no multi-stream transaction: there the writes are appended
   * one after another, and a failure between them leaves the earlier ones (the claim sweeper's case).
   * Answers the last write's next revision and the latest position.
   */
  appendToStreams(writes: readonly StreamWrite[], options?: MultiAppendOptions): Promise<AppendResult>
  /** Events of one stream in revision order; an empty list when the stream does not exist. */
  readStream(streamName: string, options?: { fromRevision?: bigint; maxCount?: number }): Promise<RecordedEvent[]>
  /** One page of the global log in commit order. */
  readAll(options?: ReadAllOptions): Promise<ReadAllPage>
  /** Catch-up then live: every event after `after`, in order, exactly once, until the signal aborts. */
  subscribeToAll(options?: SubscribeOptions): AsyncIterable<RecordedEvent>
  /** Registers a callback run when new events may have become visible; returns the unsubscribe function. */
  onAppended(listener: () => void): () => void
  visibilityLag(): Promise<VisibilityLag>
  /** Position of the latest event stored (START for an empty log): how far a replay has to go, for its progress and ETA. */
  lastPosition(): Promise<Position>
  close(): Promise<void>
}

export class WrongExpectedRevisionError extends Error {
  constructor(
    readonly streamName: string,
    readonly expected: ExpectedRevision,
    readonly actual: bigint | 'no_stream' | 'unknown',
  ) {
    super(`Expected stream ${streamName} to be at ${String(expected)}, but it is at ${String(actual)}`)
    this.name = 'WrongExpectedRevisionError'
  }
}

/** An append's new data key lost to a key stored first (or a destroyed one): nothing was written, so seal with the stored key and append again. */
export class SubjectKeyExistsError extends Error {
  constructor(readonly subjects: readonly string[]) {
    super(`Expected no data key yet for ${subjects.join(', ')}`)
    this.name = 'SubjectKeyExistsError'
  }
}
