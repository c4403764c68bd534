import { sql } from 'kysely'
import type { Kysely } from 'kysely'
import type { Database } from '../../db/database.ts'
import { START } from '../../eventstore/event-store.ts'
import type { EventStore, Position } from '../../eventstore/event-store.ts'
import { LIVE_SCHEMA, applyEvents, drain, useSchema } from './apply.ts'
import { replayInto } from './replay.ts'
import { lockCheckpoint, saveCheckpoint } from './checkpoints.ts'
import type { Projector } from './projector.ts'

export type RebuildResult = { name: string; events: number; position: Position; ms: number }

export type RebuildOptions = {
  onProgress?: (progress: RebuildProgress) => void
  /** Aborts between pages (the scratch schema is dropped, the live tables untouched): a process that stops or loses the lead. */
  signal?: AbortSignal
}

/** How far a rebuild is: events replayed, their rate, and the time left judged by position against the log's head when it started. */
export type RebuildProgress = { name: string; version: number; startedAt: Date; events: number; eventsPerSecond: number; etaSeconds: number | null; done: number }

/** Progress after a page: `done` is the share of the log (by position) replayed so far, 0..1. */
function progressOf(projector: Projector, started: number, events: number, at: Position, head: Position): RebuildProgress {
  const seconds = Math.max(0.001, (Date.now() - started) / 1000)
  const done = head.prepare > 0n ? Math.min(1, Number(at.prepare) / Number(head.prepare)) : 1
  return {
    name: projector.name,
    version: projector.version,
    startedAt: new Date(started),
    events,
    eventsPerSecond: Math.round(events / seconds),
    etaSeconds: done > 0 ? Math.round((seconds * (1 - done)) / done) : null,
    done,
  }
}

/**
 * Replays the whole log into fresh tables in a scratch schema, then swaps them in atomically.
 * The live runner keeps serving (and applying to) the old tables meanwhile; the swap transaction
 * holds the checkpoint lock, applies whatever arrived during the bulk replay, replaces the tables
 * and moves the checkpoint, so the runner resumes after it with nothing lost or applied twice.
 */
export async function rebuildProjection(db: Kysely<Database>, store: EventStore, projector: Projector, batchSize = 2000, options: RebuildOptions = {}): Promise<RebuildResult> {
  const { onProgress, signal } = options
  const started = Date.now()
  const head = onProgress ? await store.lastPosition() : START
  const schema = `rebuild_${projector.name}`
  let events = 0
  await sql`DROP SCHEMA IF EXISTS ${sql.id(schema)} CASCADE`.execute(db)
  await sql`CREATE SCHEMA ${sql.id(schema)}`.execute(db)
  try {
    await db.transaction().execute(async (trx) => {
      await useSchema(trx, schema)
      await projector.createTables(trx)
    })
    const replayed = await replayInto(db, store, projector, schema, batchSize, (page, to) => {
      events += page
      onProgress?.(progressOf(projector, started, events, to, head))
    }, signal)
    if (projector.createIndexes) {
      signal?.throwIfAborted()
      await db.transaction().execute(async (trx) => {
        await useSchema(trx, schema)
        await projector.createIndexes!(trx)
      })
    }
    const position = await db.transaction().execute(async (trx) => {
      await saveCheckpointIfMissing(trx, projector)
      await lockCheckpoint(trx, projector.name)
      await useSchema(trx, schema)
      const caughtUp = await drain(store, projector, replayed, batchSize, async (page) => {
        events += page.length
        await applyEvents(trx, projector, page)
      })
      await swapTables(trx, schema, projector.tables)
      await saveCheckpoint(trx, projector.name, projector.version, caughtUp)
      return caughtUp
    })
    // Swapped-in tables carry no planner statistics until autovacuum gets to them: gather them now,
    // or the first queries after a rebuild are planned as if the tables were empty.
    for (const table of projector.tables) await sql`ANALYZE ${sql.id(LIVE_SCHEMA, table)}`.execute(db)
    return { name: projector.name, events, position, ms: Date.now() - started }
  } finally {
    await sql`DROP SCHEMA IF EXISTS ${sql.id(schema)} CASCADE`.execute(db)
  }
}

async function saveCheckpointIfMissing(trx: Kysely<Database>, projector: Projector): Promise<void> {
  await trx
    .insertInto('projection_checkpoints')
    .values({ name: projector.name, version: projector.version, position_commit: 0n, position_prepare: 0n })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute()
}

async function swapTables(trx: Kysely<Database>, schema: string, tables: readonly string[]): Promise<void> {
  for (const table of tables) {
    await sql`DROP TABLE IF EXISTS ${sql.id(LIVE_SCHEMA, table)} CASCADE`.execute(trx)
    await sql`ALTER TABLE ${sql.id(schema, table)} SET SCHEMA ${sql.id(LIVE_SCHEMA)}`.execute(trx)
  }
  // Extended statistics (a projector's createIndexes may declare some) stay in their schema when
  // their table moves, and would go with it; the live ones went with the dropped tables.
  const { rows } = await sql<{ name: string }>`SELECT stxname AS name FROM pg_statistic_ext WHERE stxnamespace = ${schema}::regnamespace`.execute(trx)
  for (const { name } of rows) await sql`ALTER STATISTICS ${sql.id(schema, name)} SET SCHEMA ${sql.id(LIVE_SCHEMA)}`.execute(trx)
}
