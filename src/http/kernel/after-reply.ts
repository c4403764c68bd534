import type { FastifyBaseLogger, FastifyInstance } from 'fastify'

declare module 'fastify' {
  interface FastifyInstance {
    /** Work a route does after its answer is sent (see registerAfterReply). */
    afterReply: AfterReply
  }
}

export type AfterReply = {
  /** Starts `work` once the current answer has gone out; a failure is logged as `what` failed, never lost. */
  run(log: FastifyBaseLogger, what: string, work: () => Promise<void>): void
  /** Resolves when every piece of work started so far has ended (tests wait on it; so does close). */
  settled(): Promise<void>
}

/**
 * Work a route must not make its client wait for, because the wait itself would tell something:
 * the sign-in link request answers before it looks the address up, so an address with an account
 * and one without take the same time (issue 35). The work starts on the next turn of the event loop,
 * after Fastify has written the answer; `app.close()` waits for whatever is still running, so a
 * shutdown does not cut a sign-in mail off midway.
 */
export function registerAfterReply(app: FastifyInstance): void {
  const running = new Set<Promise<void>>()
  const afterReply: AfterReply = {
    run(log, what, work) {
      const done = new Promise<void>((resolve) => setImmediate(resolve))
        .then(work)
        .catch((error: unknown) => log.error({ err: error }, `${what} failed`))
        .finally(() => running.delete(done))
      running.add(done)
    },
    async settled() {
      while (running.size > 0) await Promise.all(running)
    },
  }
  app.decorate('afterReply', afterReply)
  app.addHook('onClose', () => afterReply.settled())
}
