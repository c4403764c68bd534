import { z } from 'zod'
import { PageQuery } from '../kernel/schemas/common.ts'

/** Stage-change feed and stage analytics (issue 8 §2, analysts replaying stage changes). */

const filterValue = (description: string) => z.string().optional().describe(description)

export const StageChangeQuery = PageQuery.extend({
  pipeline: filterValue('A pipeline id: changes into or out of a stage of it.'),
  from: filterValue('The stage code the deal left (exact, case-sensitive); a creation has none, so never matches.'),
  to: filterValue('The stage code the deal entered (exact, case-sensitive).'),
  actor: filterValue('The profile id that made the change (or created the deal).'),
  at__gte: filterValue('On or after: a date (YYYY-MM-DD, from its UTC midnight) or an ISO instant.'),
  at__lte: filterValue('On or before: a date (YYYY-MM-DD, its whole UTC day included) or an ISO instant.'),
})

const stageCode = z.string().nullable()

export const StageChangeItem = z.object({
  position: z.string().describe('The event\'s global log position (`commit-prepare`): the feed\'s order.'),
  event_type: z.enum(['OpportunityCreated', 'OpportunityStageChanged']).describe('OpportunityCreated: the deal\'s entry into its first stage (no `from_*`, no days); OpportunityStageChanged: a move.'),
  deal_id: z.string(),
  deal_name: z.string().describe('The deal\'s name at the time of the change.'),
  pipeline_id: z.string().describe('The pipeline of the stage entered.'),
  from_pipeline_id: z.string().nullable().describe('The pipeline of the stage left (differs from `pipeline_id` when the change moved the deal to another pipeline).'),
  from_stage: stageCode.describe('Code of the stage left, as it was then.'),
  from_stage_id: z.string().nullable(),
  from_kind: z.enum(['open', 'won', 'lost']).nullable(),
  to_stage: z.string().describe('Code of the stage entered, as it was then.'),
  to_stage_id: z.string(),
  to_kind: z.enum(['open', 'won', 'lost']),
  amount: z.string().nullable().describe('The deal\'s amount at the time (a decimal string), after any edit made by the same request.'),
  currency: z.string().nullable().describe('The deal\'s currency at the time.'),
  actor: z.object({ id: z.string() }).nullable().describe('The profile that made the change (created the deal); null for system work.'),
  at: z.string(),
  days_in_previous_stage: z.number().int().nullable().describe('Whole days (floored) between entering the previous stage and this change; null for a creation.'),
})

export const StageChangeList = z.object({ error: z.literal(false), count: z.number().int(), offset: z.number().int(), limit: z.number().int(), results: z.array(StageChangeItem) })

export const AnalyticsQuery = z.object({
  pipeline: filterValue('A pipeline id of the organization (default: its default pipeline); another organization\'s answers 404.'),
  from: filterValue('Only stays that began on or after: a date (YYYY-MM-DD) or an ISO instant. Malformed: nothing matches.'),
  to: filterValue('Only stays that began on or before: a date (its whole UTC day included) or an ISO instant. Malformed: nothing matches.'),
})

const StageRef = {
  stage: z.string().describe('The stage\'s current code.'),
  stage_id: z.string(),
  label: z.string(),
  kind: z.enum(['open', 'won', 'lost']),
  order: z.number().int().describe('The stage\'s current 1-based position in the pipeline.'),
}

const COHORT = 'Counted over the stays in the stage that began within from/to (a creation in the stage is an entry), of the deals the caller may see (admins: all live deals; others: deals they created or are assigned to), deleted deals left out.'

const count = (description: string) => z.number().int().describe(description)

/** Every per-stage figure both analytics answer from; each answer picks its own. */
const StageMetrics = z.object({
  ...StageRef,
  entered: count('Distinct deals that entered the stage (by creation in it or by a stage change into it).'),
  completed_stays: count('Stays that ended: the deal left the stage by its next stage change (a deal still in the stage is not counted; each stay of a deal that came back counts).'),
  median_days: z.number().nullable().describe('Median (percentile_cont 0.5) of the completed stays\' exact durations, in days (fractional, rounded to 2 decimals); null without any.'),
  p90_days: z.number().nullable().describe('90th percentile (percentile_cont 0.9, linear interpolation) of the completed stays\' exact durations, in days rounded to 2 decimals; null without any.'),
  exited_forward: count('Of the deals that entered, those that left the stage forward: to an open stage of the same pipeline with a higher current order, or to any won stage (never to a lost one).'),
  won: count('Of the deals that entered, those that left the stage directly into a won stage.'),
  lost: count('Of the deals that entered, those that left the stage directly into a lost stage.'),
  reached_won: count('Of the deals that entered, those that were in a won stage at or after entering (the stay itself counts for a won stage), whatever came after.'),
  conversion_rate: z.number().nullable().describe('reached_won / entered, rounded to 4 decimals; null when no deal entered.'),
})
export type StageMetrics = z.infer<typeof StageMetrics>

const FLOW = { exited_forward: true, won: true, lost: true, reached_won: true, conversion_rate: true } as const
export const StageDurationItem = StageMetrics.omit(FLOW)
export const FunnelItem = StageMetrics.omit({ completed_stays: true, median_days: true, p90_days: true })

const analyticsOf = <T extends z.ZodType>(item: T, description: string) =>
  z.object({
    error: z.literal(false),
    pipeline: z.object({ id: z.string(), name: z.string() }),
    from: z.string().nullable(),
    to: z.string().nullable(),
    stages: z.array(item).describe(`${description} One entry per current stage of the pipeline, in order. ${COHORT}`),
  })

export const StageDurations = analyticsOf(StageDurationItem, 'How long deals stay in each stage.')
export const Funnel = analyticsOf(FunnelItem, 'How deals flow through each stage.')
