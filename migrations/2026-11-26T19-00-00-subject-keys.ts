import { sql } from 'kysely'
import type { Kysely } from 'kysely'

/**
 * Each person's data key (issue 31): the event store seals a person's personal fields with it
 * (src/privacy/), and erasing the person destroys it (data_key null, destroyed_at set), which
 * leaves only ciphertext nobody can read in the log and its backups. A table apart from the events,
 * so that it can be kept, backed up and expired on its own schedule. `subject` is the person's
 * stream name (`contact-<id>`).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE subject_keys (
      subject text PRIMARY KEY,
      data_key bytea,
      created_at timestamptz NOT NULL DEFAULT now(),
      destroyed_at timestamptz,
      CHECK ((data_key IS NULL) = (destroyed_at IS NOT NULL))
    )`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE subject_keys`.execute(db)
}
