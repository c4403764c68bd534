import { randomUUID } from 'node:crypto'
import type pg from 'pg'
import type { NewSubjectKey, StreamGuard, StreamWrite } from './event-store.ts'

/** What one append of a batch came to: its last event's position and revision, or why it failed. */
export type AppendOutcome =
  | { ok: true; commit: string; prepare: string; revision: string }
  | { ok: false; code: string; stream: string | null; actual: bigint | null; message: string | null }

export type GroupCommitter = {
  /** Queues one append (its writes and new data keys all or none, each guard checked); answers its own outcome once its batch has committed. */
  append(writes: readonly StreamWrite[], guards: readonly StreamGuard[], newKeys?: readonly NewSubjectKey[]): Promise<AppendOutcome>
}

/**
 * PostgreSQL caches 64 subtransaction ids per backend (PGPROC_MAX_CACHED_SUBXIDS); a batch runs
 * each append in a subtransaction of its own, and beyond 64 every other backend's snapshot would
 * have to look them up in pg_subtrans while it is open.
 */
const MAX_BATCH = 64
const DEADLOCK_DETECTED = '40P01'
const APPEND_BATCH_SQL = 'SELECT request, commit, prepare, revision, failure, stream, actual::text, message FROM crm_append_batch($1)'

type Pending = { request: string; resolve(outcome: AppendOutcome): void; reject(error: unknown): void }
type OutcomeRow = { request: number; commit: string | null; prepare: string | null; revision: string | null; failure: string | null; stream: string | null; actual: string | null; message: string | null }

/**
 * Group commit at the application level (issue 20): the appends of concurrent commands share one
 * statement of crm_append_batch (migrations/…-append-batch-function.ts), so one transaction, one
 * round trip and one WAL flush, and one `committed()` (hence one NOTIFY) per batch. Each append
 * keeps its own outcome: the function runs it in a subtransaction, so a failed guard or expectation
 * undoes and fails that append only.
 *
 * One batch is in flight at a time. When none is, an append is sent on the next turn of the event
 * loop (setImmediate, so the appends of requests handled in the same turn go together): no added
 * latency when the process is quiet. While one is, appends queue and go together as the next
 * batch once it has committed, so batches grow with the load by themselves. One at a time also
 * means this process never holds two transactions' stream locks against itself. The price: an
 * append waits behind a batch that waits for a stream lock held elsewhere; only appends (one
 * statement each, never a client-held transaction) take those locks, so that wait is another
 * batch's duration.
 */
export function createGroupCommitter(pool: pg.Pool, committed: () => void): GroupCommitter {
  const queue: Pending[] = []
  let busy = false

  function schedule(): void {
    if (busy || queue.length === 0) return
    busy = true
    setImmediate(() => void flush())
  }

  async function flush(): Promise<void> {
    const batch = queue.splice(0, MAX_BATCH)
    const rows = await run(batch).catch((error: unknown) => {
      // Batches lock in key order, so PostgreSQL should never find them deadlocked; if it does
      // (a lock taken outside the event store), the appends lose nothing by going again.
      if ((error as { code?: string }).code === DEADLOCK_DETECTED) queue.unshift(...batch)
      else for (const pending of batch) pending.reject(error)
      return []
    })
    busy = false
    schedule()
    if (rows.some((row) => row.failure === null)) committed()
    for (const row of rows) batch[row.request - 1]!.resolve(outcomeOf(row))
  }

  async function run(batch: readonly Pending[]): Promise<OutcomeRow[]> {
    // A checked-out client survives a failed statement; pool.query() would discard the connection.
    const client = await pool.connect()
    try {
      const { rows } = await client.query<OutcomeRow>({ name: 'es_append_batch', text: APPEND_BATCH_SQL, values: [`[${batch.map((p) => p.request).join(',')}]`] })
      return rows
    } finally {
      client.release()
    }
  }

  function append(writes: readonly StreamWrite[], guards: readonly StreamGuard[], newKeys: readonly NewSubjectKey[] = []): Promise<AppendOutcome> {
    // Serialized here, so events that cannot be (a bigint in the data) fail their own append only.
    const request = JSON.stringify(requestOf(writes, guards, newKeys))
    return new Promise((resolve, reject) => {
      queue.push({ request, resolve, reject })
      schedule()
    })
  }

  return { append }
}

/** One append as crm_append_streams' arguments, by name, and the data keys to store with it (crm_append_batch). */
function requestOf(writes: readonly StreamWrite[], guards: readonly StreamGuard[], newKeys: readonly NewSubjectKey[]) {
  const events = writes.flatMap((write) => write.events)
  return {
    streams: writes.map((w) => w.streamName),
    modes: writes.map((w) => (typeof w.expectedRevision === 'bigint' ? 'exact' : w.expectedRevision)),
    expected: writes.map((w) => (typeof w.expectedRevision === 'bigint' ? w.expectedRevision.toString() : null)),
    guards: guards.map((g) => g.streamName),
    guard_revisions: guards.map((g) => (g.revision === 'no_stream' ? null : g.revision.toString())),
    stream_of: writes.flatMap((write, i) => write.events.map(() => i + 1)),
    ids: events.map((e) => e.id ?? randomUUID()),
    types: events.map((e) => e.type),
    versions: events.map((e) => e.schemaVersion ?? 1),
    data: events.map((e) => e.data ?? null),
    metadata: events.map((e) => e.metadata ?? {}),
    keys: newKeys.map((key) => ({ subject: key.subject, key: key.wrappedKey.toString('hex') })),
  }
}

function outcomeOf(row: OutcomeRow): AppendOutcome {
  if (row.failure === null) return { ok: true, commit: row.commit!, prepare: row.prepare!, revision: row.revision! }
  return { ok: false, code: row.failure, stream: row.stream, actual: row.actual === null ? null : BigInt(row.actual), message: row.message }
}
