import { sql } from 'kysely'
import type { Kysely } from 'kysely'
import pg from 'pg'
import t from 'tap'
import type { Test } from 'tap'
import { randomUUID } from 'node:crypto'
import { CHECKPOINT_CHANNEL, startNotifications } from '../../src/eventstore/postgres-notifications.ts'
import { START } from '../../src/eventstore/event-store.ts'
import type { Position, RecordedEvent } from '../../src/eventstore/event-store.ts'
import { applyBatches } from '../../src/projections/kernel/apply.ts'
import { readCheckpoints, saveCheckpoint } from '../../src/projections/kernel/checkpoints.ts'
import type { Projector } from '../../src/projections/kernel/projector.ts'
import { inlineParameters, returnsNoRows } from '../../src/projections/kernel/statement-text.ts'
import { counterProjector } from '../helpers/counter-projector.ts'
import { onTeardown } from '../helpers/cleanup.ts'
import { freshDatabase } from '../helpers/db.ts'
import { eventually } from '../reliability/harness.ts'

const at = (n: number): Position => ({ commit: BigInt(n), prepare: BigInt(n) })
const counted = (stream: string, amount: string, n: number): RecordedEvent => ({
  id: randomUUID(), type: 'Counted', data: { amount }, metadata: {}, schemaVersion: 1, streamName: stream, revision: BigInt(n), position: at(n), createdAt: new Date(),
})

t.test('only an INSERT, UPDATE or DELETE without RETURNING is taken as answering no rows', async (t) => {
  t.ok(returnsNoRows('insert into "a" ("x") values ($1) on conflict ("x") do update set "y" = "a"."y" + 1'))
  t.ok(returnsNoRows('update "a" set "x" = $1 from (select 1) s where "id" = $2'))
  t.ok(returnsNoRows('delete from "a" where "id" = $1'))
  t.ok(returnsNoRows('WITH input AS (SELECT * FROM x), ins AS (INSERT INTO y SELECT * FROM input RETURNING id) INSERT INTO z SELECT id FROM ins'), 'a RETURNING inside a CTE answers nothing to the caller')
  t.notOk(returnsNoRows('insert into "a" ("x") values ($1) returning "id"'))
  t.notOk(returnsNoRows('WITH d AS (DELETE FROM a RETURNING *) SELECT count(*) FROM d'))
  t.notOk(returnsNoRows('select * from "a" where "x" = \'insert\''))
  t.notOk(returnsNoRows("SELECT set_config('search_path', $1, true)"))
  t.notOk(returnsNoRows('insert into "a" ("returning") values ($1) returning "returning"'), 'a quoted identifier is not the keyword, the keyword is')
  t.notOk(returnsNoRows('DO $$ BEGIN INSERT INTO a VALUES (1); END $$'), 'dollar quotes are not scanned')
})

t.test('parameters are inlined as the literals of the text pg sends, outside quotes; what cannot be is refused', async (t) => {
  t.equal(inlineParameters('insert into "a" ("x", "y") values ($1, $2)', ["it's", null]), `insert into "a" ("x", "y") values ('it''s', NULL)`)
  t.equal(inlineParameters(`update a set note = '$1', x = $1 -- $2 stays\nwhere "$2" = $2`, ['v', 7]), `update a set note = '$1', x = 'v' -- $2 stays\nwhere "$2" = '7'`)
  t.equal(inlineParameters('select $10, $1', Array.from({ length: 10 }, (_, i) => i + 1)), "select '10', '1'")
  for (const value of ["a'b", 'back\\slash', "both \\ and '", ''])
    t.equal(inlineParameters('select $1', [value]), `select ${pg.escapeLiteral(value)}`, `quoted as pg.escapeLiteral quotes ${JSON.stringify(value)}`)
  t.equal(inlineParameters('select $2', [1]), undefined, 'a placeholder without its value')
  t.equal(inlineParameters('insert into a values ($1)', [Buffer.from('x')]), undefined, 'a Buffer goes binary')
  t.equal(inlineParameters("select E'\\n', $1", ['x']), undefined, 'backslashes in the text are not scanned')
})

