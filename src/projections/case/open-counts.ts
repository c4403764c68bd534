import { sql } from 'kysely'
import { OPEN_STATUSES } from '../../commands/case/fields.ts'
import type { CaseEvent } from '../../commands/case/case.ts'
import type { Db } from '../../db/database.ts'

/**
 * What the cases read model keeps beside its rows so the service overview's open counts need no
 * scan of an organization's cases (issue 32 performance): per organization, its live open cases
 * and the unassigned ones among them (`case_open_totals`), and per assignee theirs
 * (`case_open_assignees`; a case with two assignees counts for each). Each change of a case moves
 * them by the difference between its share before and after, so applying an event twice moves
 * nothing the second time, and a rebuild counts what the live rows hold. Rows that fall to zero stay.
 */
export async function createOpenCountTables(db: Db): Promise<void> {
  await sql`CREATE TABLE case_open_totals (org_id uuid PRIMARY KEY, open integer NOT NULL, unassigned integer NOT NULL)`.execute(db)
  await sql`CREATE TABLE case_open_assignees (org_id uuid NOT NULL, profile_id uuid NOT NULL, open integer NOT NULL, PRIMARY KEY (org_id, profile_id))`.execute(db)
}

export const OPEN_COUNT_TABLES = ['case_open_totals', 'case_open_assignees']

/** The events that may open, close, delete or reassign a case: the others leave its share alone. */
export function movesOpenCounts(event: CaseEvent): boolean {
  if (event.type === 'CaseUpdated') return 'status' in event.data.changes || 'assigned_to' in event.data.changes
  if (event.type === 'CaseMoved') return event.data.status !== undefined
  return event.type === 'CaseCreated' || event.type === 'CaseDeleted'
}

type Share = { org_id: string; assigned_to: string[] }

/** A live open case's share of the counts: its organization and assignees (none when closed, deleted or missing). */
async function shareOf(db: Db, id: string): Promise<Share | undefined> {
  const { rows } = await sql<Share>`SELECT org_id, assigned_to FROM cases WHERE id = ${id} AND NOT is_deleted AND status = ANY(${[...OPEN_STATUSES]}::text[])`.execute(db)
  return rows[0]
}

/** Runs a change of one case's row and moves the counts by its share after less its share before, in one statement. */
export async function withOpenCounts(db: Db, id: string, change: () => Promise<void>): Promise<void> {
  const before = await shareOf(db, id)
  await change()
  const after = await shareOf(db, id)
  if (JSON.stringify(before) === JSON.stringify(after)) return
  const shares = [...(before ? [{ ...before, sign: -1 }] : []), ...(after ? [{ ...after, sign: 1 }] : [])]
  await sql`WITH s AS (SELECT * FROM jsonb_to_recordset(${JSON.stringify(shares)}::jsonb) AS s (org_id uuid, assigned_to uuid[], sign integer)),
    totals AS (
      INSERT INTO case_open_totals AS t
      SELECT org_id, sum(sign), COALESCE(sum(sign) FILTER (WHERE cardinality(assigned_to) = 0), 0) FROM s GROUP BY org_id
      ON CONFLICT (org_id) DO UPDATE SET open = t.open + EXCLUDED.open, unassigned = t.unassigned + EXCLUDED.unassigned)
    INSERT INTO case_open_assignees AS a
    SELECT org_id, profile_id, sum(sign) FROM s CROSS JOIN LATERAL unnest(s.assigned_to) AS p(profile_id) GROUP BY 1, 2 HAVING sum(sign) <> 0
    ON CONFLICT (org_id, profile_id) DO UPDATE SET open = a.open + EXCLUDED.open`.execute(db)
}
