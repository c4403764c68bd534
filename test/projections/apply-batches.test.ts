import { sql } from 'kysely'
import t from 'tap'
import type { Test } from 'tap'
import { randomUUID } from 'node:crypto'
import { START } from '../../src/eventstore/event-store.ts'
import type { Position, RecordedEvent } from '../../src/eventstore/event-store.ts'
import { applyBatches } from '../../src/projections/kernel/apply.ts'
import { readCheckpoints, saveCheckpoint } from '../../src/projections/kernel/checkpoints.ts'
import { counterProjector } from '../helpers/counter-projector.ts'
import { freshDatabase } from '../helpers/db.ts'
import type { TestDatabase } from '../helpers/db.ts'

const at = (n: number): Position => ({ commit: BigInt(n), prepare: BigInt(n) })

const counted = (stream: string, amount: string, n: number): RecordedEvent => ({
  id: randomUUID(), type: 'Counted', data: { amount }, metadata: {}, schemaVersion: 1, streamName: stream, revision: BigInt(n), position: at(n), createdAt: new Date(),
})

const rowsOf = async ({ db }: TestDatabase, table: string) => (await sql<{ stream_name: string; events: number; total: string }>`SELECT * FROM ${sql.table(table)} ORDER BY stream_name`.execute(db)).rows
const positionOf = async ({ db }: TestDatabase, name: string) => (await readCheckpoints(db)).find((c) => c.name === name)?.position

/** On a pool of one connection: a page that left its client checked out, or in a transaction, would hang or fail the next one. */
async function setUp(t: Test) {
  const database = await freshDatabase(t, { poolSize: 1 })
  let broken = false
  const projectors = { a: counterProjector({ name: 'a' }), b: counterProjector({ name: 'b' }), failing: counterProjector({ name: 'failing', failOn: () => broken }) }
  for (const projector of Object.values(projectors)) {
    await projector.createTables(database.db)
    await saveCheckpoint(database.db, projector.name, projector.version, START)
  }
  return { database, projectors, breakIt: () => void (broken = true) }
}

t.test("a page applies each projector whose checkpoint is where the runner believed, and moves it; a stale one applies nothing and learns the stored position", async (t) => {
  const { database, projectors: { a, b } } = await setUp(t)
  const events = [counted('s', '1.50', 1), counted('s', '2.25', 2)]
  const outcomes = await applyBatches(database.db, [{ projector: a, expectedFrom: START, events, to: at(2) }, { projector: b, expectedFrom: at(1), events, to: at(2) }])
  t.same(outcomes, [{ applied: true, position: at(2) }, { applied: false, position: START }])
  t.same(await rowsOf(database, 'a'), [{ stream_name: 's', events: 2, total: '3.75' }])
  t.same(await rowsOf(database, 'b'), [], 'the stale share wrote nothing')
  t.same([await positionOf(database, 'a'), await positionOf(database, 'b')], [at(2), START])

  const again = await applyBatches(database.db, [{ projector: a, expectedFrom: START, events, to: at(2) }])
  t.same(again, [{ applied: false, position: at(2) }], 'the same page a second time (another runner) is refused')
  t.same(await rowsOf(database, 'a'), [{ stream_name: 's', events: 2, total: '3.75' }], 'nothing applied twice')
})

t.test('a page that fails commits nothing, neither rows nor checkpoints, and its connection serves the next page', async (t) => {
  const { database, projectors: { a, failing }, breakIt } = await setUp(t)
  breakIt()
  const events = [counted('s', '1', 1)]
  await t.rejects(applyBatches(database.db, [{ projector: a, expectedFrom: START, events, to: at(1) }, { projector: failing, expectedFrom: START, events, to: at(1) }]), /simulated crash/)
  t.same(await rowsOf(database, 'a'), [])
  t.same(await positionOf(database, 'a'), START)
  t.same(await applyBatches(database.db, [{ projector: a, expectedFrom: START, events, to: at(1) }]), [{ applied: true, position: at(1) }])
  t.same(await rowsOf(database, 'a'), [{ stream_name: 's', events: 1, total: '1' }])
})

t.test("a fence runs in the page's transaction before anything else: when it throws nothing commits, when it passes the page applies", async (t) => {
  const { database, projectors: { a } } = await setUp(t)
  const events = [counted('s', '1', 1)]
  const page = [{ projector: a, expectedFrom: START, events, to: at(1) }]
  const refusing = { statement: 'SELECT 1', verify: () => { throw new Error('lease lost') } }
  await t.rejects(applyBatches(database.db, page, refusing), /lease lost/)
  t.same(await rowsOf(database, 'a'), [])
  t.same(await positionOf(database, 'a'), START)
  let fresh: boolean | undefined
  let xid: string | undefined
  const fence = {
    // Left to right: whether the transaction had an id yet (nothing locked or written), then its id.
    statement: 'SELECT pg_current_xact_id_if_assigned() IS NULL AS fresh, (pg_current_xact_id()::text::bigint % 4294967296)::text AS xid',
    verify: (rows: readonly unknown[]) => ({ fresh, xid } = rows[0] as { fresh: boolean; xid: string }),
  }
  t.same(await applyBatches(database.db, page, fence), [{ applied: true, position: at(1) }])
  t.equal(fresh, true, 'the fence ran first: nothing of the page had locked or written yet')
  const { rows } = await sql<{ xmin: string }>`SELECT xmin::text AS xmin FROM projection_checkpoints WHERE name = 'a'`.execute(database.db)
  t.equal(rows[0]!.xmin, xid, 'in the transaction that moved the checkpoint')
  t.same(await rowsOf(database, 'a'), [{ stream_name: 's', events: 1, total: '1' }])
})
