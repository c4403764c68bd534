import { sql } from 'kysely'
import type { Db } from '../../src/db/database.ts'
import type { Kysely } from 'kysely'
import type { Projector } from '../../src/projections/kernel/projector.ts'

/**
 * A minimal read model for runner tests: per stream, how many `Counted` events and the sum of
 * their amounts (numeric, so a double application would show). `failOn` simulates a crash.
 */
/** The counter's table, under the name the test gives it. */
type CounterTables = Record<string, { stream_name: string; events: number; total: string }>

export function counterProjector(options: { name?: string; version?: number; failOn?: (data: unknown) => boolean } = {}): Projector {
  const table = options.name ?? 'counter'
  return {
    name: table,
    version: options.version ?? 1,
    eventTypes: ['Counted'],
    tables: [table],
    async createTables(db) {
      await db.schema
        .createTable(table)
        .addColumn('stream_name', 'text', (c) => c.primaryKey())
        .addColumn('events', 'integer', (c) => c.notNull())
        .addColumn('total', 'numeric', (c) => c.notNull())
        .execute()
    },
    async apply(trx, event) {
      if (options.failOn?.(event.data)) throw new Error('simulated crash while applying')
      const amount = String((event.data as { amount: string }).amount)
      await (trx as unknown as Kysely<CounterTables>)
        .insertInto(table)
        .values({ stream_name: event.streamName, events: 1, total: amount })
        .onConflict((oc) => oc.column('stream_name').doUpdateSet({ events: sql`${sql.ref(table)}.events + 1`, total: sql`${sql.ref(table)}.total + ${amount}::numeric` }))
        .execute()
    },
  }
}

export type CounterRow = { stream_name: string; events: number; total: string }

export async function counterRows(db: Db): Promise<CounterRow[]> {
  return (await sql<CounterRow>`SELECT * FROM counter ORDER BY stream_name`.execute(db)).rows
}

/** Sets every total by hand, as no event would: a rebuild must recompute it. */
export async function tamperCounter(db: Db): Promise<void> {
  await sql`UPDATE counter SET total = 999`.execute(db)
}
