import { sql } from 'kysely'
import { boardStreams } from '../../commands/board/board.ts'
import type { BoardEvent, CardChanges } from '../../commands/board/board.ts'
import { renumberedRanks } from '../../commands/board/card-placement.ts'
import { domainEventOf } from '../../events/versions.ts'
import type { Projector } from '../kernel/projector.ts'
import type { BoardCardRow } from './tables.ts'
import type { Db } from '../../db/database.ts'

export type { BoardCardRow, BoardColumnRow, BoardMemberRow, BoardRow, BoardTables } from './tables.ts'

export const boardsProjector: Projector = {
  name: 'boards',
  version: 1,
  eventTypes: ['BoardCreated', 'BoardUpdated', 'BoardMembersChanged', 'BoardDeleted', 'BoardColumnAdded', 'BoardCardAdded', 'BoardCardChanged', 'BoardCardMoved', 'BoardCardsRanked', 'BoardCardRemoved'],
  tables: ['boards', 'board_members', 'board_columns', 'board_cards'],
  async createTables(db) {
    const base = (table: string) => db.schema.createTable(table)
    await base('boards')
      .addColumn('id', 'uuid', (c) => c.primaryKey())
      .addColumn('org_id', 'uuid', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('description', 'text')
      .addColumn('owner_id', 'uuid')
      .addColumn('is_archived', 'boolean', (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
      .execute()
    await sql`CREATE INDEX boards_org_created ON boards (org_id, created_at DESC)`.execute(db)
    await base('board_members')
      .addColumn('board_id', 'uuid', (c) => c.notNull())
      .addColumn('profile_id', 'uuid', (c) => c.notNull())
      .addColumn('role', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('board_members_pk', ['board_id', 'profile_id'])
      .execute()
    await sql`CREATE INDEX board_members_profile ON board_members (profile_id)`.execute(db)
    await base('board_columns')
      .addColumn('id', 'uuid', (c) => c.primaryKey())
      .addColumn('board_id', 'uuid', (c) => c.notNull())
      .addColumn('org_id', 'uuid', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('order', 'integer', (c) => c.notNull())
      .addColumn('color', 'text', (c) => c.notNull())
      .addColumn('limit', 'integer')
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .execute()
    await sql`CREATE INDEX board_columns_board ON board_columns (board_id)`.execute(db)
    await base('board_cards')
      .addColumn('id', 'uuid', (c) => c.primaryKey())
      .addColumn('board_id', 'uuid', (c) => c.notNull())
      .addColumn('column_id', 'uuid', (c) => c.notNull())
      .addColumn('org_id', 'uuid', (c) => c.notNull())
      .addColumn('title', 'text', (c) => c.notNull())
      .addColumn('description', 'text')
      .addColumn('priority', 'text', (c) => c.notNull())
      .addColumn('due_date', 'timestamptz')
      .addColumn('assigned_to', sql`uuid[]`, (c) => c.notNull())
      .addColumn('completed_at', 'timestamptz')
      .addColumn('rank', 'double precision', (c) => c.notNull())
      .addColumn('created_by', 'uuid')
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
      .execute()
    await sql`CREATE INDEX board_cards_column ON board_cards (column_id, rank, id)`.execute(db)
    await sql`CREATE INDEX board_cards_board ON board_cards (board_id)`.execute(db)
  },
  // Every statement sets values (inserts skip existing rows, member sets are replaced whole), so applying an event twice changes nothing.
  async apply(db, recorded) {
    const event = domainEventOf<BoardEvent>(recorded)
    const boardId = boardStreams.idOf(recorded.streamName)
    const at = new Date(event.data.at)
    if (event.type === 'BoardCreated') return insertBoard(db, boardId, event.data)
    const board = await db.selectFrom('boards').select('org_id').where('id', '=', boardId).executeTakeFirst()
    if (!board) return // already deleted (BoardDeleted applied twice): nothing left to change
    const orgId = board.org_id
    switch (event.type) {
      case 'BoardUpdated': {
        const { name, description, is_archived } = event.data
        await db.updateTable('boards').set({ ...(name !== undefined && { name }), ...(description !== undefined && { description }), ...(is_archived !== undefined && { is_archived }), updated_at: at }).where('id', '=', boardId).execute()
        return
      }
      case 'BoardMembersChanged':
        await db.deleteFrom('board_members').where('board_id', '=', boardId).where('role', '<>', 'owner').execute()
        if (event.data.members.length) await db.insertInto('board_members').values(event.data.members.map((m) => ({ board_id: boardId, ...m }))).execute()
        await db.updateTable('boards').set({ updated_at: at }).where('id', '=', boardId).execute()
        return
      case 'BoardDeleted':
        for (const table of ['board_cards', 'board_columns', 'board_members'] as const) await db.deleteFrom(table).where('board_id', '=', boardId).execute()
        await db.deleteFrom('boards').where('id', '=', boardId).execute()
        return
      case 'BoardColumnAdded':
        return insertColumns(db, boardId, orgId, [event.data.column], at)
      case 'BoardCardAdded': {
        const { card_id, column_id, rank, content, created_by } = event.data
        const card = { id: card_id, board_id: boardId, column_id, org_id: orgId, ...content, due_date: content.due_date === null ? null : new Date(content.due_date), completed_at: null, rank, created_by, created_at: at, updated_at: at }
        await db.insertInto('board_cards').values(card).onConflict((oc) => oc.column('id').doNothing()).execute()
        return
      }
      case 'BoardCardChanged':
        await db.updateTable('board_cards').set({ ...cardColumns(event.data.changes), updated_at: at }).where('id', '=', event.data.card_id).execute()
        return
      case 'BoardCardMoved':
        await db.updateTable('board_cards').set({ column_id: event.data.column_id, rank: event.data.rank, updated_at: at }).where('id', '=', event.data.card_id).execute()
        return
      case 'BoardCardsRanked':
        for (const [id, rank] of renumberedRanks(event.data.card_ids)) await db.updateTable('board_cards').set({ rank }).where('id', '=', id).execute()
        return
      case 'BoardCardRemoved':
        await db.deleteFrom('board_cards').where('id', '=', event.data.card_id).execute()
    }
  },
}

async function insertBoard(db: Db, id: string, data: Extract<BoardEvent, { type: 'BoardCreated' }>['data']): Promise<void> {
  const at = new Date(data.at)
  await db
    .insertInto('boards')
    .values({ id, org_id: data.org_id, name: data.name, description: data.description, owner_id: data.owner_id, is_archived: data.is_archived, created_at: at, updated_at: at })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute()
  if (data.owner_id) await db.insertInto('board_members').values({ board_id: id, profile_id: data.owner_id, role: 'owner' }).onConflict((oc) => oc.columns(['board_id', 'profile_id']).doNothing()).execute()
  await insertColumns(db, id, data.org_id, data.columns, at)
}

async function insertColumns(db: Db, boardId: string, orgId: string, columns: Extract<BoardEvent, { type: 'BoardCreated' }>['data']['columns'], at: Date): Promise<void> {
  if (!columns.length) return
  const rows = columns.map(({ column_id, name, order, color, limit }) => ({ id: column_id, board_id: boardId, org_id: orgId, name, order, color, limit, created_at: at }))
  await db.insertInto('board_columns').values(rows).onConflict((oc) => oc.column('id').doNothing()).execute()
}

function cardColumns(changes: CardChanges): Partial<BoardCardRow> {
  const { due_date, completed_at, ...rest } = changes
  return {
    ...rest,
    ...(due_date !== undefined && { due_date: due_date === null ? null : new Date(due_date) }),
    ...(completed_at !== undefined && { completed_at: completed_at === null ? null : new Date(completed_at) }),
  }
}
