import { promises as fs } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { FileMigrationProvider, Migrator } from 'kysely'
import type { Kysely } from 'kysely'

const migrationFolder = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../migrations')

/**
 * Applies every pending migration in `migrations/`; throws with the failing migration's name.
 * An untyped Kysely: kysely's Migrator takes no other, and the migrations make the schema the Database type describes.
 */
export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  const migrator = new Migrator({ db, provider: new FileMigrationProvider({ fs, path, migrationFolder }) })
  const { error, results } = await migrator.migrateToLatest()
  const failed = results?.find((r) => r.status === 'Error')
  if (error) {
    throw new Error(`Migration ${failed?.migrationName ?? '(unknown)'} failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error })
  }
  return (results ?? []).map((r) => r.migrationName)
}
