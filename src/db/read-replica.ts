import { AsyncLocalStorage } from 'node:async_hooks'
import type { PostgresPool } from 'kysely'
import type pg from 'pg'
import { delay } from '../eventstore/wakeup.ts'

/** How often the replica's replay position is read while some read waits for it (one query for all waiting reads). */
const REPLAY_POLL_MS = 10

/**
 * Reads served by a PostgreSQL streaming replica (DATABASE_READ_URL). The app keeps one `db`:
 * its pool hands out replica connections to work started inside `serve` (the API's GET requests,
 * from after authentication on) and primary connections to everything else (commands, projections,
 * authentication, background work). Routing in the pool, by the request's async context, instead
 * of a second `db` handed to every query route: no route can forget it, and a use case a GET runs
 * (e.g. creating the default pipeline) still appends through the event store, on the primary.
 */
export type ReadReplica = {
  /** The pool to build `db` on (kysely's PostgresPool): replica inside `serve`, primary elsewhere. */
  readonly pool: PostgresPool
  /** Runs `work`, and everything it starts, against the replica. */
  serve<T>(work: () => T): T
  /** Whether the current async context reads from the replica. */
  serving(): boolean
  /** Runs `work`, and everything it starts, against the primary (e.g. a wait whose poll must not read a lagging replica). */
  onPrimary<T>(work: () => T): T
  /**
   * Resolves true once the replica has replayed everything the primary had written when this was
   * called (so every transaction committed before then), false if not by `deadline` (epoch ms).
   */
  replayedPrimary(deadline: number): Promise<boolean>
}

export function createReadReplica(primary: pg.Pool, replica: pg.Pool): ReadReplica {
  const context = new AsyncLocalStorage<true>()
  const replay = replayWatcher(replica)
  return {
    pool: {
      connect: () => (context.getStore() ? replica : primary).connect(),
      end: async () => {
        await Promise.all([primary.ended ? undefined : primary.end(), replica.ended ? undefined : replica.end()])
      },
    },
    serve: (work) => context.run(true, work),
    serving: () => context.getStore() === true,
    onPrimary: (work) => context.exit(work),
    async replayedPrimary(deadline) {
      // The insert position, not the write position: it also covers a commit record not yet flushed (asynchronous commit).
      const { rows } = await primary.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn')
      return replay.reached(parseLsn(rows[0]!.lsn), deadline)
    },
  }
}

/** `16/B374D848` → a number that orders as the LSN does. */
export function parseLsn(text: string): bigint {
  const [high, low] = text.split('/')
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`)
}

type Waiter = { lsn: bigint; resolve: (reached: boolean) => void; deadline: number }

/** One poll of the replica's replay position for every read waiting on it; the position only grows, so the last one read stays true. */
function replayWatcher(replica: pg.Pool) {
  const waiters = new Set<Waiter>()
  let replayed = 0n
  let polling = false

  async function poll(): Promise<void> {
    polling = true
    while (waiters.size > 0) {
      try {
        // A server that is not (or no longer) in recovery holds everything it will ever serve.
        const { rows } = await replica.query<{ standby: boolean; lsn: string | null }>('SELECT pg_is_in_recovery() AS standby, pg_last_wal_replay_lsn()::text AS lsn')
        const { standby, lsn } = rows[0]!
        if (!standby) replayed = BigInt(Number.MAX_SAFE_INTEGER) << 32n
        else if (lsn) replayed = parseLsn(lsn)
      } catch {
        // Replica unreachable: the waiting reads time out, as they would on a lagging one.
      }
      const now = Date.now()
      for (const waiter of waiters) {
        if (waiter.lsn <= replayed) waiter.resolve(true)
        else if (now >= waiter.deadline) waiter.resolve(false)
      }
      if (waiters.size > 0) await delay(REPLAY_POLL_MS)
    }
    polling = false
  }

  return {
    reached(lsn: bigint, deadline: number): Promise<boolean> {
      if (lsn <= replayed) return Promise.resolve(true)
      return new Promise((resolve) => {
        const waiter: Waiter = {
          lsn,
          deadline,
          resolve: (reached) => {
            waiters.delete(waiter)
            resolve(reached)
          },
        }
        waiters.add(waiter)
        if (!polling) void poll()
      })
    },
  }
}
