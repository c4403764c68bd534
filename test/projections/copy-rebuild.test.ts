import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import t from 'tap'
import { tagStream } from '../../src/commands/tag/tag.ts'
import { freshTables } from '../../src/db/copy-rows.ts'
import { insertRowsOnce } from '../../src/db/insert-rows.ts'
import type { Position } from '../../src/eventstore/event-store.ts'
import type { Projector } from '../../src/projections/kernel/projector.ts'
import { rebuildProjection } from '../../src/projections/kernel/rebuild.ts'
import { tagsProjector } from '../../src/projections/tag/tags.ts'
import { freshDatabase } from '../helpers/db.ts'
import { tagCreated, tagEvent } from '../helpers/events.ts'
import { testRunner, testStore } from '../helpers/runner.ts'

// What COPY's text and CSV formats treat specially (quotes, backslashes, delimiters, line ends, the
// NULL and end-of-data markers), what array literals do (braces, commas, the word NULL), and the rest.
const AWKWARD = [
  'say "hi"',
  '"',
  '""',
  'back\\slash',
  '\\',
  '\\N',
  '\\.',
  'NULL',
  '',
  ' ',
  'tab\there',
  'new\nline',
  'crlf\r\n',
  'a,b',
  '{x,y}',
  "it's",
  'ünïcødé ✓ 中文 🎉',
  'E\'\\x41\'',
]

t.test('COPY leaves exactly the rows the idempotent INSERT leaves, whatever the values', async (t) => {
  const database = await freshDatabase(t)
  const columns = `id uuid PRIMARY KEY, name text NOT NULL, note text, words text[], ids uuid[], doc jsonb, raw json, at timestamptz, day date,
    flag boolean, amount numeric(15, 2), n integer, big bigint, fallback text NOT NULL DEFAULT 'default'`
  await sql`CREATE TABLE copy_inserted (${sql.raw(columns)})`.execute(database.db)
  await sql`CREATE TABLE copy_copied (${sql.raw(columns)})`.execute(database.db)
  const rows = AWKWARD.map((text, i) => ({
    id: randomUUID(),
    name: text,
    note: i % 3 === 0 ? null : text,
    words: i % 4 === 0 ? [] : [text, 'plain', null, AWKWARD[(i + 1) % AWKWARD.length]!],
    ids: [randomUUID(), randomUUID()],
    doc: i % 5 === 0 ? text : { text, nested: [text, null, 1.5, true], empty: {} },
    raw: { text },
    at: i % 2 ? new Date(Date.UTC(2026, 10, 24, 9, 0, i)) : `2026-11-24T10:00:0${i % 10}+01:00`,
    day: '2026-11-24',
    flag: i % 2 === 0,
    amount: `${i}.50`,
    n: i,
    big: '9007199254740993',
  }))
  await insertRowsOnce(database.db, 'copy_inserted', 'id', rows)
  const client = await database.pool.connect()
  try {
    const fresh = freshTables(client)
    await fresh.insert('copy_copied', rows)
    await fresh.written()
  } finally {
    client.release()
  }
  const asText = async (table: string) => (await sql<{ row: string }>`SELECT row_to_json(r)::text AS row FROM ${sql.table(table)} r ORDER BY id`.execute(database.db)).rows.map((r) => r.row)
  const copied = await asText('copy_copied')
  t.equal(copied.length, AWKWARD.length)
  t.same(copied, await asText('copy_inserted'), 'the same rows, value for value')
  t.ok(copied.some((row) => row.includes('"note":null')) && copied.some((row) => row.includes('"note":""')), 'NULL and the empty string stay apart')
})

t.test('a rebuild (COPY into its fresh tables) leaves exactly the tags the live apply left', async (t) => {
  const database = await freshDatabase(t)
  const store = testStore(t, database)
  const runner = testRunner(t, database, store, [tagsProjector])
  runner.start()
  // The runner's first build (a rebuild, of an empty log) done before the tags are written: they go through the live apply.
  await runner.waitFor((await store.appendToStream('other-1', [{ type: 'Other', data: {} }])).position, 10_000)
  const orgId = randomUUID()
  let last: Position | undefined
  for (const [i, text] of AWKWARD.entries()) {
    const tagId = randomUUID()
    const created = tagCreated({ tag_id: tagId, org_id: orgId, name: text, color: i % 2 ? null : text, description: text, created_by: i % 3 ? randomUUID() : null, at: `2026-11-24T09:00:${String(i).padStart(2, '0')}.123+02:00` })
    last = (await store.appendToStream(tagStream(tagId), [created])).position
    // Every third tag changed after its creation, in the same replay page: an UPDATE that must find the row COPY wrote.
    if (i % 3 === 0) last = (await store.appendToStream(tagStream(tagId), [tagEvent('TagUpdated', { name: `${text}\\"\n`, color: null, at: '2026-11-24T10:00:00Z' })])).position
  }
  await runner.waitFor(last!, 30_000)
  await runner.stop()
  const tags = async () => (await sql<{ row: string }>`SELECT row_to_json(r)::text AS row FROM tags r ORDER BY id`.execute(database.db)).rows.map((r) => r.row)
  const live = await tags()
  t.equal(live.length, AWKWARD.length)
  const rebuilt = await rebuildProjection(database.db, store, tagsProjector)
  t.equal(rebuilt.events, AWKWARD.length + Math.ceil(AWKWARD.length / 3))
  t.same(await tags(), live, 'the same rows, value for value')
})

t.test('a COPY that fails (a key written twice: not a fresh row) fails the rebuild, the live tables untouched', async (t) => {
  const database = await freshDatabase(t)
  const store = testStore(t, database)
  const twice: Projector = {
    name: 'twice',
    version: 1,
    eventTypes: ['Twice'],
    tables: ['twice'],
    createTables: async (db) => void (await sql`CREATE TABLE twice (id text PRIMARY KEY)`.execute(db)),
    apply: (trx) => insertRowsOnce(trx, 'twice', 'id', [{ id: 'same' }]),
    applyBatch: (trx, events, fresh) => insertRowsOnce(trx, 'twice', 'id', events.map(() => ({ id: 'same' })), fresh),
  }
  for (let i = 0; i < 6; i++) await store.appendToStream(`twice-${i}`, [{ type: 'Twice', data: {} }])
  await t.rejects(rebuildProjection(database.db, store, twice, 2), /duplicate key/)
  const left = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_tables WHERE tablename = 'twice'`.execute(database.db)
  t.equal(left.rows[0]!.n, 0, 'no table swapped in, the scratch one dropped')
})
