import type { StreamCategory } from '../streams.ts'
import { streamCategory } from '../streams.ts'
import { DEAL_PIPELINE_RULES, DEFAULT_PIPELINE_NAME, defaultPipelineId, pipelineDecider, pipelineDeciderOf, pipelineStreams } from './pipeline.ts'
import type { PipelineDecider, PipelineRules } from './pipeline.ts'
import { CASE_SEED, LEAD_SEED, TASK_SEED } from './stage-rules.ts'

/**
 * The kinds of pipeline: the deals' (§2.2, §4.5), the leads' (issue #7: the spec lists only their
 * routes) and the tasks'. One decider, one set of events and rules; each kind has its own stream category, so a
 * deal command can never fold a lead pipeline nor the reverse, its own seed and default pipeline.
 * Both write the same event types: a projector of one kind skips the other's streams (`isStreamOf`).
 */
export type PipelineKind = {
  rules: PipelineRules
  decider: PipelineDecider
  streams: StreamCategory
  defaultName: string
  /** The organization's default pipeline of this kind, created on first use (see defaultPipelineId). */
  defaultId(orgId: string): string
}

export const dealPipelines: PipelineKind = { rules: DEAL_PIPELINE_RULES, decider: pipelineDecider, streams: pipelineStreams, defaultName: DEFAULT_PIPELINE_NAME, defaultId: (orgId) => defaultPipelineId(orgId) }

const LEAD_PIPELINE_RULES: PipelineRules = { seed: LEAD_SEED, records: 'leads' }

export const leadPipelines: PipelineKind = {
  rules: LEAD_PIPELINE_RULES,
  decider: pipelineDeciderOf(LEAD_PIPELINE_RULES),
  streams: streamCategory('lead_pipeline'),
  defaultName: 'Default lead pipeline',
  defaultId: (orgId) => defaultPipelineId(orgId, 'crm-default-lead-pipeline'),
}

const TASK_PIPELINE_RULES: PipelineRules = { seed: TASK_SEED, records: 'tasks' }

/** Task pipelines (the original's TaskPipeline): the same rules, the task seed; tasks enter their stages by a move only. */
export const taskPipelines: PipelineKind = {
  rules: TASK_PIPELINE_RULES,
  decider: pipelineDeciderOf(TASK_PIPELINE_RULES),
  streams: streamCategory('task_pipeline'),
  defaultName: 'Default task pipeline',
  defaultId: (orgId) => defaultPipelineId(orgId, 'crm-default-task-pipeline'),
}

/** Whether a stream belongs to this category (`pipeline-…` is not `lead_pipeline-…`). */
export const isStreamOf = (streams: StreamCategory, streamName: string): boolean => streamName.startsWith(streams.stream(''))

const CASE_PIPELINE_RULES: PipelineRules = { seed: CASE_SEED, records: 'cases' }

/** Case pipelines (the original's CasePipeline): the same rules, the case seed; cases enter their stages by a move only. */
export const casePipelines: PipelineKind = {
  rules: CASE_PIPELINE_RULES,
  decider: pipelineDeciderOf(CASE_PIPELINE_RULES),
  streams: streamCategory('case_pipeline'),
  defaultName: 'Default case pipeline',
  defaultId: (orgId) => defaultPipelineId(orgId, 'crm-default-case-pipeline'),
}
