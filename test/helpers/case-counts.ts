import { sql } from 'kysely'
import type { Test } from 'tap'
import type { Db } from '../../src/db/database.ts'

/**
 * The counts the cases read model keeps as its rows change (src/projections/case/case-counts.ts)
 * against a count of those rows: the same per organization and per profile, as assignee and as
 * involved (creator, assignee or watcher), rows kept at zero aside.
 */
export async function caseCountsEqualRows(t: Test, db: Db): Promise<void> {
  const rows = async (query: ReturnType<typeof sql>) => (await sql<Record<string, unknown>>`${query}`.execute(db)).rows
  const keys = sql`c.status, c.priority, c.first_response_at IS NULL AS awaiting`
  const counted = await rows(sql`SELECT c.org_id, ${keys}, cardinality(c.assigned_to) = 0 AS unassigned, count(*)::int AS n FROM cases c WHERE NOT c.is_deleted GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5`)
  t.ok(counted.length, 'some cases are live')
  t.same(await rows(sql`SELECT org_id, status, priority, awaiting, unassigned, n FROM case_counts WHERE n <> 0 ORDER BY 1, 2, 3, 4, 5`), counted, 'cases per organization, status, priority and first reply, as counted from the rows')
  const perProfile = (kind: string, profiles: ReturnType<typeof sql>) =>
    sql`SELECT c.org_id, p.profile_id, ${kind}::text AS kind, ${keys}, count(*)::int AS n FROM cases c CROSS JOIN LATERAL (SELECT DISTINCT x FROM unnest(${profiles}) x WHERE x IS NOT NULL) AS p(profile_id) WHERE NOT c.is_deleted GROUP BY 1, 2, 3, 4, 5, 6`
  t.same(
    await rows(sql`SELECT org_id, profile_id, kind, status, priority, awaiting, n FROM case_profile_counts WHERE n <> 0 ORDER BY 1, 2, 3, 4, 5, 6`),
    await rows(sql`${perProfile('assigned', sql`c.assigned_to`)} UNION ALL ${perProfile('involved', sql`c.assigned_to || c.watchers || ARRAY[c.created_by]`)} ORDER BY 1, 2, 3, 4, 5, 6`),
    'cases per profile as assignee and as involved, as counted from the rows',
  )
}

type ListOf = (headers: Record<string, string>, query?: string) => Promise<Record<string, unknown>>

/**
 * The case list's count and totals from the kept counts (an admin's or a member's cases, by status,
 * priority and one assignee) equal a scan of the rows: the same query with a creation bound every
 * case passes, which the kept counts cannot answer.
 */
export async function keptCountsEqualScan(t: Test, list: ListOf, callers: Record<string, Record<string, string>>, queries: string[]): Promise<void> {
  const figures = ({ cases_count, open_count, urgent_count, awaiting_first_reply }: Record<string, unknown>) => ({ cases_count, open_count, urgent_count, awaiting_first_reply })
  for (const [who, headers] of Object.entries(callers)) {
    for (const query of queries) {
      const scanned = figures(await list(headers, `?created_at__gte=1970-01-01&${query}`))
      t.same(figures(await list(headers, `?${query}`)), scanned, `${who} ?${query}: the kept counts as the rows scanned`)
    }
  }
}
