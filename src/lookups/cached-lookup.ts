export type CachedLookupOptions<A extends unknown[], V> = {
  load: (...args: A) => Promise<V>
  keyOf: (...args: A) => string
  /** Bounds memory: past this many entries the least recently used one goes. */
  maxEntries: number
  /** Bounds staleness should an invalidation be lost (a NOTIFY that failed to send). */
  maxAgeMs: number
  /** False while invalidations might be missed (e.g. the LISTEN connection is down): every call loads, nothing is kept. */
  trusted: () => boolean
  now?: () => number
}

export type CachedLookup<A extends unknown[], V> = {
  get(...args: A): Promise<V>
  /** Forgets every entry, and every load already in flight (which may have read the old rows). */
  clear(): void
}

/**
 * A per-process, bounded, read-through cache of one lookup. Only found values are kept (undefined
 * is a miss every time: nothing to invalidate when a row appears). Values are frozen: they are
 * shared by every request that reads them, and one that mutated its copy would change the others'.
 *
 * The generation guards the race every read-through cache has: a load that started before a write
 * committed may return the old row after `clear()` ran; it is answered but not kept.
 */
export function cachedLookup<A extends unknown[], V>(options: CachedLookupOptions<A, V>): CachedLookup<A, V> {
  const { load, keyOf, maxEntries, maxAgeMs, trusted, now = () => performance.now() } = options
  const entries = new Map<string, { value: V; at: number }>()
  let generation = 0

  return {
    async get(...args) {
      if (!trusted()) return load(...args)
      const key = keyOf(...args)
      const hit = entries.get(key)
      entries.delete(key)
      if (hit && now() - hit.at < maxAgeMs) {
        entries.set(key, hit)
        return hit.value
      }
      const started = generation
      const at = now()
      const value = await load(...args)
      if (value !== undefined && started === generation && trusted()) {
        entries.delete(key)
        entries.set(key, { value: deepFreeze(value), at })
        if (entries.size > maxEntries) entries.delete(entries.keys().next().value!)
      }
      return value
    },
    clear() {
      generation++
      entries.clear()
    },
  }
}

function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value) || value instanceof Date) return value
  for (const child of Object.values(value)) deepFreeze(child)
  return Object.freeze(value)
}
