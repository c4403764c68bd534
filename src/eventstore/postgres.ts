import { randomUUID } from 'node:crypto'
import type pg from 'pg'
import { START, WrongExpectedRevisionError } from './event-store.ts'
import type { AppendOptions, AppendResult, EventStore, ExpectedRevision, NewEvent, ReadAllOptions, ReadAllPage, RecordedEvent, StreamGuard, StreamWrite, SubscribeOptions, VisibilityLag, Position } from './event-store.ts'
import { startNotifications } from './postgres-notifications.ts'
import { createWakeup, nextHiddenRetryMs } from './wakeup.ts'

export type PostgresEventStoreOptions = {
  pool: pg.Pool
  /** Polling fallback for subscribers when no notification arrives. */
  pollIntervalMs?: number
  defaultPageSize?: number
}

const UNIQUE_VIOLATION = '23505'
const EVENT_COLUMNS = `transaction_id::text AS commit, global_position::text AS prepare, stream_name, stream_revision::text AS revision,
  event_id, event_type, schema_version, data, metadata, created_at`

/** The advisory lock key of a stream: 64 bits of its name's hash, shared by every appender of the database. */
export const streamLockKey = (nameSql: string): string => `hashtextextended(${nameSql}, 0)`

/*
 * One statement per append, so one round trip in autocommit. The stream's revision is derived from
 * its last event (an index-only lookup on the primary key); the expectation is checked in the WHERE
 * clause, and a concurrent append of the same revision fails on the primary key.
 *
 * The statement first takes the stream's exclusive transaction-level advisory lock, so that it
 * serializes with guarded appends holding the lock shared (see GUARD_LOCK_SQL). `locked` is a
 * materialized CTE (volatile, so never inlined) yielding one row once the lock is granted; every
 * inserted row derives from that row through `current` and `base`, so the rows, and with them the
 * transaction id (assigned at the first insert, or by the transaction_id default,
 * pg_current_xact_id()), only come into being after the lock is held. Taking a lock assigns no
 * transaction id. The statement's snapshot predates the lock: a writer that committed while we
 * waited is not seen by `current`, but its rows are, by the primary key, which reports the race as
 * a unique violation as before.
 */
const APPEND_SQL = `
  WITH locked AS MATERIALIZED (SELECT pg_advisory_xact_lock(${streamLockKey('$1')})),
  current AS (SELECT (SELECT max(stream_revision) FROM events WHERE stream_name = $1) AS revision FROM locked),
  base AS (
    SELECT coalesce(current.revision, -1) AS revision FROM current
    WHERE CASE $2::text
      WHEN 'no_stream' THEN current.revision IS NULL
      WHEN 'exact' THEN current.revision IS NOT DISTINCT FROM $3::bigint
      WHEN 'stream_exists' THEN current.revision IS NOT NULL
      ELSE true END)
  INSERT INTO events (stream_name, stream_revision, event_id, event_type, schema_version, data, metadata)
  SELECT $1, base.revision + e.ord, e.id, e.type, e.version, e.data, e.metadata
  FROM base, unnest($4::uuid[], $5::text[], $6::int[], $7::jsonb[], $8::jsonb[]) WITH ORDINALITY AS e(id, type, version, data, metadata, ord)
  ORDER BY e.ord
  RETURNING transaction_id::text AS commit, global_position::text AS prepare, stream_revision::text AS revision`

/*
 * A guarded append, or an append to several streams, is one call of crm_append_streams
 * (migrations/…-append-streams-function.ts), one statement and one round trip:
 *   1. the appended streams' locks exclusive and the guards' shared (APPEND_SQL takes the same
 *      exclusive lock). Shared, so guarded appends against one guard stream never wait for each
 *      other; an append to the guard stream needs it exclusive, so it waits for them to end, and
 *      those queued after it wait for it. All locks are taken in key order, so guards that cross
 *      (A guarded by B while B is guarded by A) cannot deadlock; a guard on the appended stream
 *      itself takes the one exclusive lock.
 *   2. each guard's revision, then each stream's expectation, read by a statement of its own, hence
 *      a fresh snapshot taken under the locks: every append to those streams that ever held a lock
 *      before us has committed and is visible, and none can commit before we do. Mismatch: SQLSTATE
 *      CRM01 (the stream in the detail, its revision in the hint), nothing written.
 *   3. the events, stream by stream; the statement's commit makes them visible together.
 * So once an append to the guard stream has committed, no guarded append that expected the older
 * revision can commit; and the guarded appends that did commit first got their transaction ids
 * before it was granted its lock, so their positions precede its events in the log.
 * A multi-stream append (a name claim with the record that holds it): all commit or none.
 */
