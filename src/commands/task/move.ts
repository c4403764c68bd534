import { ValidationError } from '../../errors.ts'
import type { Actor } from '../caller.ts'
import type { PipelineFacts } from '../pipeline/pipeline.ts'
import type { Stage, StageKind } from '../pipeline/stage-rules.ts'
import { summaryOf } from './fields.ts'
import type { TaskFields, TaskStatus, TaskSummary } from './fields.ts'

/**
 * A task's place on the task board (the original's /api/tasks/kanban/ and /move/). Two boards, as
 * the original: by status (a task with no stage sits in its status's column) and by pipeline (a
 * stage of a task pipeline, kinds.ts). Entering a stage sets the status the stage stands for
 * (`statusOfStage`), as the original's `maps_to_status` of its seeded stages does; a status named
 * in the move wins over it. A task enters a stage only here, decided against the pipeline folded from
 * its stream and appended guarded by it, so a stage being removed (locked) can never gain a task.
 */
export type TaskPlacement = { pipeline_id: string; stage: string; stage_id: string; stage_kind: StageKind }

/** `to` null: on the status board. `status` when the move changed it. `task`: the task after the move. */
export type TaskMoved = { type: 'TaskMoved'; data: { from: TaskPlacement | null; to: TaskPlacement | null; status?: { from: TaskStatus; to: TaskStatus }; kanban_order: number; task: TaskSummary; by: string | null; at: string } }

/**
 * `stage`: a stage id with its pipeline's facts (the pipeline holding it, looked up by the use case),
 * null to take the task off any pipeline, undefined to stay. `kanbanOrder` was placed by the use case
 * from the column's cards (null: keep the current one).
 */
/** What a move needs of the task's folded state. */
export type Placed = { placement: TaskPlacement | null; kanbanOrder: number; fields: TaskFields }

export type MoveTask = { type: 'MoveTask'; orgId: string; actor: Actor; at: string; stage?: { id: string; pipeline: PipelineFacts } | null; status?: TaskStatus; kanbanOrder: number | null }

/**
 * The status a stage stands for: done (won or lost) is Completed; the pipeline's first stage is
 * New; any other open stage is In Progress. For the seeded task pipeline this is the original's
 * mapping (To Do New; In Progress and Review In Progress; Done Completed).
 */
export function statusOfStage(stages: readonly Pick<Stage, 'id'>[], stage: Pick<Stage, 'id' | 'kind'>): TaskStatus {
  if (stage.kind !== 'open') return 'Completed'
  return stages[0]?.id === stage.id ? 'New' : 'In Progress'
}

function placementIn(command: MoveTask, state: Placed): { to: TaskPlacement | null; status: TaskStatus } {
  const { stage: target, orgId } = command
  if (target === undefined) return { to: state.placement, status: state.fields.status }
  if (target === null) return { to: null, status: state.fields.status }
  const pipeline = target.pipeline.state
  if (!pipeline.exists || pipeline.orgId !== orgId || pipeline.deleted) throw new ValidationError({ stage_id: ['Expected a stage of a task pipeline of this organization.'] })
  const stage = pipeline.stages.find((s) => s.id === target.id)
  if (!stage) throw new ValidationError({ stage_id: ['Expected a stage of a task pipeline of this organization.'] })
  const entering = stage.id !== state.placement?.stage_id
  if (entering && pipeline.locked) throw new ValidationError({ stage_id: ['The pipeline is being deleted.'] })
  if (entering && pipeline.lockedStageIds.includes(stage.id)) throw new ValidationError({ stage_id: [`The stage ${stage.label} is being removed or changed; try again.`] })
  const to = { pipeline_id: target.pipeline.id, stage: stage.code, stage_id: stage.id, stage_kind: stage.kind }
  return { to, status: entering ? statusOfStage(pipeline.stages, stage) : state.fields.status }
}

/** The move's event, or none when the card already sits there; visibility and access were checked by the task's decider. */
export function decideTaskMove(command: MoveTask, state: Placed): TaskMoved[] {
  const placed = placementIn(command, state)
  const to = placed.to
  const status = command.status ?? placed.status
  const kanbanOrder = command.kanbanOrder ?? state.kanbanOrder
  const samePlace = (to?.stage_id ?? null) === (state.placement?.stage_id ?? null)
  if (samePlace && status === state.fields.status && kanbanOrder === state.kanbanOrder) return []
  const statusChange = status === state.fields.status ? {} : { status: { from: state.fields.status, to: status } }
  return [{ type: 'TaskMoved', data: { from: state.placement, to, ...statusChange, kanban_order: kanbanOrder, task: summaryOf({ ...state.fields, status }), by: command.actor.profileId, at: command.at } }]
}
