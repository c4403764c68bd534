import { ForbiddenError, NotFoundError, ValidationError } from '../../errors.ts'
import type { Decider } from '../decider.ts'
import { streamCategory } from '../streams.ts'
import { cardsOfColumn, placeCard, renumberedRanks } from './card-placement.ts'

/**
 * A kanban board (issue 19; the original's Board, BoardColumn, BoardTask and BoardMember): its
 * columns and cards live in the board's one stream, so a card moved between columns is one append
 * and its place is decided against the whole board as stored. A card's place in its column is a
 * rank (card-placement.ts); what clients see is its 0-based index.
 *
 * Who may do what (the original's roles; an organization admin, and the organization API key, may
 * do everything an owner may): any board member reads the board and adds, edits, moves and removes
 * cards; the owner and board admins also edit the board, its members and add columns; deleting the
 * board is the owner's. To anyone else the board does not exist.
 */

export const BOARD_ROLES = ['owner', 'admin', 'member'] as const
export type BoardRole = (typeof BOARD_ROLES)[number]
export const CARD_PRIORITIES = ['low', 'medium', 'high', 'urgent'] as const
export type CardPriority = (typeof CARD_PRIORITIES)[number]

export type ColumnData = { column_id: string; name: string; order: number; color: string; limit: number | null }
export type MemberData = { profile_id: string; role: Exclude<BoardRole, 'owner'> }
export type CardContent = { title: string; description: string | null; priority: CardPriority; due_date: string | null; assigned_to: string[] }
export type CardChanges = Partial<CardContent & { completed_at: string | null }>

// Events: the storage contract.
export type BoardEvent =
  | { type: 'BoardCreated'; data: { board_id: string; org_id: string; name: string; description: string | null; is_archived: boolean; owner_id: string | null; columns: ColumnData[]; at: string } }
  | { type: 'BoardUpdated'; data: { name?: string; description?: string | null; is_archived?: boolean; at: string } }
  | { type: 'BoardMembersChanged'; data: { members: MemberData[]; at: string } }
  | { type: 'BoardDeleted'; data: { at: string } }
  | { type: 'BoardColumnAdded'; data: { column: ColumnData; at: string } }
  | { type: 'BoardCardAdded'; data: { card_id: string; column_id: string; rank: number; content: CardContent; created_by: string | null; at: string } }
  | { type: 'BoardCardChanged'; data: { card_id: string; changes: CardChanges; at: string } }
  | { type: 'BoardCardMoved'; data: { card_id: string; column_id: string; rank: number; at: string } }
  | { type: 'BoardCardsRanked'; data: { column_id: string; card_ids: string[]; at: string } }
  | { type: 'BoardCardRemoved'; data: { card_id: string; at: string } }

// Fold.
export type Card = CardContent & { id: string; columnId: string; rank: number; completedAt: string | null }
export type BoardState = {
  exists: boolean
  deleted: boolean
  orgId: string | null
  ownerId: string | null
  name: string
  description: string | null
  archived: boolean
  members: Record<string, MemberData['role']>
  columns: ColumnData[]
  cards: Record<string, Card>
}

export const initialBoardState = (): BoardState => ({ exists: false, deleted: false, orgId: null, ownerId: null, name: '', description: null, archived: false, members: {}, columns: [], cards: {} })

export function evolveBoard(state: BoardState, event: BoardEvent): BoardState {
  switch (event.type) {
    case 'BoardCreated': {
      const { org_id, owner_id, name, description, is_archived, columns } = event.data
      return { ...state, exists: true, orgId: org_id, ownerId: owner_id, name, description, archived: is_archived, columns }
    }
    case 'BoardUpdated':
      return { ...state, name: event.data.name ?? state.name, description: event.data.description === undefined ? state.description : event.data.description, archived: event.data.is_archived ?? state.archived }
    case 'BoardMembersChanged':
      return { ...state, members: Object.fromEntries(event.data.members.map((m) => [m.profile_id, m.role])) }
    case 'BoardDeleted':
      return { ...state, deleted: true }
    case 'BoardColumnAdded':
      return { ...state, columns: [...state.columns, event.data.column] }
    case 'BoardCardAdded': {
      const { card_id, column_id, rank, content } = event.data
      return withCard(state, { ...content, id: card_id, columnId: column_id, rank, completedAt: null })
    }
    case 'BoardCardChanged': {
      const { completed_at, ...content } = event.data.changes
      const card = state.cards[event.data.card_id]!
      return withCard(state, { ...card, ...content, completedAt: completed_at === undefined ? card.completedAt : completed_at })
    }
    case 'BoardCardMoved':
      return withCard(state, { ...state.cards[event.data.card_id]!, columnId: event.data.column_id, rank: event.data.rank })
    case 'BoardCardsRanked': {
      const ranks = renumberedRanks(event.data.card_ids)
      return { ...state, cards: Object.fromEntries(Object.entries(state.cards).map(([id, card]) => [id, ranks.has(id) ? { ...card, rank: ranks.get(id)! } : card])) }
    }
    case 'BoardCardRemoved': {
      const { [event.data.card_id]: _removed, ...cards } = state.cards
      return { ...state, cards }
    }
  }
}

