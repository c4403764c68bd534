import { z } from 'zod'
import { BOARD_ROLES, CARD_PRIORITIES } from '../commands/board/board.ts'
import type { BoardEvent } from '../commands/board/board.ts'
import { At, By, Id, Ids, at, eventsOf, noPersonalData } from '../events/event-schemas.ts'
import { boardsProjector } from '../projections/board/boards.ts'
import type { ModuleManifest } from './manifest.ts'

const BoardColumn = z.strictObject({ column_id: Id, name: z.string(), order: z.number().int(), color: z.string(), limit: z.number().int().nullable() })
const BoardCardContent = z.strictObject({ title: z.string(), description: z.string().nullable(), priority: z.enum(CARD_PRIORITIES), due_date: At.nullable(), assigned_to: Ids })

/** Boards: free kanban boards with columns and cards. */
export const boardModule: ModuleManifest = {
  name: 'board',
  events: noPersonalData(eventsOf<BoardEvent>()({
    // board-<id>: the board, its columns and its cards
    BoardCreated: { stream: 'board', description: 'A kanban board was created with its first columns; its owner is the creator.', data: z.strictObject({ board_id: Id, org_id: Id, name: z.string(), description: z.string().nullable(), is_archived: z.boolean(), owner_id: By, columns: z.array(BoardColumn), ...at }) },
    BoardUpdated: { stream: 'board', description: 'A board was renamed, redescribed, archived or unarchived: only the changed values.', data: z.strictObject({ name: z.string().optional(), description: z.string().nullable().optional(), is_archived: z.boolean().optional(), ...at }) },
    BoardMembersChanged: { stream: 'board', description: "A board's members changed (the whole new set besides the owner, sorted by profile).", data: z.strictObject({ members: z.array(z.strictObject({ profile_id: Id, role: z.enum(BOARD_ROLES).exclude(['owner']) })), ...at }) },
    BoardDeleted: { stream: 'board', description: 'A board was deleted with its columns and cards.', data: z.strictObject(at) },
    BoardColumnAdded: { stream: 'board', description: 'A column was added to a board.', data: z.strictObject({ column: BoardColumn, ...at }) },
    BoardCardAdded: { stream: 'board', description: 'A card was added to a column at a rank (cards sort by rank).', data: z.strictObject({ card_id: Id, column_id: Id, rank: z.number(), content: BoardCardContent, created_by: By, ...at }) },
    BoardCardChanged: { stream: 'board', description: "A card's content, assignees or completion changed: only the changed values.", data: z.strictObject({ card_id: Id, changes: BoardCardContent.extend({ completed_at: At.nullable() }).partial(), ...at }) },
    BoardCardMoved: { stream: 'board', description: 'A card moved within its column or to another column of the board, to a new rank.', data: z.strictObject({ card_id: Id, column_id: Id, rank: z.number(), ...at }) },
    BoardCardsRanked: { stream: 'board', description: "A column's cards were renumbered, in the order listed, a step apart (when a drop found no room between two ranks).", data: z.strictObject({ column_id: Id, card_ids: Ids, ...at }) },
    BoardCardRemoved: { stream: 'board', description: 'A card was deleted from its board.', data: z.strictObject({ card_id: Id, ...at }) },
  })),
  routes: async (deps) => {
    const { boardRoutes } = await import('../http/boards/boards.ts')
    return [boardRoutes(deps)]
  },
  projectors: [boardsProjector],
  idKinds: [
    [/^\/api\/boards\/columns\/\{column_pk\}/, 'boardColumn'],
    [/^\/api\/boards\/tasks\/\{id\}/, 'boardCard'],
    [/^\/api\/boards\/\{(id|board_pk)\}/, 'board'],
  ],
}
