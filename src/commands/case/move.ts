import { ValidationError } from '../../errors.ts'
import type { Actor } from '../caller.ts'
import type { PipelineFacts } from '../pipeline/pipeline.ts'
import type { Stage, StageKind } from '../pipeline/stage-rules.ts'
import { summaryOf } from './fields.ts'
import type { CaseFields, CaseStatus, CaseSummary } from './fields.ts'

/**
 * A case's place on the case board (the original's /api/cases/kanban/ and /move/). Two boards, as the
 * original: by status (a case with no stage sits in its status's column) and by pipeline (a stage of
 * a case pipeline). Entering a stage sets the status it stands for (`statusOfStage`); a status named
 * in the move wins over it. A move into Closed dates the closing (`closed_on`: the day of the move,
 * unless the case has one), which the original's board skipped, leaving closed cases without a date;
 * a move out of Closed clears it. A case enters a stage only here, decided against the pipeline
 * folded from its stream and appended guarded by it.
 */
export type CasePlacement = { pipeline_id: string; stage: string; stage_id: string; stage_kind: StageKind }

/** `to` null: on the status board. `status` and `closed_on` when the move changed them. `case`: the case after the move. */
export type CaseMoved = {
  type: 'CaseMoved'
  data: { from: CasePlacement | null; to: CasePlacement | null; status?: { from: CaseStatus; to: CaseStatus }; closed_on?: { from: string | null; to: string | null }; kanban_order: number; case: CaseSummary; by: string | null; at: string }
}

/** `stage`: a stage id with its pipeline's facts, null to leave any pipeline, undefined to stay. `day`: the move's day (YYYY-MM-DD), a closing's date. */
export type MoveCase = { type: 'MoveCase'; orgId: string; actor: Actor; at: string; day: string; stage?: { id: string; pipeline: PipelineFacts } | null; status?: CaseStatus; kanbanOrder: number | null }

/** What a move needs of the case's folded state. */
export type Placed = { placement: CasePlacement | null; kanbanOrder: number; fields: CaseFields }

/** The status a stage stands for: won is Closed, lost Rejected; the pipeline's first stage is New, any other open one Assigned. */
export function statusOfStage(stages: readonly Pick<Stage, 'id'>[], stage: Pick<Stage, 'id' | 'kind'>): CaseStatus {
  if (stage.kind === 'won') return 'Closed'
  if (stage.kind === 'lost') return 'Rejected'
  return stages[0]?.id === stage.id ? 'New' : 'Assigned'
}

function placementIn(command: MoveCase, state: Placed): { to: CasePlacement | null; status: CaseStatus } {
  const { stage: target, orgId } = command
  if (target === undefined) return { to: state.placement, status: state.fields.status }
  if (target === null) return { to: null, status: state.fields.status }
  const pipeline = target.pipeline.state
  const stage = pipeline.exists && pipeline.orgId === orgId && !pipeline.deleted ? pipeline.stages.find((s) => s.id === target.id) : undefined
  if (!stage) throw new ValidationError({ stage_id: ['Expected a stage of a case pipeline of this organization.'] })
  const entering = stage.id !== state.placement?.stage_id
  if (entering && pipeline.locked) throw new ValidationError({ stage_id: ['The pipeline is being deleted.'] })
  if (entering && pipeline.lockedStageIds.includes(stage.id)) throw new ValidationError({ stage_id: [`The stage ${stage.label} is being removed or changed; try again.`] })
  const to = { pipeline_id: target.pipeline.id, stage: stage.code, stage_id: stage.id, stage_kind: stage.kind }
  return { to, status: entering ? statusOfStage(pipeline.stages, stage) : state.fields.status }
}

/** The move's event, or none when the card already sits there; visibility and access were checked by the case's decider. */
export function decideCaseMove(command: MoveCase, state: Placed): CaseMoved[] {
  const placed = placementIn(command, state)
  const status = command.status ?? placed.status
  const kanbanOrder = command.kanbanOrder ?? state.kanbanOrder
  const samePlace = (placed.to?.stage_id ?? null) === (state.placement?.stage_id ?? null)
  if (samePlace && status === state.fields.status && kanbanOrder === state.kanbanOrder) return []
  const before = state.fields
  const closedOn = status === 'Closed' ? (before.closed_on ?? command.day) : before.status === 'Closed' ? null : before.closed_on
  const statusChange = status === before.status ? {} : { status: { from: before.status, to: status } }
  const dateChange = closedOn === before.closed_on ? {} : { closed_on: { from: before.closed_on, to: closedOn } }
  return [{ type: 'CaseMoved', data: { from: state.placement, to: placed.to, ...statusChange, ...dateChange, kanban_order: kanbanOrder, case: summaryOf({ ...before, status }), by: command.actor.profileId, at: command.at } }]
}
