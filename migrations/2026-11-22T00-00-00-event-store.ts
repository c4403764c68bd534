import { sql } from 'kysely'
import type { Kysely } from 'kysely'

/**
 * The event log. One table: a stream's revision is derived from its events, and the primary key
 * (stream_name, stream_revision) is the optimistic-concurrency check. transaction_id orders the
 * global log by commit visibility: readers only read below pg_snapshot_xmin, so an append that
 * commits late can never be skipped by a subscriber that already moved past its position.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE events (
      global_position bigint GENERATED ALWAYS AS IDENTITY,
      transaction_id xid8 NOT NULL DEFAULT pg_current_xact_id(),
      stream_name text NOT NULL,
      stream_revision bigint NOT NULL,
      event_id uuid NOT NULL,
      event_type text NOT NULL,
      schema_version integer NOT NULL,
      data jsonb NOT NULL,
      metadata jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (stream_name, stream_revision)
    )`.execute(db)
  await sql`CREATE INDEX events_commit_order ON events (transaction_id, global_position)`.execute(db)
  await sql`
    CREATE TABLE projection_checkpoints (
      name text PRIMARY KEY,
      version integer NOT NULL,
      position_commit bigint NOT NULL,
      position_prepare bigint NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE projection_checkpoints`.execute(db)
  await sql`DROP TABLE events`.execute(db)
}
