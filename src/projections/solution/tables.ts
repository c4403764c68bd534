import type { SolutionFields } from '../../commands/solution/solution.ts'

/** The solutions read model: one row per solution, soft-deleted rows kept but hidden from every query. */
export type SolutionRow = SolutionFields & { id: string; org_id: string; created_by: string | null; is_deleted: boolean; created_at: Date; updated_at: Date }

export type SolutionTables = { solutions: SolutionRow }

