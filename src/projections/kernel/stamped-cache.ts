import { sql } from 'kysely'
import type { Db } from '../../db/database.ts'

/**
 * Per-process caches of what reads derive from read models (issue 20: a list's totals, its pick
 * lists), kept while the projectors owning those tables stand still. A projector moves its
 * checkpoint row in the transaction that changes its tables (follow.ts), so the row's version and
 * position (its stamp) change with every change to what it owns, a rebuild's swap included.
 *
 * Read-your-writes holds by construction: a request reads the stamps after its `min_position` wait
 * and before anything it may keep; a value is kept under the stamp read before it was loaded, so it
 * is never older than that stamp, and a request is served only a value kept under the very stamp it
 * read. Across processes and on a read replica the same holds: the stamp is read where the data is.
 */
export type Stamps = ReadonlyMap<string, string>

/** The stamps (version and position) of the named projectors' checkpoints, in one statement; a projector without one (tables not built yet) has none, and nothing of it is cached. */
export async function readStamps(db: Db, names: readonly string[]): Promise<Stamps> {
  const { rows } = await sql<{ name: string; stamp: string }>`SELECT name, version || ':' || position_commit || ':' || position_prepare AS stamp FROM projection_checkpoints WHERE name = ANY(${names}::text[])`.execute(db)
  return new Map(rows.map((r) => [r.name, r.stamp]))
}

/** A loaded value, (for values that depend on the clock, like a stalled count) the instants it holds for, [from, until) in epoch ms, and `keep: false` for one answered but not kept (too big to hold). */
export type Timed<V> = { value: V; from?: number; until?: number; keep?: boolean }

export type StampedCache = {
  /** The value kept under `key` at `stamp` (and valid at `at`), or `load`'s, kept when `stamp` is known. A key names one kind of value: the caller's keys keep the types apart. */
  get<V>(key: string, stamp: string | undefined, at: number, load: () => Promise<Timed<V>>): Promise<V>
}

/** A bounded map (least recently used entry out first) of values by key, each valid at one stamp. */
export function stampedCache(maxEntries: number): StampedCache {
  const entries = new Map<string, Timed<unknown> & { stamp: string }>()
  return {
    async get<V>(key: string, stamp: string | undefined, at: number, load: () => Promise<Timed<V>>): Promise<V> {
      const hit = entries.get(key)
      if (hit && hit.stamp === stamp && (hit.from ?? -Infinity) <= at && at < (hit.until ?? Infinity)) {
        entries.delete(key)
        entries.set(key, hit)
        return hit.value as V
      }
      const loaded = await load()
      if (stamp !== undefined && loaded.keep !== false) {
        entries.delete(key)
        entries.set(key, { ...loaded, stamp })
        if (entries.size > maxEntries) entries.delete(entries.keys().next().value!)
      }
      return loaded.value
    },
  }
}