const APPEND_STREAMS_SQL = 'SELECT commit, prepare, revision FROM crm_append_streams($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)'
const WRONG_REVISION = 'CRM01'

const STREAM_REVISION_SQL = 'SELECT max(stream_revision)::text AS revision FROM events WHERE stream_name = $1'

/*
 * Everything below the oldest open transaction (the horizon) is final, so a reader that moves past
 * it can never miss an event committed later. A page walks at most `$5` log entries after the
 * cursor, in log order, on the (transaction_id, global_position) index (`scan`), and answers the
 * events of the wanted types among them (at most `$3`). Bounding the walk first keeps each page's
 * cost to its window: a type filter the planner misjudges would otherwise turn the page into a
 * sort of the whole tail of the log, which made replaying a long log quadratic. `more_hidden`
 * says whether committed events wait beyond the horizon, so readers retry soon instead of
 * sleeping a full poll (max() is one step down the index).
 */
const READ_ALL_SQL = `
  WITH horizon AS MATERIALIZED (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS xmin),
  scan AS MATERIALIZED (
    SELECT w.transaction_id, w.global_position FROM events w
    WHERE (w.transaction_id, w.global_position) > ($1::text::xid8, $2::bigint) AND w.transaction_id < (SELECT xmin FROM horizon)
    ORDER BY w.transaction_id, w.global_position LIMIT $5),
  scanned AS MATERIALIZED (
    SELECT s.transaction_id, s.global_position, (SELECT count(*) FROM scan) AS n FROM scan s
    ORDER BY s.transaction_id DESC, s.global_position DESC LIMIT 1)
  SELECT scanned.transaction_id::text AS scanned_commit, scanned.global_position::text AS scanned_prepare, scanned.n::int AS scanned,
    (SELECT max(h.transaction_id) FROM events h) >= (SELECT xmin FROM horizon) AS more_hidden, page.*
  FROM (SELECT 1) one
  LEFT JOIN scanned ON true
  LEFT JOIN LATERAL (
    SELECT ${EVENT_COLUMNS} FROM events e
    WHERE (e.transaction_id, e.global_position) > ($1::text::xid8, $2::bigint)
      AND (e.transaction_id, e.global_position) <= (scanned.transaction_id, scanned.global_position)
      AND ($4::text[] IS NULL OR e.event_type = ANY($4::text[]))
    ORDER BY e.transaction_id, e.global_position LIMIT $3) page ON true`

/** How many log entries a filtered page may walk per event it may answer: rare types cost more pages, never a bigger one. */
const FILTERED_SCAN_FACTOR = 4

const READ_STREAM_SQL = `SELECT ${EVENT_COLUMNS} FROM events
  WHERE stream_name = $1 AND stream_revision >= $2 ORDER BY stream_revision LIMIT $3`

type EventRow = {
  commit: string
  prepare: string
  stream_name: string
  revision: string
  event_id: string
  event_type: string
  schema_version: number
  data: unknown
  metadata: Record<string, unknown>
  created_at: Date
}

