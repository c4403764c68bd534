import type pg from 'pg'
import { START, SubjectKeyExistsError, WrongExpectedRevisionError } from './event-store.ts'
import type { AppendOptions, AppendResult, EventStore, MultiAppendOptions, NewSubjectKey, ExpectedRevision, NewEvent, ReadAllOptions, ReadAllPage, RecordedEvent, StreamGuard, StreamWrite, SubscribeOptions, VisibilityLag, Position } from './event-store.ts'
import { createGroupCommitter } from './postgres-group-commit.ts'
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
 * Appends go through the group committer (postgres-group-commit.ts): concurrent appends of this
 * process share one statement, a call of crm_append_batch (migrations/…-append-batch-function.ts),
 * which runs each as a call of crm_append_streams (migrations/…-append-streams-function.ts) in a
 * subtransaction of its own. For each append, and so for a guarded one:
 *   1. the appended streams' locks exclusive and the guards' shared, taken by the batch in key
 *      order before anything is written, hence before the transaction gets its id. Shared, so
 *      guarded appends against one guard stream never wait for each other; an append to the guard
 *      stream needs it exclusive, so it waits for them to end, and those queued after it wait for
 *      it. Key order: guards that cross (A guarded by B while B is guarded by A) and batches of
 *      different processes cannot deadlock.
 *   2. each guard's revision, then each stream's expectation, read by a statement of its own, hence
 *      a fresh snapshot taken under the locks: every append to those streams that ever held a lock
 *      before us has committed and is visible (as are the earlier appends of the same batch), and
 *      none can commit before we do. Mismatch: SQLSTATE CRM01 (the stream, its revision), that
 *      append's writes undone, its neighbours' kept.
 *   3. the events, stream by stream; the batch's commit makes them visible together.
 * So once an append to the guard stream has committed, no guarded append that expected the older
 * revision can commit; and the guarded appends that did commit first precede its events in the log.
 * A multi-stream append (a name claim with the record that holds it): all commit or none.
 */
const WRONG_REVISION = 'CRM01'
/** A new data key's subject had one already (migrations/…-append-batch-subject-keys.ts). */
const KEY_EXISTS = 'CRM02'

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

  const committer = createGroupCommitter(pool, () => notifications.appended())

  async function appendToStream(streamName: string, events: readonly NewEvent[], opts: AppendOptions = {}): Promise<AppendResult> {
    return append([{ streamName, events, expectedRevision: opts.expectedRevision ?? 'any' }], opts.guard ? [opts.guard] : [], opts.newKeys ?? [])
  }

  async function appendToStreams(writes: readonly StreamWrite[], opts: MultiAppendOptions = {}): Promise<AppendResult> {
    if (writes.length === 0) throw new Error('Expected at least one stream to append to')
    return append(writes, opts.guards ?? [], opts.newKeys ?? [])
  }

  /** One append through the group committer, its outcome as the port answers it. */
  async function append(writes: readonly StreamWrite[], guards: readonly StreamGuard[], newKeys: readonly NewSubjectKey[]): Promise<AppendResult> {
    for (const write of writes) if (write.events.length === 0) throw new Error(`Expected at least one event to append to ${write.streamName}`)
    const expectations = new Map<string, ExpectedRevision>([...guards.map((g) => [g.streamName, g.revision] as const), ...writes.map((w) => [w.streamName, w.expectedRevision] as const)])
    for (;;) {
      const outcome = await committer.append(writes, guards, newKeys)
      if (outcome.ok) return { nextExpectedRevision: BigInt(outcome.revision), position: { commit: BigInt(outcome.commit), prepare: BigInt(outcome.prepare) } }
      if (outcome.code === WRONG_REVISION && outcome.stream !== null) {
        const actual = outcome.actual ?? -1n
        throw new WrongExpectedRevisionError(outcome.stream, expectations.get(outcome.stream) ?? 'any', actual < 0n ? 'no_stream' : actual)
      }
      if (outcome.code === KEY_EXISTS) throw new SubjectKeyExistsError(newKeys.map((key) => key.subject))
      // Under the locks a revision is only taken by a row written past them (by hand); 'any' and
      // 'stream_exists' hold whatever it holds, so they go again, other expectations have lost.
      if (outcome.code === UNIQUE_VIOLATION && writes.every((w) => w.expectedRevision === 'any' || w.expectedRevision === 'stream_exists')) continue
      if (outcome.code === UNIQUE_VIOLATION) throw new WrongExpectedRevisionError(writes[0]!.streamName, writes[0]!.expectedRevision, await streamRevision(writes[0]!.streamName))
      throw Object.assign(new Error(outcome.message ?? `append failed with SQLSTATE ${outcome.code}`), { code: outcome.code })
    }
  }

  async function streamRevision(streamName: string): Promise<bigint | 'no_stream'> {
    const { rows } = await pool.query<{ revision: string | null }>({ name: 'es_stream_revision', text: STREAM_REVISION_SQL, values: [streamName] })
    const actual = rows[0]?.revision
    return actual == null ? 'no_stream' : BigInt(actual)
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
