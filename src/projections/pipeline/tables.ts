import type { StageKind } from '../../commands/pipeline/stage-rules.ts'

/**
 * The pipelines read model of one kind (deals', leads' or tasks', commands/pipeline/kinds.ts): one row per
 * live pipeline and one per live stage; a deleted pipeline or removed stage leaves no rows.
 * `position` is the stage's 1-based order; `probability` is the default a deal in the stage gets
 * (100 won, 0 lost, the seeded per-code default, or null: none). Each kind has its own tables and
 * projector, fed by the same event types from its own stream category.
 */
export type PipelineRow = { id: string; org_id: string; name: string; is_default: boolean; created_by: string | null; created_at: Date; updated_at: Date }

export type PipelineStageRow = {
  id: string
  pipeline_id: string
  org_id: string
  code: string
  label: string
  position: number
  kind: StageKind
  expected_days: number | null
  warning_days: number | null
  probability: number | null
}

/** The kinds' table prefixes (pipelines.ts): deals' none, then leads', tasks' and cases'. */
export type PipelinePrefix = '' | 'lead_' | 'task_' | 'case_'
export type PipelinesTable = `${PipelinePrefix}pipelines`
export type PipelineStagesTable = `${PipelinePrefix}pipeline_stages`

export type PipelineTables = { [T in PipelinesTable]: PipelineRow } & { [T in PipelineStagesTable]: PipelineStageRow }

// This module's tables join the one Database type (db/database.ts).
declare module '../../db/database.ts' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging: the tables are the members
  interface Database extends PipelineTables {}
}