t.test('an inlined statement writes the very row its parameters write', async (t) => {
  const { db, pool } = await freshDatabase(t, { poolSize: 2 })
  await sql`CREATE TABLE typed (k int PRIMARY KEY, t text, n numeric(15, 2), ts timestamptz, d date, ids uuid[], tags text[], j jsonb, b boolean, big bigint, f double precision)`.execute(db)
  const values = [
    `quote ' backslash \\ dollar $1 newline \n unicode é 😀`,
    '12345.67',
    new Date('2026-11-27T08:00:00.123Z'),
    '2026-02-28',
    [randomUUID(), randomUUID()],
    ['a "b"', "c'd", 'e\\f', 'NULL', ''],
    JSON.stringify({ a: "x'y", b: [1, null, 'z\\'] }),
    true,
    9007199254740993n,
    0.1,
  ]
  const text = 'INSERT INTO typed (k, t, n, ts, d, ids, tags, j, b, big, f) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)'
  await pool.query(text, [1, ...values])
  await pool.query(inlineParameters(text, [2, ...values])!)
  const { rows } = await pool.query<Record<string, unknown>>('SELECT t, n, ts, d::text, ids, tags, j, b, big, f FROM typed ORDER BY k')
  t.equal(rows.length, 2)
  t.same(rows[1], rows[0])
  t.equal(rows[1]!.t, values[0])
})

type Rows = Record<string, { stream_name: string; events: number; total: string }>

/** Counts the round trips a page's connection makes (calls to pg's query on the clients the pool hands out). */
function countRoundTrips(pool: pg.Pool): { texts: string[] } {
  const seen = { texts: [] as string[] }
  const wrapped = new WeakSet<pg.PoolClient>()
  pool.on('acquire', (client) => {
    if (wrapped.has(client)) return
    wrapped.add(client)
    const query = client.query.bind(client) as (...args: unknown[]) => unknown
    ;(client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      seen.texts.push(typeof args[0] === 'string' ? args[0] : 'other')
      return query(...args)
    }
  })
  return seen
}

async function setUp(t: Test, projectors: readonly Projector[]) {
  const database = await freshDatabase(t, { poolSize: 1 })
  for (const projector of projectors) {
    await projector.createTables(database.db)
    await saveCheckpoint(database.db, projector.name, projector.version, START)
  }
  return database
}

t.test("a page's writes go with its COMMIT: one round trip for BEGIN and the lock, one for the writes, the save and COMMIT", async (t) => {
  const a = counterProjector({ name: 'a' })
  const b = counterProjector({ name: 'b' })
  const database = await setUp(t, [a, b])
  const trips = countRoundTrips(database.pool)
  const events = [counted('s', '1.50', 1), counted('t', '2.25', 2), counted('s', '1', 3)]
  t.same(await applyBatches(database.db, [a, b].map((projector) => ({ projector, expectedFrom: START, events, to: at(3) }))), [{ applied: true, position: at(3) }, { applied: true, position: at(3) }])
  t.equal(trips.texts.length, 2, trips.texts.join('\n---\n'))
  t.match(trips.texts[1], /INSERT INTO projection_checkpoints[\s\S]*; COMMIT$/)
  for (const table of ['a', 'b']) {
    t.same((await sql<Rows[string]>`SELECT * FROM ${sql.table(table)} ORDER BY stream_name`.execute(database.db)).rows, [{ stream_name: 's', events: 2, total: '2.50' }, { stream_name: 't', events: 1, total: '2.25' }])
  }
  t.same((await readCheckpoints(database.db)).map((c) => c.position), [at(3), at(3)])
})

