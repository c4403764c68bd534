import { recordDecider } from '../record.ts'
import type { RecordCommand, RecordEvent, RecordState } from '../record.ts'
import { streamCategory } from '../streams.ts'

/**
 * A solution: a knowledge-base article answering support cases (§4.1: listed at
 * /api/cases/solutions/). Its review `status` and whether it is published are independent:
 * publishing an article still in draft is allowed (the totals count "approved but unpublished"
 * as the queue of articles ready to go out). Deleting is soft.
 */
export const SOLUTION_STATUSES = ['draft', 'reviewed', 'approved'] as const

export type SolutionFields = {
  title: string
  description: string | null
  status: (typeof SOLUTION_STATUSES)[number]
  is_published: boolean
}

// Events: the storage contract (never change a type name or data shape). Commands name the decisions.
export const solutionNames = {
  events: { created: 'SolutionCreated', updated: 'SolutionUpdated', deleted: 'SolutionDeleted', idKey: 'solution_id' },
  commands: { create: 'CreateSolution', update: 'UpdateSolution', delete: 'DeleteSolution', idKey: 'solutionId' },
} as const
export type SolutionEvent = RecordEvent<SolutionFields, typeof solutionNames>
export type SolutionCommand = RecordCommand<SolutionFields, typeof solutionNames>
export type SolutionState = RecordState<SolutionFields>

export const emptySolution = (): SolutionFields => ({ title: '', description: null, status: 'draft', is_published: false })

export const solutionDecider = recordDecider(emptySolution, solutionNames)

export const solutionStreams = streamCategory('solution')
