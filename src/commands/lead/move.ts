import { ConflictError, ValidationError } from '../../errors.ts'
import type { Actor } from '../caller.ts'
import type { PipelineFacts } from '../pipeline/pipeline.ts'
import type { Stage, StageKind } from '../pipeline/stage-rules.ts'

/**
 * A lead's place on the lead board (issue #7, following the deal board's §3.1 and §4.7): a stage of
 * a lead pipeline, and an order within its column. A lead is created unplaced; its first move places
 * it (the route picks the default lead pipeline unless the body names one). Leads enter a stage only
 * here, decided against the lead pipeline folded from its stream and appended guarded by it, so a
 * stage being removed or changed (locked, see pipeline.ts `LockStage`) can never gain a lead.
 * A move never changes the lead's status: moving into a won stage does not convert it (conversion
 * stays PATCH `{"status": "converted"}`, which in turn leaves the card where it is).
 */
export type LeadPlacement = { pipeline_id: string; stage: string; stage_id: string; stage_kind: StageKind }

/** `from` null: the lead's first placement. `kanban_order` is the card's position in its (new) column. */
export type LeadMoved = { type: 'LeadMoved'; data: { from: LeadPlacement | null; to: LeadPlacement; kanban_order: number; by: string | null; at: string } }

/**
 * A board move: `pipeline` is the target lead pipeline folded from its stream; `pipelineNamed` says
 * whether the client named it (else it is the lead's own, or the default for an unplaced lead);
 * `kanbanOrder` was placed by the route from the column's cards (null: keep, or the column's end).
 */
export type MoveLead = { type: 'MoveLead'; orgId: string; actor: Actor; at: string; pipeline: PipelineFacts; pipelineNamed: boolean; columnId: string; kanbanOrder: number | null }

/** What a move needs of the lead's folded state. */
export type Placed = { placement: LeadPlacement | null; kanbanOrder: number }

const placementOf = (pipelineId: string, stage: Stage): LeadPlacement => ({ pipeline_id: pipelineId, stage: stage.code, stage_id: stage.id, stage_kind: stage.kind })

/** The move's event, or none when the card already sits there; access was checked by the caller. */
export function decideLeadMove(command: MoveLead, current: Placed): LeadMoved[] {
  const { pipeline: facts, orgId } = command
  if (!command.pipelineNamed && current.placement && facts.id !== current.placement.pipeline_id) throw new ConflictError('The lead changed pipeline concurrently; retry the request')
  const pipeline = facts.state
  if (!pipeline.exists || pipeline.orgId !== orgId || pipeline.deleted) throw new ValidationError({ pipeline: ['Expected a lead pipeline of this organization.'] })
  const stage = pipeline.stages.find((s) => s.code === command.columnId)
  if (!stage) throw new ValidationError({ column_id: [`Expected a stage code of the lead's pipeline: ${pipeline.stages.map((s) => s.code).join(', ')}.`] })
  const entering = stage.id !== current.placement?.stage_id
  if (entering && pipeline.locked) throw new ValidationError({ pipeline: ['The pipeline is being deleted.'] })
  if (entering && pipeline.lockedStageIds.includes(stage.id)) throw new ValidationError({ column_id: [`The stage ${stage.code} is being removed or changed; try again.`] })
  const kanbanOrder = command.kanbanOrder ?? current.kanbanOrder
  if (!entering && kanbanOrder === current.kanbanOrder) return []
  return [{ type: 'LeadMoved', data: { from: current.placement, to: placementOf(facts.id, stage), kanban_order: kanbanOrder, by: command.actor.profileId, at: command.at } }]
}