const withCard = (state: BoardState, card: Card): BoardState => ({ ...state, cards: { ...state.cards, [card.id]: card } })

/** Who is acting: their profile (null for the organization API key) and whether they administer the organization. */
export type BoardActor = { profileId: string | null; isAdmin: boolean }

/** The actor's role on the board: the owner's, a member's, an organization admin's (as an owner), or none. */
export function roleOn(state: BoardState, actor: BoardActor): BoardRole | null {
  if (actor.profileId !== null && actor.profileId === state.ownerId) return 'owner'
  const membership = actor.profileId === null ? undefined : state.members[actor.profileId]
  if (membership) return membership
  return actor.isAdmin ? 'owner' : null
}

// Decisions. Time, ids, the actor and looked-up facts arrive in the command.
type Base = { orgId: string; actor: BoardActor; at: string }
export type CardPlacementInput = { columnId?: string; index?: number }
export type BoardCommand =
  | (Base & { type: 'CreateBoard'; boardId: string; name: string; description: string | null; isArchived: boolean; columns: ColumnData[] })
  | (Base & { type: 'UpdateBoard'; name?: string; description?: string | null; isArchived?: boolean; members?: MemberData[] })
  | (Base & { type: 'DeleteBoard' })
  | (Base & { type: 'AddColumn'; column: Omit<ColumnData, 'order'> & { order: number | null } })
  | (Base & { type: 'AddCard'; cardId: string; columnId: string; index: number | null; content: CardContent })
  | (Base & { type: 'ChangeCard'; cardId: string; placement: CardPlacementInput; changes: Partial<CardContent> & { completed?: boolean } })
  | (Base & { type: 'RemoveCard'; cardId: string })

/** The board as the actor may see it, else 404; `needs` a role at least this strong, else 403. */
function allowed(state: BoardState, command: Base, needs: 'member' | 'manager' | 'owner'): void {
  if (!state.exists || state.deleted || state.orgId !== command.orgId) throw new NotFoundError()
  const role = roleOn(state, command.actor)
  if (role === null) throw new NotFoundError()
  if (needs === 'manager' && role === 'member') throw new ForbiddenError('Only the board owner or a board admin may do this')
  if (needs === 'owner' && role !== 'owner') throw new ForbiddenError('Only the board owner can delete the board')
}

function existingCard(state: BoardState, cardId: string): Card {
  const card = state.cards[cardId]
  if (!card) throw new NotFoundError()
  return card
}

function columnOfBoard(state: BoardState, columnId: string, field: string): ColumnData {
  const column = state.columns.find((c) => c.column_id === columnId)
  if (!column) throw new ValidationError({ [field]: ['Invalid column for this board.'] })
  return column
}

export function decideBoard(command: BoardCommand, state: BoardState): BoardEvent[] {
  const at = command.at
  switch (command.type) {
    case 'CreateBoard':
      if (state.exists) return []
      return [{ type: 'BoardCreated', data: { board_id: command.boardId, org_id: command.orgId, name: command.name, description: command.description, is_archived: command.isArchived, owner_id: command.actor.profileId, columns: command.columns, at } }]
    case 'UpdateBoard':
      allowed(state, command, 'manager')
      return [...boardChanges(state, command), ...memberChanges(state, command)]
    case 'DeleteBoard':
      if (state.deleted && state.orgId === command.orgId) return []
      allowed(state, command, 'owner')
      return [{ type: 'BoardDeleted', data: { at } }]
    case 'AddColumn': {
      allowed(state, command, 'manager')
      const { column } = command
      if (state.columns.some((c) => c.column_id === column.column_id)) return []
      if (state.columns.some((c) => c.name === column.name)) throw new ValidationError({ name: ['A column with this name already exists on this board.'] })
      // No order given: after the last column (the original's 0 would put it first).
      const order = column.order ?? Math.max(0, ...state.columns.map((c) => c.order + 1))
      return [{ type: 'BoardColumnAdded', data: { column: { ...column, order }, at } }]
    }
    case 'AddCard': {
      allowed(state, command, 'member')
      if (state.cards[command.cardId]) return []
      columnOfBoard(state, command.columnId, 'column')
      const place = placeCard(cardsOfColumn(state, command.columnId), command.index, command.cardId)
      return [{ type: 'BoardCardAdded', data: { card_id: command.cardId, column_id: command.columnId, rank: place.rank, content: command.content, created_by: command.actor.profileId, at } }, ...ranked(command.columnId, place.renumber, at)]
    }
    case 'ChangeCard': {
      allowed(state, command, 'member')
      const card = existingCard(state, command.cardId)
      return [...cardChanges(card, command.changes, at), ...moves(state, card, command.placement, at)]
    }
    case 'RemoveCard': {
      allowed(state, command, 'member')
      return state.cards[command.cardId] ? [{ type: 'BoardCardRemoved', data: { card_id: command.cardId, at } }] : []
    }
  }
}

