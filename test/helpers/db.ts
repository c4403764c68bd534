import { randomBytes } from 'node:crypto'
import type pg from 'pg'
import type { Test } from 'tap'
import { createDb, createPool } from '../../src/db/database.ts'
import type { Db } from '../../src/db/database.ts'
import { createDatabase, dropDatabase, withDatabase } from '../../src/db/databases.ts'
import { templateFor } from './db-template.ts'
import type { TemplateKind } from './db-template.ts'
import { onTeardown } from './cleanup.ts'

export type TestDatabase = { url: string; name: string; pool: pg.Pool; db: Db }

/** The server of this file's tap job (test/run.ts starts one embedded cluster per job), else DATABASE_URL. */
export function serverUrl(): string {
  const perJob = process.env.TEST_DATABASE_URLS?.split(' ').filter(Boolean) ?? []
  const url = perJob.length ? perJob[Number(process.env.TAP_JOB_ID ?? 0) % perJob.length] : process.env.DATABASE_URL
  if (!url) throw new Error('Expected DATABASE_URL: run the suite with `npm test`, which starts an embedded PostgreSQL when it is unset')
  return url
}

/**
 * A new, migrated database for one test file, dropped at teardown: a copy of the template of its
 * kind (test/helpers/db-template.ts); `app` also holds every read model's empty tables.
 */
export async function freshDatabase(t: Test, options: { migrate?: boolean; poolSize?: number; template?: TemplateKind } = {}): Promise<TestDatabase> {
  const name = `t_${randomBytes(6).toString('hex')}`
  const template = options.migrate === false ? undefined : await templateFor(serverUrl(), options.template ?? 'migrated')
  await createDatabase(serverUrl(), name, { template })
  const url = withDatabase(serverUrl(), name)
  const pool = createPool(url, options.poolSize ?? 10)
  const db = createDb(pool)
  onTeardown(t, async () => {
    await db.destroy()
    // Kysely only ends a pool it has used; a test that never queried through it leaves it open.
    if (!pool.ended) await pool.end()
    await dropDatabase(serverUrl(), name)
  })
  return { url, name, pool, db }
}
