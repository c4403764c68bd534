import { sql } from 'kysely'
import type { Db } from '../../db/database.ts'
import { singleFlight } from './single-flight.ts'

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

/** A source that is no projector: the identity tables (users, profiles), stamped by the row their triggers move (migration identity-stamp). */
export const IDENTITY = 'identity'

/**
 * The stamps (version and position) of the named projectors' checkpoints, and IDENTITY's where
 * named, in one statement; a projector without one (tables not built yet) has none, and nothing
 * of it is cached.
 */
export async function readStamps(db: Db, names: readonly string[]): Promise<Stamps> {
  const { rows } = await sql<{ name: string; stamp: string }>`SELECT name, version || ':' || position_commit || ':' || position_prepare AS stamp FROM projection_checkpoints WHERE name = ANY(${names}::text[])
    UNION ALL SELECT ${IDENTITY}, version::text FROM identity_stamp WHERE ${IDENTITY} = ANY(${names}::text[])`.execute(db)
  return new Map(rows.map((r) => [r.name, r.stamp]))
}

/** A loaded value, (for values that depend on the clock, like a stalled count) the instants it holds for, [from, until) in epoch ms, and `keep: false` for one answered but not kept (too big to hold). */
export type Timed<V> = { value: V; from?: number; until?: number; keep?: boolean }

export type StampedCache = {
  /** The value kept under `key` at `stamp` (and valid at `at`), or `load`'s, kept when `stamp` is known. A key names one kind of value: the caller's keys keep the types apart. */
  get<V>(key: string, stamp: string | undefined, at: number, load: () => Promise<Timed<V>>): Promise<V>
  /** As `get`, with the instants the value holds for: for a caller that keeps what it builds of it. */
  timed<V>(key: string, stamp: string | undefined, at: number, load: () => Promise<Timed<V>>): Promise<Timed<V>>
}

/** The stamps of `names` as one key part, or undefined where one has none (then nothing may be kept or shared). */
export function stampsKey(stamps: Stamps, names: readonly string[]): string | undefined {
  const parts = names.map((name) => stamps.get(name))
  return parts.every((part) => part !== undefined) ? parts.join(' ') : undefined
}

const holdsAt = (value: Timed<unknown>, at: number) => (value.from ?? -Infinity) <= at && at < (value.until ?? Infinity)

/**
 * A bounded map (least recently used entry out first) of values by key, each valid at one stamp.
 * Misses of one key at one stamp load once: requests that miss while that load runs await it
 * (single-flight.ts), and load their own only when its value does not hold at their instant.
 */
export function stampedCache(maxEntries: number): StampedCache {
  const entries = new Map<string, Timed<unknown> & { stamp: string }>()
  const shared = singleFlight()
  async function timed<V>(key: string, stamp: string | undefined, at: number, load: () => Promise<Timed<V>>): Promise<Timed<V>> {
    const hit = entries.get(key)
    if (hit && hit.stamp === stamp && holdsAt(hit, at)) {
      entries.delete(key)
      entries.set(key, hit)
      return hit as Timed<V>
    }
    if (stamp === undefined) return load()
    const joined = await shared(`${stamp}\n${key}`, load)
    const loaded = holdsAt(joined, at) ? joined : await load()
    if (loaded.keep !== false) {
      entries.delete(key)
      entries.set(key, { ...loaded, stamp })
      if (entries.size > maxEntries) entries.delete(entries.keys().next().value!)
    }
    return loaded
  }
  return { timed, get: async (key, stamp, at, load) => (await timed(key, stamp, at, load)).value }
}
