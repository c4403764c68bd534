import { sql } from 'kysely'
import type { Kysely } from 'kysely'

/**
 * Projection units spread across processes (issue 36, docs/operations.md "Projection units").
 * A unit is one projector; `projection_leases` says which process applies it, until when, and
 * under which epoch. The epoch grows at every change of owner, and each page's transaction checks
 * it (the fence), so a process that lost a unit cannot commit to it. `projection_members` holds the
 * processes that apply projections and are alive (a heartbeat), which is how each one works out its
 * share. Both tables are operational state, rebuilt by the processes themselves: never backed up
 * as data, safe to truncate while every process is stopped.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE projection_leases (
      name text PRIMARY KEY,
      owner text,
      epoch bigint NOT NULL DEFAULT 0,
      lease_until timestamptz NOT NULL DEFAULT '-infinity',
      -- Makes the epoch a key column: a takeover (which bumps it) conflicts with the fence's
      -- FOR KEY SHARE and waits for a page in flight, while a renewal (lease_until alone) does not.
      UNIQUE (name, epoch)
    )`.execute(db)
  await sql`
    CREATE TABLE projection_members (
      owner text PRIMARY KEY,
      seen_until timestamptz NOT NULL
    )`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE projection_members`.execute(db)
  await sql`DROP TABLE projection_leases`.execute(db)
}
