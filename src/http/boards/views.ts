import type { z } from 'zod'
import type { BoardRole, CardPriority } from '../../commands/board/board.ts'
import type { Db } from '../../db/database.ts'
import { cardsOf, columnsOf, membershipsOf } from '../../projections/board/queries.ts'
import type { BoardSummary, ColumnWithCount, PlacedCard } from '../../projections/board/queries.ts'
import { profileRefs } from '../kernel/relations.ts'
import type { ProfileRef } from '../kernel/relations.ts'
import type { Board, BoardListed, Card, Column, ColumnWithCards } from './schemas.ts'

/** Rows of the boards read model → the answers. Profiles are looked up once per answer. */
type Profiles = ReadonlyMap<string, z.infer<typeof ProfileRef>>

async function profilesOf(db: Db, orgId: string, ids: Iterable<string | null>): Promise<Profiles> {
  const wanted = [...new Set([...ids].filter((id): id is string => id !== null))]
  return new Map((await profileRefs(db, orgId, wanted)).map((ref) => [ref.id, ref]))
}

const listed = (row: BoardSummary, profiles: Profiles): z.infer<typeof BoardListed> => ({
  id: row.id,
  name: row.name,
  description: row.description,
  owner: (row.owner_id && profiles.get(row.owner_id)) || null,
  is_archived: row.is_archived,
  member_count: row.member_count,
  column_count: row.column_count,
  task_count: row.task_count,
  my_role: row.my_role as BoardRole | null,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
})

export async function boardListViews(db: Db, orgId: string, rows: readonly BoardSummary[]): Promise<z.infer<typeof BoardListed>[]> {
  const profiles = await profilesOf(db, orgId, rows.map((row) => row.owner_id))
  return rows.map((row) => listed(row, profiles))
}

const columnView = (row: ColumnWithCount): z.infer<typeof Column> => ({
  id: row.id,
  board: row.board_id,
  name: row.name,
  order: row.order,
  color: row.color,
  limit: row.limit,
  task_count: row.task_count,
  created_at: row.created_at.toISOString(),
})

export async function boardView(db: Db, orgId: string, row: BoardSummary): Promise<z.infer<typeof Board>> {
  const [columns, memberships] = await Promise.all([columnsOf(db, row.id), membershipsOf(db, row.id)])
  const profiles = await profilesOf(db, orgId, [row.owner_id, ...memberships.map((m) => m.profile_id)])
  const members = memberships.flatMap((m) => {
    const profile = profiles.get(m.profile_id)
    return profile ? [{ profile, role: m.role as BoardRole }] : []
  })
  return { ...listed(row, profiles), columns: columns.map(columnView), members }
}

const cardView = (row: PlacedCard, profiles: Profiles, now: Date): z.infer<typeof Card> => ({
  id: row.id,
  title: row.title,
  description: row.description,
  order: row.index,
  priority: row.priority as CardPriority,
  due_date: row.due_date?.toISOString() ?? null,
  completed_at: row.completed_at?.toISOString() ?? null,
  is_completed: row.completed_at !== null,
  is_overdue: row.completed_at === null && row.due_date !== null && row.due_date < now,
  assigned_to: row.assigned_to.flatMap((id) => profiles.get(id) ?? []),
  column: row.column_id,
  board: row.board_id,
  created_by: row.created_by,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
})

export async function cardViews(db: Db, orgId: string, rows: readonly PlacedCard[], now: Date): Promise<z.infer<typeof Card>[]> {
  const profiles = await profilesOf(db, orgId, rows.flatMap((row) => row.assigned_to))
  return rows.map((row) => cardView(row, profiles, now))
}

/** A board's columns in order, each with its cards in order: what the board page reads. */
export async function columnsWithCards(db: Db, orgId: string, boardId: string, now: Date): Promise<z.infer<typeof ColumnWithCards>[]> {
  const [columns, cards] = await Promise.all([columnsOf(db, boardId), cardsOf(db, boardId)])
  const views = await cardViews(db, orgId, cards, now)
  return columns.map((column) => ({ ...columnView(column), tasks: views.filter((card) => card.column === column.id) }))
}
