import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import type { Test } from 'tap'
import { loadConfig } from '../../src/config.ts'
import { buildApp } from '../../src/http/app.ts'
import type { MailTransport } from '../../src/identity/mail.ts'
import { cachedLookups } from '../../src/lookups/lookups.ts'
import { allProjectors } from '../../src/modules/modules.ts'
import type { Projector } from '../../src/projections/kernel/projector.ts'
import { freshDatabase } from './db.ts'
import type { TestDatabase } from './db.ts'
import { silentLogger, testRunner, testStore } from './runner.ts'
import { onTeardown } from './cleanup.ts'

export const FIXED_NOW = new Date('2026-11-22T09:00:00Z')

export type TestApp = { app: FastifyInstance; database: TestDatabase } & Pick<Parameters<typeof buildApp>[0], 'store' | 'projections'>

/**
 * The real app on a fresh database, with a fixed clock and projections running. `extend` may add
 * routes before the app is ready (used to exercise the error handler).
 */
export async function buildTestApp(
  t: Test,
  options: {
    env?: Record<string, string>
    projectors?: Projector[]
    extend?: (app: FastifyInstance) => void
    logger?: Logger
    /** Replaces the fixed clock, e.g. with a mutable one to let time pass. */
    clock?: () => Date
    mail?: MailTransport
    /** False leaves the projections stopped (the test starts them), e.g. to see requests made before. */
    startProjections?: boolean
    /** Membership, organization and custom field lookups cached per process, as the server runs them (otherwise plain queries). */
    cachedLookups?: boolean
  } = {},
): Promise<TestApp> {
  // The default read models' tables come with the copy; a test's own projectors build theirs.
  const database = await freshDatabase(t, { template: options.projectors ? 'migrated' : 'app' })
  const store = testStore(t, database)
  const projections = testRunner(t, database, store, options.projectors ?? [...allProjectors])
  // Uploads and attachments of this app go to a folder of its own, removed with it.
  const dataDir = await mkdtemp(join(tmpdir(), 'crm-test-'))
  onTeardown(t, () => rm(dataDir, { recursive: true, force: true }))
  const { config } = loadConfig({ NODE_ENV: 'test', DATABASE_URL: database.url, DATA_DIR: dataDir, ...options.env })
  const lookups = options.cachedLookups ? cachedLookups({ db: database.db, pool: database.pool }) : undefined
  if (lookups) onTeardown(t, () => lookups.close())
  const app = await buildApp({ config, db: database.db, lookups, store, projections, logger: options.logger ?? silentLogger, clock: options.clock ?? (() => FIXED_NOW), mail: options.mail })
  options.extend?.(app)
  onTeardown(t, () => app.close())
  await app.ready()
  if (options.startProjections !== false) projections.start()
  return { app, database, store, projections }
}
