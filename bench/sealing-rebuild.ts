import { randomUUID } from 'node:crypto'
import { loadConfig } from '../src/config.ts'
import { createDb, createQuietPool } from '../src/db/database.ts'
import { createDatabase, dropDatabase, withDatabase } from '../src/db/databases.ts'
import { migrateToLatest } from '../src/db/migrate.ts'
import type { EventStore } from '../src/eventstore/event-store.ts'
import { createPostgresEventStore } from '../src/eventstore/postgres.ts'
import { keyWrapping } from '../src/privacy/master-key.ts'
import { cataloguedPersonalSpecs } from '../src/privacy/personal-specs.ts'
import { sealingStore } from '../src/privacy/sealing-store.ts'
import { subjectKeys } from '../src/privacy/subject-keys.ts'
import { emptyContact } from '../src/commands/contact/contact.ts'
import { contactsProjector } from '../src/projections/contact/contacts.ts'
import { rebuildProjection } from '../src/projections/kernel/rebuild.ts'
import { withCpuCost } from './cpu-cost.ts'
import { progress } from './progress.ts'

export type RebuildRun = { log: 'plain' | 'sealed'; ms: number; nodeUsPerEvent: number; backendsUsPerEvent: number }
export type SealingRebuild = { events: number; runs: RebuildRun[] }

const APPENDERS = 16

/**
 * The cost of sealing on a rebuild (issue 31; BENCH_ONLY=sealing-rebuild): the contacts read model
 * replayed from SEALING_REBUILD_EVENTS contact creations (one new person each), from a log written
 * plain and from the same creations written sealed, each in a database of its own. A sealed replay
 * unseals every event through a store opened afresh, so each person's key is read and unwrapped
 * once, as in a rebuild after a restart. After a warm-up replay, alternated plain, sealed, sealed,
 * plain in one run: the ratio of sealed to plain is the cost.
 */
export async function sealingRebuildMeasure(server: string): Promise<SealingRebuild> {
  const events = Number(process.env.SEALING_REBUILD_EVENTS ?? 10_000)
  const names = { plain: `bench_plain_${Date.now()}`, sealed: `bench_sealed_${Date.now()}` }
  await createDatabase(server, names.plain)
  await createDatabase(server, names.sealed)
  const sides = await Promise.all((['plain', 'sealed'] as const).map((log) => openSide(withDatabase(server, names[log]), log)))
  try {
    for (const side of sides) {
      progress(`sealing-rebuild: appending ${events.toLocaleString('en-US')} contact creations, ${side.log}`)
      await appendContacts(side.writer, events)
    }
    // Unmeasured: the first replay warms the JIT and the database's caches.
    await rebuildProjection(sides[0]!.db, sides[0]!.reader(), contactsProjector, 2000)
    const runs: RebuildRun[] = []
    for (const log of ['plain', 'sealed', 'sealed', 'plain'] as const) {
      const side = sides.find((s) => s.log === log)!
      const reader = side.reader()
      const measured = await withCpuCost(side.pool, [process.pid], async () => ({ ...(await rebuildProjection(side.db, reader, contactsProjector, 2000)), ops: events }))
      const node = measured.nodeCpuUsPerOp ?? Number.NaN
      runs.push({ log, ms: measured.ms, nodeUsPerEvent: node, backendsUsPerEvent: (measured.cpuUsPerOp ?? Number.NaN) - node })
    }
    return { events, runs }
  } finally {
    for (const side of sides) await side.close()
    await dropDatabase(server, names.plain)
    await dropDatabase(server, names.sealed)
  }
}

async function openSide(url: string, log: 'plain' | 'sealed') {
  const { config } = loadConfig({ DATABASE_URL: url })
  const pool = createQuietPool(url, APPENDERS + 4)
  const db = createDb(pool)
  await migrateToLatest(db)
  const plain = createPostgresEventStore({ pool })
  const sealed = () => sealingStore(plain, subjectKeys(db, keyWrapping(config.masterKeys), { inEventDatabase: true }), cataloguedPersonalSpecs)
  return {
    log,
    pool,
    db,
    writer: log === 'sealed' ? sealed() : plain,
    /** A sealed log is read through a store opened afresh: no key is cached yet. */
    reader: (): EventStore => (log === 'sealed' ? sealed() : plain),
    async close() {
      await plain.close()
      await db.destroy()
    },
  }
}

async function appendContacts(store: EventStore, count: number): Promise<void> {
  const orgId = randomUUID()
  let next = 0
  await Promise.all(
    Array.from({ length: APPENDERS }, async () => {
      for (let i = next++; i < count; i = next++) {
        const id = randomUUID()
        const person = { first_name: `Ada ${i}`, last_name: 'Lovelace', email: `ada.${i}.${id}@example.test`, phone: '+44 20 7946 0000', address_line: '12 St James Square', city: 'London' }
        const data = { contact_id: id, org_id: orgId, ...emptyContact(), ...person, created_by: null, at: new Date().toISOString() }
        await store.appendToStream(`contact-${id}`, [{ type: 'ContactCreated', data, metadata: { orgId } }], { expectedRevision: 'no_stream' })
      }
    }),
  )
}

/** The note the bench prints: each replay, and sealed over plain by the mean of each side's two. */
export function sealingRebuildNote({ events, runs }: SealingRebuild): string {
  const mean = (log: RebuildRun['log'], of: (r: RebuildRun) => number) => {
    const mine = runs.filter((r) => r.log === log).map(of)
    return mine.reduce((a, b) => a + b, 0) / mine.length
  }
  const ratio = (of: (r: RebuildRun) => number) => (mean('sealed', of) / mean('plain', of)).toFixed(2)
  const each = runs.map((r) => `${r.log} ${(r.ms / 1000).toFixed(2)} s (Node ${r.nodeUsPerEvent.toFixed(0)} µs, backends ${r.backendsUsPerEvent.toFixed(0)} µs per event)`).join('; ')
  return `Rebuild of the contacts read model from ${events} contact creations, plain log vs sealed log (each person's key unwrapped once, cold): ${each}. Sealed/plain: wall ${ratio((r) => r.ms)}, Node CPU per event ${ratio((r) => r.nodeUsPerEvent)}, Node + backends ${ratio((r) => r.nodeUsPerEvent + r.backendsUsPerEvent)} (aim ≤ 1.20).`
}
