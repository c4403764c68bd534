import { sql } from 'kysely'
import type { Test } from 'tap'
import { isSlaEvent } from '../../src/commands/case/sla.ts'
import type { Db } from '../../src/db/database.ts'
import type { EventStore } from '../../src/eventstore/event-store.ts'
import { caseSlaFiguresProjector } from '../../src/projections/case/sla-figures.ts'
import { rebuildEqualsLive } from './read-models.ts'

/**
 * The analytics read model's own read of each case (src/projections/case/sla-figures.ts: what the
 * service overview groups and filters by, folded from the case's events) against the cases read
 * model's rows: the same cases, opened at the same instant, with the same priority, type,
 * assignees, status and deletion.
 */
export async function figureFactsEqualCases(t: Test, db: Db): Promise<void> {
  const facts = sql`org_id, created_at, priority, case_type, assigned_to, status, is_deleted`
  const figures = await sql<Record<string, unknown>>`SELECT case_id AS id, ${facts} FROM case_sla_figures ORDER BY 1`.execute(db)
  const cases = await sql<Record<string, unknown>>`SELECT id, ${facts} FROM cases ORDER BY 1`.execute(db)
  t.ok(cases.rows.some((row) => row.is_deleted) || cases.rows.some((row) => row.status === 'Duplicate'), 'some case was deleted or merged')
  t.same(figures.rows, cases.rows, "each case's facts in the analytics read model are the cases read model's")
}

/**
 * The analytics read model rebuilt from the log equals the live one, in pages and one event at a
 * time, and again with each of the case's own events (not the clock's, which the checkpoint applies
 * once, as the cases read model's) applied twice: a second apply changes nothing.
 */
export async function figuresRebuildEqualsLive(t: Test, world: { db: Db; store: EventStore }): Promise<void> {
  await rebuildEqualsLive(t, world, caseSlaFiguresProjector, { oneByOne: true })
  const twice = {
    ...caseSlaFiguresProjector,
    applyBatch: undefined,
    apply: async (...[trx, recorded]: Parameters<typeof caseSlaFiguresProjector.apply>) => {
      await caseSlaFiguresProjector.apply(trx, recorded)
      if (!isSlaEvent(recorded)) await caseSlaFiguresProjector.apply(trx, recorded)
    },
  }
  await rebuildEqualsLive(t, world, twice)
}
