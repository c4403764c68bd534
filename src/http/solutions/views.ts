import { z } from 'zod'
import { SOLUTION_STATUSES } from '../../commands/solution/solution.ts'
import type { Db } from '../../db/database.ts'
import { displayName, membersByIds } from '../../identity/users.ts'
import { linkedCaseCounts } from '../../projections/case/solution-links.ts'
import type { SolutionRow } from '../../projections/solution/solutions.ts'

/** A solution as every route answers it: the solutions' own routes, a case's linked solutions (the case detail, the link routes). */
export const Solution = z.object({
  id: z.uuid(),
  title: z.string(),
  description: z.string().nullable(),
  status: z.enum(SOLUTION_STATUSES).describe('Review status; independent of publication'),
  is_published: z.boolean(),
  created_by: z.uuid().nullable().describe("The creator's profile id"),
  author: z.string().describe("The creator's name (first and last), or their email when they have none; empty when unknown"),
  case_count: z.number().int().describe('The live cases this solution is linked to, whoever may read them'),
  created_at: z.string(),
  updated_at: z.string(),
})
export type SolutionBody = z.infer<typeof Solution>

/** What a solution's answer takes beside its row: its creator's display name, how many cases link it. */
export type SolutionFacts = { authors: ReadonlyMap<string, string>; caseCounts: ReadonlyMap<string, number> }

const solutionBody = (row: SolutionRow, facts: SolutionFacts): SolutionBody => ({
  id: row.id,
  title: row.title,
  description: row.description,
  status: row.status,
  is_published: row.is_published,
  created_by: row.created_by,
  author: (row.created_by && facts.authors.get(row.created_by)) ?? '',
  case_count: facts.caseCounts.get(row.id) ?? 0,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
})

/** The creators' display names (name, else email; deactivated members included) and the case counts of the rows, in two queries. */
async function solutionFacts(db: Db, orgId: string, rows: readonly SolutionRow[]): Promise<SolutionFacts> {
  const creators = [...new Set(rows.flatMap((row) => (row.created_by ? [row.created_by] : [])))]
  const [members, caseCounts] = await Promise.all([membersByIds(db, orgId, creators), linkedCaseCounts(db, orgId, rows.map((row) => row.id))])
  return { authors: new Map(members.map((m) => [m.id, displayName(m)])), caseCounts }
}

/** The answers of solution rows, in their order. */
export async function solutionBodies(db: Db, orgId: string, rows: readonly SolutionRow[]): Promise<SolutionBody[]> {
  const facts = await solutionFacts(db, orgId, rows)
  return rows.map((row) => solutionBody(row, facts))
}
