import { sql } from 'kysely'
import type { Test } from 'tap'
import { OPEN_STATUSES } from '../../src/commands/case/fields.ts'
import type { Db } from '../../src/db/database.ts'

/**
 * The open counts the cases read model keeps as its rows change (src/projections/case/open-counts.ts)
 * against a count of those rows: the same per organization and per assignee (rows kept at zero aside).
 */
export async function openCountsEqualRows(t: Test, db: Db): Promise<void> {
  const open = sql`NOT c.is_deleted AND c.status = ANY(${[...OPEN_STATUSES]}::text[])`
  const rows = async (query: ReturnType<typeof sql>) => (await sql<Record<string, unknown>>`${query}`.execute(db)).rows
  const counted = await rows(sql`SELECT org_id, count(*)::int AS open, count(*) FILTER (WHERE cardinality(assigned_to) = 0)::int AS unassigned FROM cases c WHERE ${open} GROUP BY 1 ORDER BY 1`)
  t.ok(counted.length, 'some cases are open')
  t.same(await rows(sql`SELECT org_id, open, unassigned FROM case_open_totals WHERE (open, unassigned) <> (0, 0) ORDER BY 1`), counted, 'open cases per organization, as counted from the rows')
  t.same(
    await rows(sql`SELECT org_id, profile_id, open FROM case_open_assignees WHERE open <> 0 ORDER BY 1, 2`),
    await rows(sql`SELECT org_id, profile_id, count(*)::int AS open FROM cases c CROSS JOIN LATERAL unnest(c.assigned_to) AS a(profile_id) WHERE ${open} GROUP BY 1, 2 ORDER BY 1, 2`),
    'open cases per assignee, as counted from the rows',
  )
}
