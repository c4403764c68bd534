import pino from 'pino'
import type { Test } from 'tap'
import type { EventStore } from '../../src/eventstore/event-store.ts'
import type { Notifications } from '../../src/eventstore/postgres-notifications.ts'
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts'
import { cataloguedPersonalSpecs } from '../../src/privacy/personal-specs.ts'
import { sealingStore } from '../../src/privacy/sealing-store.ts'
import { TEST_MASTER_KEYS, keyWrapping } from '../../src/privacy/master-key.ts'
import { subjectKeys } from '../../src/privacy/subject-keys.ts'
import { createProjectionRunner } from '../../src/projections/kernel/runner.ts'
import type { Projector } from '../../src/projections/kernel/projector.ts'
import type { TestDatabase } from './db.ts'
import { onTeardown } from './cleanup.ts'

export const silentLogger = pino({ level: 'silent' })

/** The store the service runs on: PostgreSQL's, sealing personal fields (src/privacy/). */
export function testStore(t: Test, database: TestDatabase): EventStore {
  const store = sealingStore(createPostgresEventStore({ pool: database.pool, pollIntervalMs: 50 }), subjectKeys(database.db, keyWrapping(TEST_MASTER_KEYS), { inEventDatabase: true }), cataloguedPersonalSpecs)
  onTeardown(t, () => store.close())
  return store
}

export function testRunner(t: Test, database: TestDatabase, store: EventStore, projectors: Projector[], options: { leaderRetryMs?: number; leaseMs?: number; applies?: boolean; checkpointNotices?: Notifications } = {}) {
  const runner = createProjectionRunner({
    db: database.db,
    poolOptions: database.pool.options,
    store,
    projectors,
    logger: silentLogger,
    batchSize: 7,
    pollMs: 50,
    leaderRetryMs: options.leaderRetryMs ?? 100,
    leaseMs: options.leaseMs ?? 600,
    applies: options.applies ?? true,
    checkpointNotices: options.checkpointNotices,
  })
  onTeardown(t, () => runner.stop())
  return runner
}
