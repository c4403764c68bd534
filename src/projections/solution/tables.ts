import type { SolutionFields } from '../../commands/solution/solution.ts'

/** The solutions read model: one row per solution, soft-deleted rows kept but hidden from every query. */
export type SolutionRow = SolutionFields & { id: string; org_id: string; created_by: string | null; is_deleted: boolean; created_at: Date; updated_at: Date }

export type SolutionTables = { solutions: SolutionRow }

// This module's tables join the one Database type (db/database.ts).
declare module '../../db/database.ts' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging: the tables are the members
  interface Database extends SolutionTables {}
}
