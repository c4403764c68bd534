import { z } from 'zod'

/** What both dashboard answers share. */

export const Money = z.string().describe('Decimal string, summed in SQL numeric (no floating point); "0" when nothing is priced')

const COVERS = ['accounts', 'contacts', 'leads', 'opportunities', 'tasks', 'goals', 'activities', 'cases', 'invoices'] as const
export const Coverage = {
  covers: z.array(z.enum(COVERS)).describe('The modules this answer is computed from'),
  not_covered: z.array(z.string()).max(0).describe('Always empty now that every module the dashboard reads is built; kept for clients that read it (it named cases and invoices before they were)'),
}
export const coverage = { covers: [...COVERS], not_covered: [] }
