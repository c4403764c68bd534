/**
 * The case ↔ solution links read model (solution-links.ts): one row per solution a case links now.
 * Ids only: who linked it is a profile id, as on every case event.
 */
export type CaseSolutionRow = { case_id: string; solution_id: string; org_id: string; linked_by: string | null; linked_at: Date }

export type CaseSolutionTables = { case_solutions: CaseSolutionRow }

// This module's tables join the one Database type (db/database.ts).
declare module '../../db/database.ts' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging: the tables are the members
  interface Database extends CaseSolutionTables {}
}