export function createPostgresEventStore(options: PostgresEventStoreOptions): EventStore {
  const { pool } = options
  const pollIntervalMs = options.pollIntervalMs ?? 500
  const defaultPageSize = options.defaultPageSize ?? 500
  const notifications = startNotifications(pool)

  async function appendToStream(streamName: string, events: readonly NewEvent[], opts: AppendOptions = {}): Promise<AppendResult> {
    const expected = opts.expectedRevision ?? 'any'
    const mode = typeof expected === 'bigint' ? 'exact' : expected
    const append = appendOf({ streamName, events, expectedRevision: expected })
    const { guard } = opts
    // A checked-out client survives an expected error; pool.query() would discard the connection.
    const client = await pool.connect()
    try {
      for (;;) {
        try {
          const rows = guard ? await appendStreams(client, [{ streamName, events, expectedRevision: expected }], [guard]) : await append(client)
          return appended(rows)
        } catch (error) {
          const raced = (error as { code?: string }).code === UNIQUE_VIOLATION
          // 'any' and 'stream_exists' hold whatever the race winner wrote, so recompute the revision and retry
          // (a guarded append retries its whole statement, guard check included).
          if (raced && (mode === 'any' || mode === 'stream_exists')) continue
          if (raced) throw await conflict(client, streamName, expected)
          throw error
        }
      }
    } finally {
      client.release()
    }
  }

  async function appendToStreams(writes: readonly StreamWrite[], opts: { guards?: readonly StreamGuard[] } = {}): Promise<AppendResult> {
    const guards = opts.guards ?? []
    if (writes.length === 1 && guards.length <= 1) return appendToStream(writes[0]!.streamName, writes[0]!.events, { expectedRevision: writes[0]!.expectedRevision, guard: guards[0] })
    if (writes.length === 0) throw new Error('Expected at least one stream to append to')
    const client = await pool.connect()
    try {
      return appended(await appendStreams(client, writes, guards))
    } finally {
      client.release()
    }
  }

  /** The last row appended (the highest position) as the port answers it; listeners hear of the append. */
  function appended(rows: AppendedRow[]): AppendResult {
    const last = rows.reduce((a, b) => (BigInt(a.prepare) > BigInt(b.prepare) ? a : b))
    notifications.appended()
    return { nextExpectedRevision: BigInt(last.revision), position: { commit: BigInt(last.commit), prepare: BigInt(last.prepare) } }
  }

  async function readStream(streamName: string, opts: { fromRevision?: bigint; maxCount?: number } = {}): Promise<RecordedEvent[]> {
    const { rows } = await pool.query<EventRow>({
      name: 'es_read_stream',
      text: READ_STREAM_SQL,
      values: [streamName, (opts.fromRevision ?? 0n).toString(), opts.maxCount ?? null],
    })
    return rows.map(toRecordedEvent)
  }

  async function readAll(opts: ReadAllOptions = {}): Promise<ReadAllPage> {
    const after = opts.after ?? START
    const maxCount = opts.maxCount ?? defaultPageSize
    const window = opts.eventTypes ? maxCount * FILTERED_SCAN_FACTOR : maxCount
    const { rows } = await pool.query<EventRow & { scanned_commit: string | null; scanned_prepare: string | null; scanned: number | null; more_hidden: boolean }>({
      name: 'es_read_all',
      text: READ_ALL_SQL,
      values: [after.commit.toString(), after.prepare.toString(), maxCount, opts.eventTypes ?? null, window],
    })
    const first = rows[0]!
    const events = first.commit === null ? [] : rows.map(toRecordedEvent)
    if (events.length === maxCount) return { events, scannedTo: events.at(-1)!.position, isEnd: false, moreHidden: first.more_hidden }
    // Fewer than a page of wanted events: the whole window was read, up to its last entry.
    const scannedTo = first.scanned_commit === null ? after : { commit: BigInt(first.scanned_commit), prepare: BigInt(first.scanned_prepare!) }
    return { events, scannedTo, isEnd: (first.scanned ?? 0) < window, moreHidden: first.more_hidden }
  }

  async function* subscribeToAll(opts: SubscribeOptions = {}): AsyncIterable<RecordedEvent> {
    let cursor = opts.after ?? START
    let hiddenRetryMs = 0
    const wakeup = createWakeup(notifications.subscribe)
    try {
      while (!opts.signal?.aborted) {
        wakeup.arm()
        const page = await readAll({ after: cursor, maxCount: opts.maxCount, eventTypes: opts.eventTypes })
        for (const event of page.events) yield event
        cursor = page.scannedTo
        if (!page.isEnd) continue
        hiddenRetryMs = page.moreHidden ? nextHiddenRetryMs(hiddenRetryMs, pollIntervalMs) : 0
        await wakeup.sleep(hiddenRetryMs || pollIntervalMs, opts.signal)
      }
    } finally {
      wakeup.close()
    }
  }

  async function visibilityLag(): Promise<VisibilityLag> {
    const { rows } = await pool.query<{ hidden: string; oldest: Date | null; pid: number | null; xact_start: Date | null; state: string | null; application_name: string | null }>(`
      WITH horizon AS (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS xmin)
      SELECT (SELECT count(*) FROM events, horizon WHERE transaction_id >= horizon.xmin) AS hidden,
             (SELECT min(created_at) FROM events, horizon WHERE transaction_id >= horizon.xmin) AS oldest,
             a.pid, a.xact_start, a.state, a.application_name
      FROM horizon LEFT JOIN pg_stat_activity a ON a.backend_xid = xid(horizon.xmin)`)
    const row = rows[0]!
    const hiddenEvents = Number(row.hidden)
    return {
      hiddenEvents,
      hiddenForMs: row.oldest ? Math.max(0, Date.now() - row.oldest.getTime()) : 0,
      blocker: hiddenEvents > 0 && row.pid !== null ? { pid: row.pid, startedAt: row.xact_start, state: row.state, application: row.application_name } : null,
    }
  }

  async function lastPosition(): Promise<Position> {
    const { rows } = await pool.query<{ commit: string; prepare: string }>('SELECT transaction_id::text AS commit, global_position::text AS prepare FROM events ORDER BY transaction_id DESC, global_position DESC LIMIT 1')
    return rows[0] ? { commit: BigInt(rows[0].commit), prepare: BigInt(rows[0].prepare) } : START
  }

  return {
    kind: 'postgres',
    appendToStream,
    appendToStreams,
    readStream,
    readAll,
    subscribeToAll,
    onAppended: notifications.subscribe,
    visibilityLag,
    lastPosition,
    close: notifications.close,
  }
}

