import { sql } from 'kysely'
import type { Kysely } from 'kysely'
import type { Database } from '../../db/database.ts'
import type { Position } from '../../eventstore/event-store.ts'
import { PROJECTOR_NAME } from './projector.ts'

export type Checkpoint = { name: string; version: number; position: Position; updatedAt: Date }

export type CheckpointRow = { name: string; version: number; position_commit: string; position_prepare: string; updated_at: Date }

export const toCheckpoint = (r: CheckpointRow): Checkpoint => ({
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

/**
 * The texts of lockCheckpoints and saveCheckpoints with their values inlined, for the simple-query
 * protocol, which takes no parameters but carries several statements in one round trip (a page's
 * BEGIN with its lock, its save with its COMMIT: kernel/apply.ts). Only names that are projector
 * names (assertValidProjectors' pattern), integer versions and bigint positions are inlined.
 */
export function lockCheckpointsText(names: readonly string[]): string {
  return `SELECT * FROM projection_checkpoints WHERE name IN (${names.map(nameLiteral).join(', ')}) ORDER BY name FOR UPDATE`
}

export function saveCheckpointsText(checkpoints: readonly CheckpointWrite[]): string {
  const rows = checkpoints.map(({ name, version, position }) => {
    if (!Number.isInteger(version)) throw new Error(`Expected an integer version for ${name}, got ${version}`)
    return `(${nameLiteral(name)}, ${version}, ${position.commit}, ${position.prepare})`
  })
  return `INSERT INTO projection_checkpoints (name, version, position_commit, position_prepare) VALUES ${rows.join(', ')}
    ON CONFLICT (name) DO UPDATE SET version = excluded.version, position_commit = excluded.position_commit, position_prepare = excluded.position_prepare, updated_at = now()`
}

function nameLiteral(name: string): string {
  if (!PROJECTOR_NAME.test(name)) throw new Error(`Expected a projector name to inline, got "${name}"`)
  return `'${name}'`
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
