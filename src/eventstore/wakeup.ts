export type Wakeup = {
  /** Call before reading: a wake-up that arrives after this cuts the next sleep short, so none is lost between read and sleep. */
  arm(): void
  /** Resolves when woken (or already woken since arm), after `timeoutMs`, or when the signal aborts. */
  sleep(timeoutMs: number, signal?: AbortSignal): Promise<void>
  close(): void
}

/**
 * Subscribers and projection loops sleep on this between pages: notifications make them prompt,
 * the timeout is the polling fallback when a notification is lost or never sent (an aborted append).
 */
export function createWakeup(subscribe: (listener: () => void) => () => void): Wakeup {
  let woken = false
  let wakeSleeper: (() => void) | null = null
  const unsubscribe = subscribe(() => {
    woken = true
    wakeSleeper?.()
  })
  return {
    arm: () => {
      woken = false
    },
    sleep: (timeoutMs, signal) =>
      new Promise<void>((resolve) => {
        if (woken || signal?.aborted) return resolve()
        const done = () => {
          clearTimeout(timer)
          signal?.removeEventListener('abort', done)
          wakeSleeper = null
          resolve()
        }
        const timer = setTimeout(done, timeoutMs)
        wakeSleeper = done
        signal?.addEventListener('abort', done, { once: true })
      }),
    close: () => {
      unsubscribe()
      wakeSleeper?.()
    },
  }
}

/** Back-off for re-reading while committed events are hidden behind an older open transaction. */
export function nextHiddenRetryMs(previousMs: number, ceilingMs: number): number {
  return Math.min(ceilingMs, previousMs === 0 ? 2 : previousMs * 2)
}

/** A plain delay that ends early when the signal aborts. */
export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve()
    const done = () => {
      clearTimeout(timer)
      signal?.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal?.addEventListener('abort', done, { once: true })
  })
}

/** Resolves when the signal aborts, at once if it already has (a listener added after abort never fires). */
export function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve()
    signal.addEventListener('abort', () => resolve(), { once: true })
  })
}
