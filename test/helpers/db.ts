import { randomBytes } from 'node:crypto'
import pg from 'pg'
import type { Test } from 'tap'
import { createDb, createPool } from '../../src/db/database.ts'
import type { Db } from '../../src/db/database.ts'
import { migrateToLatest } from '../../src/db/migrate.ts'
import { onTeardown } from './cleanup.ts'

export type TestDatabase = { url: string; name: string; pool: pg.Pool; db: Db }

export function serverUrl(): string {
  const url = process.env.DATABASE_URL
  if (!url) throw new Error('Expected DATABASE_URL: run the suite with `npm test`, which starts an embedded PostgreSQL when it is unset')
  return url
}

export function databaseUrl(name: string): string {
  const url = new URL(serverUrl())
  url.pathname = `/${name}`
  return url.toString()
}

async function onServer<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: serverUrl() })
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end()
  }
}

/** A new, migrated database for one test file, dropped at teardown. */
export async function freshDatabase(t: Test, options: { migrate?: boolean; poolSize?: number } = {}): Promise<TestDatabase> {
  const name = `t_${randomBytes(6).toString('hex')}`
  await onServer((c) => c.query(`CREATE DATABASE ${name}`))
  const url = databaseUrl(name)
  const pool = createPool(url, options.poolSize ?? 10)
  const db = createDb(pool)
  onTeardown(t, async () => {
    await db.destroy()
    // Kysely only ends a pool it has used; a test that never queried through it leaves it open.
    if (!pool.ended) await pool.end()
    // pool.end() resolves before its sockets close; forcing the drop then kills backends that are
    // saying goodbye and their clients emit errors. Wait for them to leave first.
    await onServer(async (c) => {
      for (let i = 0; i < 100; i++) {
        const { rows } = await c.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [name])
        if (rows[0].n === 0) break
        await new Promise((r) => setTimeout(r, 50))
      }
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    })
  })
  if (options.migrate !== false) await migrateToLatest(db)
  return { url, name, pool, db }
}