/** Inserts each event's row, then reads its own table: what it reads must include what it wrote before. */
function readingProjector(name: string, seen: number[]): Projector {
  return {
    name,
    version: 1,
    eventTypes: ['Counted'],
    tables: [name],
    async createTables(db) {
      await sql`CREATE TABLE ${sql.table(name)} (stream_name text PRIMARY KEY, events int NOT NULL, total numeric NOT NULL)`.execute(db)
    },
    async apply(trx, event) {
      const db = trx as unknown as Kysely<Rows>
      await db.insertInto(name).values({ stream_name: `${event.streamName}-${event.revision}`, events: 1, total: (event.data as { amount: string }).amount }).execute()
      const { n } = await db.selectFrom(name).select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()
      seen.push(Number(n))
    },
  }
}

t.test('a statement that answers rows sees every write held before it, and goes in the same round trip', async (t) => {
  const seen: number[] = []
  const reading = readingProjector('reading', seen)
  const a = counterProjector({ name: 'a' })
  const database = await setUp(t, [a, reading])
  const trips = countRoundTrips(database.pool)
  const events = [counted('s', '1', 1), counted('s', '2', 2)]
  await applyBatches(database.db, [a, reading].map((projector) => ({ projector, expectedFrom: START, events, to: at(2) })))
  t.same(seen, [1, 2], "each count saw the projector's own INSERT, held until then")
  // BEGIN + lock; a's two writes + reading's INSERT + its count; its INSERT + count; save + COMMIT.
  t.equal(trips.texts.length, 4, trips.texts.join('\n---\n'))
  t.match(trips.texts[1], /^insert into "a"[\s\S]*;\ninsert into "a"[\s\S]*;\ninsert into "reading"[\s\S]*;\nselect count/)
})

t.test('a held write that fails fails the page: nothing of it commits, and the connection serves the next page', async (t) => {
  const a = counterProjector({ name: 'a' })
  const database = await setUp(t, [a])
  // The counter casts the amount to numeric: this one fails in PostgreSQL, at the COMMIT's round trip.
  await t.rejects(applyBatches(database.db, [{ projector: a, expectedFrom: START, events: [counted('s', '1', 1), counted('s', 'not a number', 2)], to: at(2) }]), /invalid input syntax for type numeric/)
  t.same((await sql`SELECT * FROM a`.execute(database.db)).rows, [])
  t.same((await readCheckpoints(database.db)).map((c) => c.position), [START])
  t.same(await applyBatches(database.db, [{ projector: a, expectedFrom: START, events: [counted('s', '1', 1)], to: at(1) }]), [{ applied: true, position: at(1) }])
  t.same((await sql`SELECT * FROM a`.execute(database.db)).rows, [{ stream_name: 's', events: 1, total: '1' }], 'nothing of the failed page was left held for this one')
})

t.test("a page's closing statement (its announcement's NOTIFY) is delivered with its commit, and not when the page fails", async (t) => {
  const a = counterProjector({ name: 'a' })
  const database = await setUp(t, [a])
  const sender = startNotifications(database.pool, CHECKPOINT_CHANNEL)
  const listener = startNotifications(database.pool, CHECKPOINT_CHANNEL)
  onTeardown(t, () => Promise.all([sender.close(), listener.close()]))
  const heard: (string | undefined)[] = []
  listener.subscribe((message) => heard.push(message))
  await eventually('the listener listens', 5000, async () => listener.listening())
  const page = (amount: string, n: number, message: string) =>
    applyBatches(database.db, [{ projector: a, expectedFrom: n === 1 ? START : at(n - 1), events: [counted('s', amount, n)], to: at(n) }], undefined, () => sender.within(message).statement)
  await page('1', 1, 'first page')
  await eventually('the first page is heard', 5000, async () => heard.includes('first page'))
  await t.rejects(page('not a number', 2, 'failed page'), /invalid input syntax/)
  await page('2', 2, 'third page')
  await eventually('the third page is heard', 5000, async () => heard.includes('third page'))
  t.notOk(heard.includes('failed page'), 'the failed page announced nothing (notices arrive in commit order: it would have come before the third)')
})
