import { z } from 'zod'
import { STAGE_KINDS } from '../../commands/pipeline/stage-rules.ts'
import { ActorRef } from '../kernel/schemas/history.ts'

/** The deal's stage ledger (issue 8); the shapes every history shares are in kernel/schemas/history.ts. */

export const StageIntervals = z.object({
  count: z.number().int(),
  results: z.array(
    z.object({
      stage: z.string().describe('The stage code'),
      stage_id: z.uuid(),
      label: z.string().nullable().describe("The stage's current label; null once the stage is removed"),
      kind: z.enum(STAGE_KINDS),
      pipeline_id: z.uuid(),
      entered_at: z.string(),
      exited_at: z.string().nullable().describe('Null while the deal is still in the stage'),
      days: z.number().int().describe('Whole days from entered_at to exited_at, or to now'),
      entered_by: ActorRef.nullable(),
      exited_by: ActorRef.nullable(),
    }),
  ),
})
