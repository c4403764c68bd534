import { sql } from 'kysely'
import type { RawBuilder } from 'kysely'
import { OPEN_STATUSES } from '../../commands/case/fields.ts'
import type { CaseEvent } from '../../commands/case/case.ts'
import { isMergeEvent } from '../../commands/case/merge.ts'
import type { Db } from '../../db/database.ts'

/**
 * What the cases read model keeps beside its rows so the case list's count and totals and the
 * service overview's open counts need no scan of an organization's cases (issue 32 performance):
 * live cases counted by status, priority and whether they await a first reply, per organization
 * (`case_counts`, with whether they have no assignee) and per profile (`case_profile_counts`: as an
 * assignee, kind `assigned`, and as anyone a member's list shows them to, kind `involved`: creator,
 * assignee or watcher). A case with two assignees counts for each. Each change of a case moves them
 * by the difference between its share before and after, so applying an event twice moves nothing the
 * second time, and a rebuild counts what the live rows hold. Rows that fall to zero stay.
 */
export async function createCountTables(db: Db): Promise<void> {
  await sql`CREATE TABLE case_counts (org_id uuid NOT NULL, status text NOT NULL, priority text NOT NULL, awaiting boolean NOT NULL, unassigned boolean NOT NULL, n integer NOT NULL,
    PRIMARY KEY (org_id, status, priority, awaiting, unassigned))`.execute(db)
  await sql`CREATE TABLE case_profile_counts (org_id uuid NOT NULL, profile_id uuid NOT NULL, kind text NOT NULL, status text NOT NULL, priority text NOT NULL, awaiting boolean NOT NULL, n integer NOT NULL,
    PRIMARY KEY (org_id, profile_id, kind, status, priority, awaiting))`.execute(db)
}

export const COUNT_TABLES = ['case_counts', 'case_profile_counts']

/** The events that may change a case's share (created, deleted, its status, priority, assignees, first reply or watchers): the others leave it alone. */
export function movesCounts(event: CaseEvent): boolean {
  if (event.type === 'CaseUpdated') return ['status', 'priority', 'assigned_to'].some((key) => key in event.data.changes)
  if (event.type === 'CaseMoved') return event.data.status !== undefined
  return isMergeEvent(event) || ['CaseCreated', 'CaseDeleted', 'CaseFirstResponded', 'CaseWatched', 'CaseUnwatched'].includes(event.type)
}

type Share = { org_id: string; status: string; priority: string; awaiting: boolean; assigned: string[]; involved: string[] }

/** A live case's share of the counts (none when deleted or missing): its assignees and everyone involved, each once. */
async function shareOf(db: Db, id: string): Promise<Share | undefined> {
  const { rows } = await sql<Share>`SELECT org_id, status, priority, first_response_at IS NULL AS awaiting,
      ARRAY(SELECT DISTINCT p FROM unnest(assigned_to) p ORDER BY 1) AS assigned,
      ARRAY(SELECT DISTINCT p FROM unnest(assigned_to || watchers || created_by) p WHERE p IS NOT NULL ORDER BY 1) AS involved
    FROM cases WHERE id = ${id} AND NOT is_deleted`.execute(db)
  return rows[0]
}

/** The cases whose share an event may change: its own, and a merge's survivor, which takes the duplicate's watchers. */
export const countedCases = (id: string, event: CaseEvent): string[] => (event.type === 'CaseMerged' ? [id, event.data.into_case_id] : [id])

/** Runs a change of the cases' rows and moves the counts by their shares after less their shares before, in one statement. */
export async function withCounts(db: Db, ids: readonly string[], change: () => Promise<void>): Promise<void> {
  const sharesOf = () => Promise.all(ids.map((id) => shareOf(db, id)))
  const before = await sharesOf()
  await change()
  const after = await sharesOf()
  if (JSON.stringify(before) === JSON.stringify(after)) return
  const signed = (shares: (Share | undefined)[], sign: number) => shares.flatMap((share) => (share ? [{ ...share, sign }] : []))
  const shares = [...signed(before, -1), ...signed(after, 1)]
  await sql`WITH s AS (SELECT * FROM jsonb_to_recordset(${JSON.stringify(shares)}::jsonb) AS s (org_id uuid, status text, priority text, awaiting boolean, assigned uuid[], involved uuid[], sign integer)),
    totals AS (
      INSERT INTO case_counts AS t SELECT org_id, status, priority, awaiting, cardinality(assigned) = 0, sum(sign) FROM s GROUP BY 1, 2, 3, 4, 5 HAVING sum(sign) <> 0
      ON CONFLICT (org_id, status, priority, awaiting, unassigned) DO UPDATE SET n = t.n + EXCLUDED.n)
    INSERT INTO case_profile_counts AS p
    SELECT org_id, profile_id, kind, status, priority, awaiting, sum(sign)
    FROM s CROSS JOIN LATERAL (SELECT p, 'assigned' FROM unnest(s.assigned) p UNION ALL SELECT p, 'involved' FROM unnest(s.involved) p) AS x(profile_id, kind)
    GROUP BY 1, 2, 3, 4, 5, 6 HAVING sum(sign) <> 0
    ON CONFLICT (org_id, profile_id, kind, status, priority, awaiting) DO UPDATE SET n = p.n + EXCLUDED.n`.execute(db)
}

const OPEN = sql`status = ANY(${[...OPEN_STATUSES]}::text[])`

/** The counts' rows of one organization, or of one profile in it as `kind`, as a FROM item (columns status, priority, awaiting, n). */
export function countRows(orgId: string, profile?: { id: string; kind: 'assigned' | 'involved' }): RawBuilder<unknown> {
  return profile
    ? sql`(SELECT status, priority, awaiting, n FROM case_profile_counts WHERE org_id = ${orgId} AND profile_id = ${profile.id}::uuid AND kind = ${profile.kind})`
    : sql`(SELECT status, priority, awaiting, n FROM case_counts WHERE org_id = ${orgId})`
}

/** The service overview's open counts: the organization's open cases, the unassigned ones among them, and per assignee theirs (those with some). */
export const openNow = (orgId: string) => sql<number>`(SELECT COALESCE(sum(n), 0)::int FROM case_counts WHERE org_id = ${orgId} AND ${OPEN})`
export const openUnassigned = (orgId: string) => sql<number>`(SELECT COALESCE(sum(n), 0)::int FROM case_counts WHERE org_id = ${orgId} AND unassigned AND ${OPEN})`
export const openPerAssignee = (orgId: string) => sql`(SELECT profile_id, sum(n)::int AS open FROM case_profile_counts WHERE org_id = ${orgId} AND kind = 'assigned' AND ${OPEN} GROUP BY 1 HAVING sum(n) > 0)`
