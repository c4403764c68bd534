import cluster from 'node:cluster'
import { onStopSignal, runClusterPrimary } from './cluster.ts'
import { ConfigError, loadConfig } from './config.ts'
import { buildApp } from './http/app.ts'
import { createLogger } from './logger.ts'
import { openRuntime } from './runtime.ts'

async function main(): Promise<void> {
  const { config, warnings } = loadConfig()
  const logger = createLogger(config.logLevel)
  // The workers of a cluster load the same configuration: its warnings are the primary's to give.
  if (cluster.isPrimary) for (const warning of warnings) logger.warn(warning)
  if (config.webConcurrency > 1 && cluster.isPrimary) return runClusterPrimary(config, logger)
  const runtime = await openRuntime(config, logger, 'server')
  const app = await buildApp({ ...runtime, config, logger, clock: () => new Date() })
  // Migrated by now; the background work starts in order (see Runtime.start).
  runtime.start()
  await app.listen({ port: config.port, host: config.host })

  // SIGTERM: stop accepting, let in-flight requests finish, stop projectors between batches, then exit.
  let closing = false
  const shutdown = async (signal: string) => {
    if (closing) return
    closing = true
    logger.info({ signal }, 'shutting down')
    setTimeout(() => {
      logger.error('shutdown timed out; exiting')
      process.exit(1)
    }, config.shutdownTimeoutMs).unref()
    await app.close()
    await runtime.close()
    logger.info('stopped')
    process.exit(0)
  }
  onStopSignal(shutdown)
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) console.error(error.message)
  else console.error(error)
  process.exit(1)
})
