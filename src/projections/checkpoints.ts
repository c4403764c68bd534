import { sql } from 'kysely'
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.ts'
import type { Position } from '../eventstore/event-store.ts'

export type Checkpoint = { name: string; version: number; position: Position; updatedAt: Date }

type Row = { name: string; version: number; position_commit: string; position_prepare: string; updated_at: Date }

const toCheckpoint = (r: Row): Checkpoint => ({
  name: r.name,
  version: r.version,
  position: { commit: BigInt(r.position_commit), prepare: BigInt(r.position_prepare) },
  updatedAt: r.updated_at,
})

export async function readCheckpoints(db: Kysely<Database>): Promise<Checkpoint[]> {
  const rows = await db.selectFrom('projection_checkpoints').selectAll().orderBy('name').execute()
  return rows.map(toCheckpoint)
}

/**
 * Locks the projector's checkpoint row for the rest of the transaction. Every batch takes it, so
 * two runners (or a runner and a rebuild swap) can never apply the same events twice.
 */
export async function lockCheckpoint(trx: Kysely<Database>, name: string): Promise<Checkpoint | undefined> {
  const row = await trx.selectFrom('projection_checkpoints').selectAll().where('name', '=', name).forUpdate().executeTakeFirst()
  return row && toCheckpoint(row)
}

export async function saveCheckpoint(trx: Kysely<Database>, name: string, version: number, position: Position): Promise<void> {
  await trx
    .insertInto('projection_checkpoints')
    .values({ name, version, position_commit: position.commit, position_prepare: position.prepare })
    .onConflict((oc) =>
      oc.column('name').doUpdateSet({ version, position_commit: position.commit, position_prepare: position.prepare, updated_at: sql`now()` }),
    )
    .execute()
}