type AppendedRow = { commit: string; prepare: string; revision: string }

/** The events as the append statements' parallel arrays: ids, types, schema versions, data, metadata. */
const eventColumns = (events: readonly NewEvent[]) => [
  events.map((e) => e.id ?? randomUUID()),
  events.map((e) => e.type),
  events.map((e) => e.schemaVersion ?? 1),
  events.map((e) => JSON.stringify(e.data ?? null)),
  events.map((e) => JSON.stringify(e.metadata ?? {})),
]

/** One stream's APPEND_SQL on a client, refused with WrongExpectedRevisionError when its expectation does not hold. */
function appendOf({ streamName, events, expectedRevision: expected }: StreamWrite): (client: pg.PoolClient) => Promise<AppendedRow[]> {
  if (events.length === 0) throw new Error(`Expected at least one event to append to ${streamName}`)
  const values = [streamName, typeof expected === 'bigint' ? 'exact' : expected, typeof expected === 'bigint' ? expected.toString() : null, ...eventColumns(events)]
  return async (client) => {
    const { rows } = await client.query<AppendedRow>({ name: 'es_append', text: APPEND_SQL, values })
    if (rows.length === 0) throw await conflict(client, streamName, expected)
    return rows
  }
}

/** Writes (and guards) in one crm_append_streams call; a failed expectation is WrongExpectedRevisionError naming its stream. */
async function appendStreams(client: pg.PoolClient, writes: readonly StreamWrite[], guards: readonly StreamGuard[]): Promise<AppendedRow[]> {
  const streamOf = writes.flatMap((write, i) => write.events.map(() => i + 1))
  const events = writes.flatMap((write) => write.events)
  const expectations = new Map<string, ExpectedRevision>([...guards.map((g) => [g.streamName, g.revision] as const), ...writes.map((w) => [w.streamName, w.expectedRevision] as const)])
  try {
    const { rows } = await client.query<AppendedRow>({
      name: 'es_append_streams',
      text: APPEND_STREAMS_SQL,
      values: [
        writes.map((w) => w.streamName),
        writes.map((w) => (typeof w.expectedRevision === 'bigint' ? 'exact' : w.expectedRevision)),
        writes.map((w) => (typeof w.expectedRevision === 'bigint' ? w.expectedRevision.toString() : null)),
        guards.map((g) => g.streamName),
        guards.map((g) => (g.revision === 'no_stream' ? null : g.revision.toString())),
        streamOf,
        ...eventColumns(events),
      ],
    })
    return rows
  } catch (error) {
    const { code, detail, hint } = error as { code?: string; detail?: string; hint?: string }
    if (code !== WRONG_REVISION || detail === undefined) throw error
    const actual = BigInt(hint ?? '-1')
    throw new WrongExpectedRevisionError(detail, expectations.get(detail) ?? 'any', actual < 0n ? 'no_stream' : actual)
  }
}

async function streamRevision(client: pg.PoolClient, streamName: string): Promise<bigint | 'no_stream'> {
  const { rows } = await client.query<{ revision: string | null }>({ name: 'es_stream_revision', text: STREAM_REVISION_SQL, values: [streamName] })
  const actual = rows[0]?.revision
  return actual == null ? 'no_stream' : BigInt(actual)
}

async function conflict(client: pg.PoolClient, streamName: string, expected: ExpectedRevision): Promise<WrongExpectedRevisionError> {
  return new WrongExpectedRevisionError(streamName, expected, await streamRevision(client, streamName))
}

function toRecordedEvent(row: EventRow): RecordedEvent {
  return {
    id: row.event_id,
    type: row.event_type,
    data: row.data,
    metadata: row.metadata,
    schemaVersion: row.schema_version,
    streamName: row.stream_name,
    revision: BigInt(row.revision),
    position: { commit: BigInt(row.commit), prepare: BigInt(row.prepare) },
    createdAt: row.created_at,
  }
}
