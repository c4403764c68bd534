import { promises as fs } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { FileMigrationProvider, Migrator } from 'kysely'
import type { Kysely } from 'kysely'

const migrationFolder = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../migrations')

/**
 * Kysely's migrator looks for its own tables by introspecting every table of every schema, and that
 * query resolves each table's and each column's name again by text (pg_get_serial_sequence): a schema
 * dropped meanwhile (a rebuild's scratch schema, `rebuild_<projector>`, which another process drops
 * when its rebuild swaps in) fails it with "schema … does not exist", "relation … does not exist" or
 * "column … of relation … does not exist" (SQLSTATE 3F000, 42P01, 42703) before any migration ran.
 * Such a start is tried again.
 */
const RACED_A_DROPPED_TABLE = new Set(['3F000', '42P01', '42703'])
const ATTEMPTS = 20

/**
 * Applies every pending migration in `migrations/`; throws with the failing migration's name.
 * An untyped Kysely: kysely's Migrator takes no other, and the migrations make the schema the Database type describes.
 */
export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  const migrator = new Migrator({ db, provider: new FileMigrationProvider({ fs, path, migrationFolder }) })
  for (let attempt = 1; ; attempt++) {
    const { error, results } = await migrator.migrateToLatest()
    const failed = results?.find((r) => r.status === 'Error')
    if (!error) return (results ?? []).map((r) => r.migrationName)
    const raced = !failed && RACED_A_DROPPED_TABLE.has(String((error as { code?: string }).code))
    if (raced && attempt < ATTEMPTS) {
      await new Promise((resolve) => setTimeout(resolve, 20 * attempt))
      continue
    }
    throw new Error(`Migration ${failed?.migrationName ?? '(unknown)'} failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error })
  }
}
