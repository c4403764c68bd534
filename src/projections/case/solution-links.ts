import { sql } from 'kysely'
import { caseStreams } from '../../commands/case/case.ts'
import { SOLUTION_LINK_EVENT_TYPES } from '../../commands/case/solution-links.ts'
import type { CaseSolutionEvent } from '../../commands/case/solution-links.ts'
import type { Database, Db } from '../../db/database.ts'
import { domainEventOf } from '../../events/versions.ts'
import type { Viewer } from '../../visibility/policy.ts'
import type { Projector } from '../kernel/projector.ts'
import { caseConditions } from './queries.ts'

// Its row type, and with it the table in the Database type.
export type { CaseSolutionRow } from './solution-link-tables.ts'

/**
 * Which solutions each case links (commands/case/solution-links.ts). A row stays when its case or
 * solution is deleted: the queries join the live ones, so a link reads as gone without an event.
 */
async function createTables(db: Db): Promise<void> {
  await sql`CREATE TABLE case_solutions (case_id uuid NOT NULL, solution_id uuid NOT NULL, org_id uuid NOT NULL, linked_by uuid, linked_at timestamptz NOT NULL, PRIMARY KEY (case_id, solution_id))`.execute(db)
}

async function createIndexes(db: Db): Promise<void> {
  await sql`CREATE INDEX case_solutions_solution ON case_solutions (solution_id)`.execute(db)
}

async function apply(db: Db, caseId: string, orgId: string, event: CaseSolutionEvent): Promise<void> {
  const { solution_id, by, at } = event.data
  if (event.type === 'CaseSolutionUnlinked') {
    await db.deleteFrom('case_solutions').where('case_id', '=', caseId).where('solution_id', '=', solution_id).execute()
    return
  }
  await db.insertInto('case_solutions').values({ case_id: caseId, solution_id, org_id: orgId, linked_by: by, linked_at: new Date(at) }).onConflict((oc) => oc.columns(['case_id', 'solution_id']).doNothing()).execute()
}

export const caseSolutionsProjector: Projector = {
  name: 'case_solutions',
  version: 1,
  eventTypes: SOLUTION_LINK_EVENT_TYPES,
  tables: ['case_solutions'],
  createTables,
  createIndexes,
  apply: (trx, recorded) => apply(trx, caseStreams.idOf(recorded.streamName), recorded.metadata.orgId ?? '', domainEventOf<CaseSolutionEvent>(recorded)),
}

type SolutionRow = Database['solutions']

/** The live solutions a case links, newest solution first (the original's model order). */
export function linkedSolutions(db: Db, orgId: string, caseId: string): Promise<SolutionRow[]> {
  return db
    .selectFrom('case_solutions as l')
    .innerJoin('solutions as s', 's.id', 'l.solution_id')
    .selectAll('s')
    .where('l.case_id', '=', caseId)
    .where('l.org_id', '=', orgId)
    .where('s.org_id', '=', orgId)
    .where('s.is_deleted', '=', false)
    .orderBy('s.created_at', 'desc')
    .orderBy('s.id')
    .execute()
}

/** How many live cases link each solution, by solution id (absent: none). */
export async function linkedCaseCounts(db: Db, orgId: string, solutionIds: readonly string[]): Promise<Map<string, number>> {
  if (!solutionIds.length) return new Map()
  const { rows } = await sql<{ solution_id: string; n: string }>`SELECT l.solution_id, count(*) AS n FROM case_solutions l JOIN cases c ON c.id = l.case_id AND NOT c.is_deleted
    WHERE l.org_id = ${orgId} AND l.solution_id = ANY(${[...solutionIds]}::uuid[]) GROUP BY l.solution_id`.execute(db)
  return new Map(rows.map((row) => [row.solution_id, Number(row.n)]))
}

export type LinkedCase = { id: string; name: string; status: string; priority: string; created_at: Date }

/** The live cases linking a solution that the viewer may read (the case list's visibility), newest first. */
export async function linkedCases(db: Db, viewer: Viewer, solutionId: string, limit: number): Promise<LinkedCase[]> {
  const { rows } = await sql<LinkedCase>`SELECT c.id, c.name, c.status, c.priority, c.created_at FROM case_solutions l JOIN cases c ON c.id = l.case_id
    WHERE l.solution_id = ${solutionId} AND ${sql.join(caseConditions(viewer, {}), sql` AND `)} ORDER BY c.created_at DESC, c.id DESC LIMIT ${limit}`.execute(db)
  return rows
}
