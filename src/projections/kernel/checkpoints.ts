import { sql } from 'kysely'
import type { Kysely } from 'kysely'
import type { Database } from '../../db/database.ts'
import type { Position } from '../../eventstore/event-store.ts'

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
 * Locks the projectors' checkpoint rows for the rest of the transaction (in name order, so two
 * transactions locking overlapping sets cannot deadlock). Every batch takes them, so two runners
 * (or a runner and a rebuild swap) can never apply the same events twice.
 */
export async function lockCheckpoints(trx: Kysely<Database>, names: readonly string[]): Promise<Map<string, Checkpoint>> {
  const rows = await trx.selectFrom('projection_checkpoints').selectAll().where('name', 'in', names).orderBy('name').forUpdate().execute()
  return new Map(rows.map((row) => [row.name, toCheckpoint(row)]))
}

export async function lockCheckpoint(trx: Kysely<Database>, name: string): Promise<Checkpoint | undefined> {
  return (await lockCheckpoints(trx, [name])).get(name)
}

export type CheckpointWrite = { name: string; version: number; position: Position }

/** Moves several checkpoints in one statement. */
export async function saveCheckpoints(trx: Kysely<Database>, checkpoints: readonly CheckpointWrite[]): Promise<void> {
  if (checkpoints.length === 0) return
  await trx
    .insertInto('projection_checkpoints')
    .values(checkpoints.map(({ name, version, position }) => ({ name, version, position_commit: position.commit, position_prepare: position.prepare })))
    .onConflict((oc) =>
      oc.column('name').doUpdateSet((eb) => ({
        version: eb.ref('excluded.version'),
        position_commit: eb.ref('excluded.position_commit'),
        position_prepare: eb.ref('excluded.position_prepare'),
        updated_at: sql`now()`,
      })),
    )
    .execute()
}

export const saveCheckpoint = (trx: Kysely<Database>, name: string, version: number, position: Position): Promise<void> => saveCheckpoints(trx, [{ name, version, position }])
