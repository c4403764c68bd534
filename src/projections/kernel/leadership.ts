import pg from 'pg'
import { endQuietly } from '../../db/quiet-end.ts'
import { delay } from '../../eventstore/wakeup.ts'

export type Leadership = {
  readonly isLeader: boolean
  /** Resolves once this process holds the lock, retrying every `retryMs`; rejects when aborted. */
  acquire(signal: AbortSignal): Promise<void>
  /** Resolves when leadership is lost (the lock connection died). */
  lost(): Promise<void>
  release(): Promise<void>
}

// Advisory locks are per database, so every process using this database competes for the same key.
const LOCK_KEY = 0x63726d5f70726f6an // "crm_proj"

/**
 * One process per database applies projections: the holder of a session-level advisory lock on a
 * dedicated connection. If that process dies, its connection closes, the lock is released, and
 * another process takes over within `retryMs`. Exactly-once does not depend on this lock (the
 * checkpoint row lock guarantees it); the lock only keeps processes from doing the work twice.
 */
export function createLeadership(poolOptions: pg.PoolConfig, retryMs: number): Leadership {
  let client: pg.Client | null = null
  let onLost: (() => void) | null = null
  const lostPromise = () => new Promise<void>((resolve) => (onLost = resolve))
  let lost = lostPromise()

  async function tryOnce(): Promise<boolean> {
    const candidate = new pg.Client({ ...poolOptions, application_name: 'crm-deals-projection-leader' })
    candidate.on('error', () => {})
    try {
      await candidate.connect()
      const { rows } = await candidate.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [LOCK_KEY.toString()])
      if (rows[0]?.locked) {
        client = candidate
        candidate.removeAllListeners('error')
        candidate.on('error', dropLeadership)
        candidate.on('end', dropLeadership)
        return true
      }
    } catch {
      // Database unreachable: try again later.
    }
    await candidate.end().catch(() => {})
    return false
  }

  function dropLeadership(): void {
    if (!client) return
    client = null
    onLost?.()
    lost = lostPromise()
  }

  return {
    get isLeader() {
      return client !== null
    },
    async acquire(signal) {
      while (!client) {
        if (signal.aborted) throw new Error('Leadership acquisition aborted')
        if (await tryOnce()) return
        await delay(retryMs, signal)
      }
    },
    lost: () => lost,
    async release() {
      const held = client
      client = null
      if (held) await endQuietly(held)
    },
  }
}
