import { sql } from 'kysely'
import type { Test } from 'tap'
import type { DomainEvent } from '../../src/commands/decider.ts'
import type { Db } from '../../src/db/database.ts'
import type { EventStore, Position } from '../../src/eventstore/event-store.ts'
import { currentVersion } from '../../src/events/versions.ts'
import { allProjectors } from '../../src/modules/modules.ts'
import type { Projector } from '../../src/projections/kernel/projector.ts'
import { rebuildProjection } from '../../src/projections/kernel/rebuild.ts'
import { freshDatabase } from './db.ts'
import { testRunner, testStore } from './runner.ts'

/**
 * Read-model checks at the level of rows: a projector's tables compared whatever their keys (rows
 * in the order of their JSON text), so one helper serves every projection and a test names no
 * table's key columns.
 */

/** A read model as the module list builds it: search, the activity feed and notifications are built over the manifests' declarations. */
export const projectorNamed = (name: string): Projector => {
  const projector = allProjectors.find((candidate) => candidate.name === name)
  if (!projector) throw new Error(`no projector named ${name}`)
  return projector
}

const jsonOf = (row: unknown) => JSON.stringify(row, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value))
const byJson = <T>(rows: readonly T[]): T[] => rows.map((row) => [jsonOf(row), row] as const).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row)

/** Every row of `table`, in the order of their JSON text. */
export async function tableRows(db: Db, table: string): Promise<Record<string, unknown>[]> {
  return byJson((await sql<Record<string, unknown>>`SELECT * FROM ${sql.table(table)}`.execute(db)).rows)
}

/** The rows of each named table. */
async function readModelRows(db: Db, tables: readonly string[]): Promise<Record<string, Record<string, unknown>[]>> {
  const rows: Record<string, Record<string, unknown>[]> = {}
  for (const table of tables) rows[table] = await tableRows(db, table)
  return rows
}

export type RebuildCheck = {
  /** The tables compared; every table of the projectors when left out. */
  tables?: readonly string[]
  /** Also rebuilt applying one event at a time (no `applyBatch`): both must leave the live rows. */
  oneByOne?: boolean
  /** What routes answer from these read models (e.g. a list): the same after the rebuild. */
  answers?: () => Promise<unknown>
}

/**
 * Rebuild equals live: the rows the live runner left in the projectors' tables, then each projector
 * rebuilt from the whole log (rebuildProjection, a scratch schema swapped in), then the rows again:
 * the same, table by table (and the same answers, when given). Answers the live rows, for the
 * test's own checks that the read model is not empty.
 */
export async function rebuildEqualsLive(t: Test, world: { db: Db; store: EventStore }, projectors: Projector | readonly Projector[], check: RebuildCheck = {}): Promise<Record<string, Record<string, unknown>[]>> {
  const all = Array.isArray(projectors) ? projectors : [projectors as Projector]
  const tables = check.tables ?? all.flatMap((projector) => projector.tables)
  const live = await readModelRows(world.db, tables)
  const answered = await check.answers?.()
  const ways: [string, (projector: Projector) => Projector][] = [['rebuilt', (projector) => projector]]
  if (check.oneByOne) ways.push(['rebuilt one event at a time', (projector) => ({ ...projector, applyBatch: undefined })])
  for (const [way, variant] of ways) {
    for (const projector of all) await rebuildProjection(world.db, world.store, variant(projector))
    const rebuilt = await readModelRows(world.db, tables)
    for (const table of tables) t.same(rebuilt[table], live[table], `${table}: ${way} from the log, the same rows as live`)
    if (check.answers) t.same(await check.answers(), answered, `${way}: the same answers`)
  }
  return live
}

/** Events of one stream, as a test gives them: typed domain events (events.ts), their org in the metadata as a session writes it. */
export type GivenStream = { stream: string; events: readonly DomainEvent[]; orgId?: string }

/**
 * A read-model specification: given these events (appended to a fresh store, in order), when one
 * projector has applied them (the runner, as in the service), then these rows. `then` compares
 * each named table's rows, cut to the columns the expected rows name, in any order; a table given
 * `[]` must be empty.
 *
 *   await readModel(t, tagsProjector).given([{ stream, events: [created] }]).then({ tags: [{ name: 'VIP' }] })
 */
export function readModel(t: Test, projector: Projector) {
  return {
    given: (streams: readonly GivenStream[]) => ({
      then: async (expected: Record<string, readonly Record<string, unknown>[]>) => {
        const database = await freshDatabase(t)
        const store = testStore(t, database)
        const runner = testRunner(t, database, store, [projector])
        // Tables built first, so the events go through the live apply (a rebuild's replay is rebuildEqualsLive's).
        runner.start()
        await runner.tablesReady(10_000)
        let last: Position | null = null
        for (const { stream, events, orgId } of streams) {
          const written = events.map(({ type, data }) => ({ type, data, metadata: orgId ? { orgId } : {}, schemaVersion: currentVersion(type) }))
          last = (await store.appendToStream(stream, written)).position
        }
        if (last) await runner.waitFor(last, 10_000)
        for (const [table, rows] of Object.entries(expected)) {
          const columns = [...new Set(rows.flatMap((row) => Object.keys(row)))]
          const cut = (row: Record<string, unknown>) => Object.fromEntries(columns.map((column) => [column, row[column]]))
          t.same(byJson((await tableRows(database.db, table)).map(cut)), byJson(rows.map(cut)), `${table}: the rows the events leave`)
        }
      },
    }),
  }
}