function boardChanges(state: BoardState, command: Extract<BoardCommand, { type: 'UpdateBoard' }>): BoardEvent[] {
  const changes: Omit<Extract<BoardEvent, { type: 'BoardUpdated' }>['data'], 'at'> = {}
  if (command.name !== undefined && command.name !== state.name) changes.name = command.name
  if (command.description !== undefined && command.description !== state.description) changes.description = command.description
  if (command.isArchived !== undefined && command.isArchived !== state.archived) changes.is_archived = command.isArchived
  return Object.keys(changes).length ? [{ type: 'BoardUpdated', data: { ...changes, at: command.at } }] : []
}

/** The whole member set (the owner is always the owner, never listed), sorted so the same set is the same event. */
function memberChanges(state: BoardState, command: Extract<BoardCommand, { type: 'UpdateBoard' }>): BoardEvent[] {
  if (command.members === undefined) return []
  const members = command.members.filter((m) => m.profile_id !== state.ownerId).sort((a, b) => a.profile_id.localeCompare(b.profile_id))
  const current = Object.entries(state.members).map(([profile_id, role]) => ({ profile_id, role })).sort((a, b) => a.profile_id.localeCompare(b.profile_id))
  return JSON.stringify(members) === JSON.stringify(current) ? [] : [{ type: 'BoardMembersChanged', data: { members, at: command.at } }]
}

function cardChanges(card: Card, requested: Extract<BoardCommand, { type: 'ChangeCard' }>['changes'], at: string): BoardEvent[] {
  const { completed, ...content } = requested
  const changes: CardChanges = {}
  for (const key of ['title', 'description', 'priority', 'due_date'] as const) {
    if (content[key] !== undefined && content[key] !== card[key]) Object.assign(changes, { [key]: content[key] })
  }
  if (content.assigned_to !== undefined && [...content.assigned_to].sort().join() !== [...card.assigned_to].sort().join()) changes.assigned_to = [...content.assigned_to].sort()
  if (completed !== undefined && completed !== (card.completedAt !== null)) changes.completed_at = completed ? at : null
  return Object.keys(changes).length ? [{ type: 'BoardCardChanged', data: { card_id: card.id, changes, at } }] : []
}

/**
 * A card dropped at `index` of `columnId` (the original's PUT with `column` and `order`): another
 * column keeps the card's index unless one is given; the same place is no move.
 */
function moves(state: BoardState, card: Card, placement: CardPlacementInput, at: string): BoardEvent[] {
  const columnId = placement.columnId ?? card.columnId
  if (columnId !== card.columnId) columnOfBoard(state, columnId, 'column')
  else if (placement.index === undefined) return []
  const currentIndex = cardsOfColumn(state, card.columnId).findIndex((c) => c.id === card.id)
  const others = cardsOfColumn(state, columnId).filter((c) => c.id !== card.id)
  const index = Math.min(placement.index ?? currentIndex, others.length)
  if (columnId === card.columnId && index === currentIndex) return []
  const place = placeCard(others, index, card.id)
  return [{ type: 'BoardCardMoved', data: { card_id: card.id, column_id: columnId, rank: place.rank, at } }, ...ranked(columnId, place.renumber, at)]
}

const ranked = (columnId: string, renumber: string[] | null, at: string): BoardEvent[] => (renumber ? [{ type: 'BoardCardsRanked', data: { column_id: columnId, card_ids: renumber, at } }] : [])

export const boardDecider: Decider<BoardCommand, BoardState, BoardEvent> = { initialState: initialBoardState, evolve: evolveBoard, decide: decideBoard }

export const boardStreams = streamCategory('board')
export const boardStream = boardStreams.stream

/** The columns a new board starts with unless asked not to (the original's defaults). */
export const DEFAULT_COLUMNS = [
  { name: 'To Do', order: 1, color: '#EF4444' },
  { name: 'In Progress', order: 2, color: '#F59E0B' },
  { name: 'Done', order: 3, color: '#10B981' },
] as const
export const DEFAULT_COLUMN_COLOR = '#6B7280'
