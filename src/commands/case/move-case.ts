import type { Deps } from '../../deps.ts'
import { ValidationError } from '../../errors.ts'
import type { Position } from '../../eventstore/event-store.ts'
import { approvalGateOf } from '../../projections/case-approval/queries.ts'
import { CASE_BOARD, caseStageColumn, caseStatusColumn } from '../../projections/case/queries.ts'
import { casePipelineModel } from '../../projections/pipeline/pipelines.ts'
import type { Caller } from '../caller.ts'
import { actorOfCaller } from '../caller.ts'
import { commandSession } from '../command-session.ts'
import type { CommandSession } from '../command-session.ts'
import { withPipelineOf } from '../pipeline/default-pipeline.ts'
import { casePipelines } from '../pipeline/kinds.ts'
import { columnPlacement } from '../task/move-task.ts'
import type { CardPlacement, Column } from '../task/move-task.ts'
import { caseDecider, caseStream } from './case.ts'
import type { CaseStatus } from './fields.ts'
import type { MoveCase } from './move.ts'
import { visibleCase } from './write-case.ts'

/**
 * A card move on the case board (the original's PATCH /api/cases/{id}/move/): `stageId` a stage of a
 * case pipeline (null: off any pipeline), `status` a status-board column, or both. The card's order
 * in its column as on the task board (tasks' `columnPlacement`).
 */
export type CaseMove = { stageId?: string | null; status?: CaseStatus } & CardPlacement

/** Moves a case the caller may change; the stage's pipeline is folded from its stream and the append guarded by it. */
export async function moveCase(deps: Pick<Deps, 'db' | 'store' | 'clock'>, caller: Caller, id: string, move: CaseMove, session: CommandSession = commandSession(deps.store, caller)): Promise<{ position: Position | null }> {
  const { db, store, clock } = deps
  const { orgId } = caller
  const current = await visibleCase(db, caller, id)
  if (move.stageId === undefined && move.status === undefined) throw new ValidationError({ stage_id: ['Either stage_id or status must be provided.'] })
  const stage = move.stageId ? await casePipelineModel.stageOf(db, orgId, move.stageId) : undefined
  if (move.stageId && !stage) throw new ValidationError({ stage_id: ['Expected a stage of a case pipeline of this organization.'] })
  // The column the card lands in: its stage on a pipeline board, else its status on the status board.
  const column: Column = stage ? { expression: caseStageColumn, key: stage.id } : { expression: caseStatusColumn, key: move.status ?? current.status }
  const kanbanOrder = await columnPlacement(db, CASE_BOARD, orgId, id, column, move, { above: 'above_case_id', below: 'below_case_id' })
  const now = clock()
  // A stage may stand for Closed: the approval gate's facts go with every move.
  const approvalGate = await approvalGateOf(db, orgId, id)
  const command = (target: MoveCase['stage']) => ({ type: 'MoveCase' as const, orgId, actor: actorOfCaller(caller), at: now.toISOString(), day: now.toISOString().slice(0, 10), stage: target, status: move.status, kanbanOrder, approvalGate })
  if (stage) await session.run(caseDecider, caseStream(id), () => withPipelineOf(store, casePipelines, stage.pipeline_id, (pipeline) => command({ id: stage.id, pipeline })))
  else await session.run(caseDecider, caseStream(id), command(move.stageId === null ? null : undefined))
  return { position: session.position() }
}
