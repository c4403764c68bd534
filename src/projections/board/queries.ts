import { sql } from 'kysely'
import { containsPattern } from '../../db/like.ts'
import type { BoardCardRow, BoardColumnRow, BoardMemberRow, BoardRow } from './boards.ts'
import type { Db } from '../../db/database.ts'

/**
 * What the board routes read. A board is visible to its members (the owner is one) and to the
 * organization's admins (and its API key); to anyone else it does not exist.
 */
export type BoardViewer = { profileId: string | null; isAdmin: boolean }

/** A board with its counts and the viewer's role: a membership's, else `admin` for an organization admin. */
export type BoardSummary = BoardRow & { member_count: number; column_count: number; task_count: number; my_role: string | null }
export type ColumnWithCount = BoardColumnRow & { task_count: number }
/** A card and its 0-based index in its column. */
export type PlacedCard = BoardCardRow & { index: number }


function summaries(db: Db, orgId: string, viewer: BoardViewer) {
  const me = viewer.profileId
  const role = me === null ? sql<null>`NULL` : sql<string | null>`(SELECT m.role FROM board_members m WHERE m.board_id = b.id AND m.profile_id = ${me})`
  let query = db
    .selectFrom('boards as b')
    .selectAll('b')
    .select([
      sql<number>`(SELECT count(*)::int FROM board_members m WHERE m.board_id = b.id)`.as('member_count'),
      sql<number>`(SELECT count(*)::int FROM board_columns c WHERE c.board_id = b.id)`.as('column_count'),
      sql<number>`(SELECT count(*)::int FROM board_cards k WHERE k.board_id = b.id)`.as('task_count'),
      sql<string | null>`coalesce(${role}, ${viewer.isAdmin ? 'admin' : null})`.as('my_role'),
    ])
    .where('b.org_id', '=', orgId)
  if (!viewer.isAdmin) query = query.where(sql<boolean>`EXISTS (SELECT 1 FROM board_members m WHERE m.board_id = b.id AND m.profile_id = ${me})`)
  return query
}

export type BoardFilter = { archived?: boolean; search?: string; limit: number; offset: number }

/** The boards the viewer may see, newest first (the original's order). */
export async function listBoards(db: Db, orgId: string, viewer: BoardViewer, filter: BoardFilter): Promise<{ count: number; rows: BoardSummary[] }> {
  let query = summaries(db, orgId, viewer)
  if (filter.archived !== undefined) query = query.where('b.is_archived', '=', filter.archived)
  if (filter.search) query = query.where('b.name', 'ilike', containsPattern(filter.search))
  const [rows, total] = await Promise.all([
    query.orderBy('b.created_at', 'desc').orderBy('b.id').limit(filter.limit).offset(filter.offset).execute(),
    query.clearSelect().select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow(),
  ])
  return { count: total.n, rows: rows as BoardSummary[] }
}

/** A board the viewer may see, or undefined (another organization's, or one they are not on). */
export async function boardOf(db: Db, orgId: string, viewer: BoardViewer, id: string): Promise<BoardSummary | undefined> {
  return (await summaries(db, orgId, viewer).where('b.id', '=', id).executeTakeFirst()) as BoardSummary | undefined
}

/** A board's memberships, the owner's first. */
export function membershipsOf(db: Db, boardId: string): Promise<BoardMemberRow[]> {
  return db.selectFrom('board_members').selectAll().where('board_id', '=', boardId).orderBy(sql`role = 'owner'`, 'desc').orderBy('profile_id').execute()
}

/** A board's columns in their order (then oldest first), with how many cards each holds. */
export async function columnsOf(db: Db, boardId: string): Promise<ColumnWithCount[]> {
  return (await db
    .selectFrom('board_columns as c')
    .selectAll('c')
    .select(sql<number>`(SELECT count(*)::int FROM board_cards k WHERE k.column_id = c.id)`.as('task_count'))
    .where('c.board_id', '=', boardId)
    .orderBy('c.order')
    .orderBy('c.created_at')
    .orderBy('c.id')
    .execute()) as ColumnWithCount[]
}

/** Cards of a board (or of one of its columns, or one card), each with its index in its column, in column order. */
export async function cardsOf(db: Db, boardId: string, only: { columnId?: string; cardId?: string } = {}): Promise<PlacedCard[]> {
  const placed = db
    .selectFrom('board_cards as k')
    .selectAll('k')
    .select(sql<number>`(row_number() OVER (PARTITION BY k.column_id ORDER BY k.rank, k.id) - 1)::int`.as('index'))
    .where('k.board_id', '=', boardId)
    .$if(only.columnId !== undefined, (q) => q.where('k.column_id', '=', only.columnId!))
  const rows = await db
    .selectFrom(placed.as('p'))
    .selectAll()
    .$if(only.cardId !== undefined, (q) => q.where('p.id', '=', only.cardId!))
    .orderBy('p.column_id')
    .orderBy('p.index')
    .execute()
  return rows as PlacedCard[]
}

/** The board a column of the organization belongs to, or undefined. */
export function boardOfColumn(db: Db, orgId: string, columnId: string): Promise<{ board_id: string } | undefined> {
  return db.selectFrom('board_columns').select('board_id').where('org_id', '=', orgId).where('id', '=', columnId).executeTakeFirst()
}

/** The board a card of the organization belongs to (and whom the card is assigned to), or undefined. */
export function boardOfCard(db: Db, orgId: string, cardId: string): Promise<{ board_id: string; assigned_to: string[] } | undefined> {
  return db.selectFrom('board_cards').select(['board_id', 'assigned_to']).where('org_id', '=', orgId).where('id', '=', cardId).executeTakeFirst()
}
