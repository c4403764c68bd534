/**
 * Concurrent calls for the same key share one load (issue 36: a cold read's stampede). Right after
 * a write, every request for the same list totals or board missed the cache at once and each
 * computed the same answer: dozens of PostgreSQL backends busy with one query. The first caller's
 * load runs; later callers await its answer, or its error. Nothing is kept once it settles: keeping
 * is the cache's business (stamped-cache.ts), so a key must name everything the answer depends on,
 * the read models' stamps included, for a joiner to be served what it would have loaded itself.
 */
export type SingleFlight = <V>(key: string, load: () => Promise<V>) => Promise<V>

export function singleFlight(): SingleFlight {
  const inFlight = new Map<string, Promise<unknown>>()
  return <V>(key: string, load: () => Promise<V>): Promise<V> => {
    const running = inFlight.get(key)
    if (running) return running as Promise<V>
    const started = load().finally(() => inFlight.delete(key))
    inFlight.set(key, started)
    return started
  }
}
