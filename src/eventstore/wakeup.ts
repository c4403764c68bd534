/**
 * Resolves when a listener fires, after `timeoutMs`, or when the signal aborts, whichever comes first.
 * Subscribers and projection loops sleep on this between pages: notifications make them prompt,
 * the timeout is the polling fallback when a notification is lost (or never sent, as on an abort).
 */
export function sleepUntilWoken(subscribe: (wake: () => void) => () => void, timeoutMs: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve()
    const done = () => {
      clearTimeout(timer)
      unsubscribe()
      signal?.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, timeoutMs)
    const unsubscribe = subscribe(done)
    signal?.addEventListener('abort', done, { once: true })
  })
}

/** Back-off for re-reading while committed events are hidden behind an older open transaction. */
export function nextHiddenRetryMs(previousMs: number, ceilingMs: number): number {
  return Math.min(ceilingMs, previousMs === 0 ? 2 : previousMs * 2)
}
