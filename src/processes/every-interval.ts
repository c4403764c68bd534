import type { Logger } from 'pino'

/**
 * Runs `work` every `intervalMs` (unref'd: it never keeps the process alive). A run longer than the
 * interval is not joined by another; a failed run is logged and tried again at the next interval.
 * `stop` clears the timer and waits for a run in progress.
 */
export function everyInterval(work: () => Promise<unknown>, intervalMs: number, log: Logger, failure: string): { start(): void; stop(): Promise<void> } {
  let timer: NodeJS.Timeout | undefined
  let running: Promise<unknown> = Promise.resolve()
  return {
    start() {
      let busy = false
      timer = setInterval(() => {
        if (busy) return
        busy = true
        running = work()
          .catch((error: unknown) => log.warn({ err: error }, failure))
          .finally(() => (busy = false))
      }, intervalMs)
      timer.unref()
    },
    async stop() {
      clearInterval(timer)
      await running
    },
  }
}
