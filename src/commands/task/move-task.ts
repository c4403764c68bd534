import type { Deps } from '../../deps.ts'
import { ValidationError } from '../../errors.ts'
import type { Position } from '../../eventstore/event-store.ts'
import { cardIn, neighbourOrderIn } from '../../projections/kernel/record-board.ts'
import type { BoardColumn, BoardSource } from '../../projections/kernel/record-board.ts'
import { taskPipelineModel } from '../../projections/pipeline/pipelines.ts'
import { TASK_BOARD, taskStageColumn, taskStatusColumn } from '../../projections/task/tasks.ts'
import type { Caller } from '../caller.ts'
import { actorOfCaller } from '../caller.ts'
import { commandSession } from '../command-session.ts'
import type { CommandSession } from '../command-session.ts'
import { placeBetween } from '../opportunity/placement.ts'
import { taskPipelines } from '../pipeline/kinds.ts'
import { withPipelineOf } from '../pipeline/default-pipeline.ts'
import type { TaskStatus } from './fields.ts'
import type { MoveTask } from './move.ts'
import { taskDecider, taskStream } from './task.ts'
import { visibleTask } from './write-task.ts'

/**
 * A card move on the task board (the original's PATCH /api/tasks/{id}/move/): `stageId` a stage of
 * a task pipeline (null: off any pipeline), `status` a status-board column, or both. The card's order
 * in its column, as on the deal and lead boards: `kanbanOrder` as given, else midway next to
 * `aboveId` (the card above) or `belowId`, else the column's end when it enters the column.
 */
export type TaskMove = { stageId?: string | null; status?: TaskStatus } & CardPlacement

export type Column = { expression: BoardColumn; key: string }
/** Where a move places a card: its order as given, or next to a neighbour (the body fields naming them, for errors). */
export type CardPlacement = { kanbanOrder?: number; aboveId?: string | null; belowId?: string | null }

/**
 * The card's new order in `column` of a board (tasks', cases'): as given; midway next to the card
 * above or below it (a card of that column, else 400 on its field); else unchanged (null) when it
 * stays in its column, the column's end when it enters one.
 */
export async function columnPlacement(db: Deps['db'], board: BoardSource, orgId: string, cardId: string, column: Column, move: CardPlacement, fields: { above: string; below: string }): Promise<number | null> {
  if (move.kanbanOrder !== undefined) return move.kanbanOrder
  const neighbour = async (field: string, id: string) => {
    const card = await cardIn(db, board, orgId, column.expression, id)
    if (!card || card.column_key !== column.key) throw new ValidationError({ [field]: ['Expected a card of the target column.'] })
    return card.kanban_order
  }
  if (move.aboveId) {
    const above = await neighbour(fields.above, move.aboveId)
    return placeBetween(above, await neighbourOrderIn(db, board, orgId, column, above, 'next', cardId))
  }
  if (move.belowId) {
    const below = await neighbour(fields.below, move.belowId)
    return placeBetween(await neighbourOrderIn(db, board, orgId, column, below, 'previous', cardId), below)
  }
  const current = await cardIn(db, board, orgId, column.expression, cardId)
  return current?.column_key === column.key ? null : placeBetween(await neighbourOrderIn(db, board, orgId, column, null, 'previous', cardId), null)
}

/** Moves a task the caller may change; the stage's pipeline is folded from its stream and the append guarded by it. */
export async function moveTask(deps: Pick<Deps, 'db' | 'store' | 'clock'>, caller: Caller, id: string, move: TaskMove, session: CommandSession = commandSession(deps.store, caller)): Promise<{ position: Position | null }> {
  const { db, store, clock } = deps
  const { orgId } = caller
  const current = await visibleTask(db, caller, id)
  if (move.stageId === undefined && move.status === undefined) throw new ValidationError({ stage_id: ['Either stage_id or status must be provided.'] })
  const stage = move.stageId ? await taskPipelineModel.stageOf(db, orgId, move.stageId) : undefined
  if (move.stageId && !stage) throw new ValidationError({ stage_id: ['Expected a stage of a task pipeline of this organization.'] })
  // The column the card lands in: its stage on a pipeline board, else its status on the status board.
  const column: Column = stage ? { expression: taskStageColumn, key: stage.id } : { expression: taskStatusColumn, key: move.status ?? current.status }
  const kanbanOrder = await columnPlacement(db, TASK_BOARD, orgId, id, column, move, { above: 'above_task_id', below: 'below_task_id' })
  const command = (target: MoveTask['stage']): MoveTask => ({ type: 'MoveTask', orgId, actor: actorOfCaller(caller), at: clock().toISOString(), stage: target, status: move.status, kanbanOrder })
  if (stage) await session.run(taskDecider, taskStream(id), () => withPipelineOf(store, taskPipelines, stage.pipeline_id, (pipeline) => command({ id: stage.id, pipeline })))
  else await session.run(taskDecider, taskStream(id), command(move.stageId === null ? null : undefined))
  return { position: session.position() }
}
