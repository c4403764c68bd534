import { randomUUID } from 'node:crypto'
import type { Deps } from '../../deps.ts'
import { ValidationError, orNotFound } from '../../errors.ts'
import type { Position } from '../../eventstore/event-store.ts'
import { boardOfCard, boardOfColumn } from '../../projections/board/queries.ts'
import { relationErrors } from '../../projections/record/relations.ts'
import type { Caller } from '../caller.ts'
import { commandSession } from '../command-session.ts'
import { DEFAULT_COLUMNS, boardDecider, boardStream } from './board.ts'
import type { BoardCommand, CardContent, CardPlacementInput, ColumnData, MemberData } from './board.ts'

/**
 * The board use cases. Each runs one command on the board's stream; the decider checks the
 * caller's role against the board as stored. Column and card ids are looked up to find their board
 * (404 for another organization's), and assignees and members must be active profiles of the
 * caller's organization.
 */
type BoardDeps = Pick<Deps, 'db' | 'store' | 'clock'>
type Written = { position: Position | null }
type Base = Pick<BoardCommand, 'orgId' | 'actor' | 'at'>

const baseOf = (deps: BoardDeps, caller: Caller): Base => ({ orgId: caller.orgId, actor: { profileId: caller.profileId, isAdmin: caller.isAdmin }, at: deps.clock().toISOString() })

async function run(deps: BoardDeps, caller: Caller, boardId: string, command: BoardCommand, expectNew = false): Promise<Written> {
  const session = commandSession(deps.store, caller)
  await session.run(boardDecider, boardStream(boardId), command, { expectNew })
  return { position: session.position() }
}

/** Profiles named anew must be active members of the organization; those a card already holds may stay after a deactivation. */
async function checkProfiles(deps: BoardDeps, caller: Caller, field: string, ids: readonly string[] | undefined, current: readonly string[] = []): Promise<void> {
  const errors = ids && (await relationErrors(deps.db, caller.orgId, 'profiles', ids, current))
  if (errors) throw new ValidationError({ [field]: errors })
}

export type NewBoard = { name: string; description: string | null; isArchived: boolean; defaultColumns: boolean }

/** A board owned by the caller, with the three default columns unless asked not to. */
export async function createBoard(deps: BoardDeps, caller: Caller, board: NewBoard): Promise<Written & { id: string }> {
  const id = randomUUID()
  const columns: ColumnData[] = board.defaultColumns ? DEFAULT_COLUMNS.map((c) => ({ column_id: randomUUID(), ...c, limit: null })) : []
  const written = await run(deps, caller, id, { type: 'CreateBoard', ...baseOf(deps, caller), boardId: id, name: board.name, description: board.description, isArchived: board.isArchived, columns }, true)
  return { id, ...written }
}

export type BoardChanges = { name?: string; description?: string | null; isArchived?: boolean; members?: MemberData[] }

export async function updateBoard(deps: BoardDeps, caller: Caller, boardId: string, changes: BoardChanges): Promise<Written> {
  await checkProfiles(deps, caller, 'members', changes.members?.map((m) => m.profile_id))
  return run(deps, caller, boardId, { type: 'UpdateBoard', ...baseOf(deps, caller), ...changes })
}

export const deleteBoard = (deps: BoardDeps, caller: Caller, boardId: string): Promise<Written> => run(deps, caller, boardId, { type: 'DeleteBoard', ...baseOf(deps, caller) })

export type NewColumn = Omit<ColumnData, 'column_id' | 'order'> & { order: number | null }

export async function addColumn(deps: BoardDeps, caller: Caller, boardId: string, column: NewColumn): Promise<Written & { columnId: string }> {
  const columnId = randomUUID()
  return { columnId, ...(await run(deps, caller, boardId, { type: 'AddColumn', ...baseOf(deps, caller), column: { column_id: columnId, ...column } })) }
}

/** A card at `index` of the column (null: at its end). */
export async function addCard(deps: BoardDeps, caller: Caller, columnId: string, card: { content: CardContent; index: number | null }): Promise<Written & { boardId: string; cardId: string }> {
  const { board_id: boardId } = await orNotFound(boardOfColumn(deps.db, caller.orgId, columnId))
  await checkProfiles(deps, caller, 'assigned_to_ids', card.content.assigned_to)
  const cardId = randomUUID()
  const written = await run(deps, caller, boardId, { type: 'AddCard', ...baseOf(deps, caller), cardId, columnId, index: card.index, content: card.content })
  return { boardId, cardId, ...written }
}

export type CardEdit = { placement: CardPlacementInput; changes: Partial<CardContent> & { completed?: boolean } }

/** Edits a card and/or moves it (to `placement.columnId`, a column of the same board, at `placement.index`). */
export async function changeCard(deps: BoardDeps, caller: Caller, cardId: string, edit: CardEdit): Promise<Written & { boardId: string }> {
  const { board_id: boardId, assigned_to } = await orNotFound(boardOfCard(deps.db, caller.orgId, cardId))
  await checkProfiles(deps, caller, 'assigned_to_ids', edit.changes.assigned_to, assigned_to)
  return { boardId, ...(await run(deps, caller, boardId, { type: 'ChangeCard', ...baseOf(deps, caller), cardId, ...edit })) }
}

export async function removeCard(deps: BoardDeps, caller: Caller, cardId: string): Promise<Written> {
  const { board_id: boardId } = await orNotFound(boardOfCard(deps.db, caller.orgId, cardId))
  return run(deps, caller, boardId, { type: 'RemoveCard', ...baseOf(deps, caller), cardId })
}
