import type pg from 'pg'
import type { Logger } from 'pino'
import type { Config } from './config.ts'
import { createDb, createPool } from './db/database.ts'
import type { Db } from './db/database.ts'
import { createDatabase, withDatabase } from './db/databases.ts'
import { createReadReplica } from './db/read-replica.ts'
import type { ReadReplica } from './db/read-replica.ts'
import { migrateToLatest } from './db/migrate.ts'
import type { EventStore } from './eventstore/event-store.ts'
import { createPostgresEventStore } from './eventstore/postgres.ts'
import { CHECKPOINT_CHANNEL, startNotifications } from './eventstore/postgres-notifications.ts'
import { cachedLookups } from './lookups/lookups.ts'
import type { Lookups } from './lookups/lookups.ts'
import { MODULES, allProjectors } from './modules/modules.ts'
import type { Process } from './modules/manifest.ts'
import { cataloguedPersonalSpecs } from './privacy/personal-specs.ts'
import { sealingStore } from './privacy/sealing-store.ts'
import { keyWrapping } from './privacy/master-key.ts'
import { subjectKeys } from './privacy/subject-keys.ts'
import { createProjectionRunner } from './projections/kernel/runner.ts'
import type { ProjectionRunner } from './projections/kernel/runner.ts'
import { createClaimSweeper } from './processes/claim-sweeper.ts'
import type { ClaimSweeper } from './processes/claim-sweeper.ts'
import { createWebhookDispatcher } from './webhooks/dispatcher.ts'
import { webhookDispatcherSettings } from './webhooks/settings.ts'
import type { WebhookDispatcher } from './webhooks/dispatcher.ts'

export type Runtime = {
  db: Db
  pool: pg.Pool
  /** DATABASE_READ_URL's replica, which `db` reads from inside `readReplica.serve` (the API's GET requests). */
  readReplica: ReadReplica | undefined
  store: EventStore
  projections: ProjectionRunner
  /** Per-process cache of what every request looks up; the CLI only announces its changes through it. */
  lookups: Lookups
  /** Webhook deliveries (issue 8); not started: only the server delivers. */
  webhooks: WebhookDispatcher
  /** Frees orphan name claims on the scheduled processes' leader; not started: only the server sweeps. */
  claims: ClaimSweeper
  /** The modules' scheduled processes (src/modules/), such as the due notifier; not started: only the server runs them, and they work only on the scheduled processes' leader. */
  processes: readonly Process[]
  /**
   * The server's background work: the projections, then the webhook deliveries, which wait for the
   * read model they list subscriptions from, the claim sweeper and the modules' processes (which work only on the leader). The migrations are already done (openRuntime returns
   * after them), so nothing here can run against a schema that is not there yet.
   */
  start(): void
  close(): Promise<void>
}

const EMBEDDED_DATABASE = 'crm'

/**
 * Connects everything the server and the CLI share: the database (DATABASE_URL, or an embedded
 * PostgreSQL under DATA_DIR), migrations, the event store adapter and the projection runner
 * (not started: only the server applies projections, through `start()`).
 *
 * Start-up order: migrations complete before anything else is even created. They run under
 * Kysely's migration lock (a PostgreSQL advisory lock) in one transaction, so a second process
 * starting meanwhile waits for the lock, then finds nothing pending. Read models come next: the
 * projections leader builds their tables on a first start, and their readers wait for them (the
 * API through `projections.tablesReady`, the webhook dispatcher for the webhooks read model).
 */
export async function openRuntime(config: Config, logger: Logger, role: 'server' | 'cli'): Promise<Runtime> {
  const { url, stopEmbedded } = await resolveDatabase(config, logger, role === 'server')
  const pool = createPool(url, config.pgPoolSize)
  pool.on('error', (error) => logger.warn({ err: error }, 'idle database connection failed'))
  const readReplica = config.databaseReadUrl ? createReadReplica(pool, replicaPool(config.databaseReadUrl, config.pgPoolSize, logger)) : undefined
  const db = createDb(readReplica?.pool ?? pool)
  const applied = await migrateToLatest(db)
  if (applied.length) logger.info({ migrations: applied }, 'applied migrations')
  // KurrentDB's client (~0.25 s of CPU to load) only where it is the store.
  const adapter =
    config.eventStore === 'kurrentdb'
      ? (await import('./eventstore/kurrentdb.ts')).createKurrentDbEventStore({ connectionString: config.eventStoreUrl!, pollIntervalMs: config.projectionPollMs })
      : createPostgresEventStore({ pool, pollIntervalMs: config.projectionPollMs })
  // Personal fields are sealed above either adapter (issue 31); the keys are read from the primary, never a replica behind it.
  const keys = subjectKeys(createDb(pool), keyWrapping(config.masterKeys), { inEventDatabase: config.eventStore === 'postgres' })
  const store = sealingStore(adapter, keys, cataloguedPersonalSpecs)
  const checkpointNotices = startNotifications(pool, CHECKPOINT_CHANNEL)
  const projections = createProjectionRunner({
    db,
    checkpointNotices,
    poolOptions: pool.options,
    store,
    projectors: allProjectors,
    logger,
    batchSize: config.projectionBatchSize,
    pollMs: config.projectionPollMs,
    leaderRetryMs: config.projectionLeaderRetryMs,
    leaseMs: config.projectionLeaseMs,
    applies: config.projectionApply,
  })
  const lookups = cachedLookups({ db, pool, readReplica })
  const webhooks = createWebhookDispatcher({ db, store, logger, ...webhookDispatcherSettings(config) })
  const processes = MODULES.flatMap((module) => module.processes ?? []).map((create) => create({ config, db, store, projections, logger, clock: () => new Date() }))
  const claims = createClaimSweeper({ db, store, projections, logger, clock: () => new Date(), graceMs: config.claimSweepGraceMs, intervalMs: config.claimSweepIntervalMs })
  return {
    db,
    pool,
    readReplica,
    store,
    projections,
    lookups,
    webhooks,
    claims,
    processes,
    start() {
      projections.start()
      webhooks.start()
      claims.start()
      for (const work of processes) work.start()
    },
    async close() {
      for (const work of processes) await work.stop()
      await claims.stop()
      await webhooks.stop()
      await projections.stop()
      await checkpointNotices.close()
      await lookups.close()
      await store.close()
      await db.destroy()
      await stopEmbedded()
    },
  }
}

function replicaPool(url: string, size: number, logger: Logger): pg.Pool {
  const pool = createPool(url, size)
  pool.on('error', (error) => logger.warn({ err: error }, 'idle read replica connection failed'))
  return pool
}

/** DATABASE_URL, or the embedded cluster under DATA_DIR (started, or attached to; `owner` stops it at close). */
export async function resolveDatabase(config: Config, logger: Logger, owner: boolean): Promise<{ url: string; stopEmbedded: () => Promise<void> }> {
  if (config.databaseUrl) return { url: config.databaseUrl, stopEmbedded: async () => {} }
  const { startEmbeddedPostgres } = await import('./db/embedded-postgres.ts')
  const cluster = await startEmbeddedPostgres(config.dataDir, config.embeddedPgPort, logger, { owner })
  await createDatabase(cluster.url, EMBEDDED_DATABASE, { ifMissing: true })
  return { url: withDatabase(cluster.url, EMBEDDED_DATABASE), stopEmbedded: cluster.stop }
}
