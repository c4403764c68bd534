import { sql } from 'kysely'
import type { Kysely, RawBuilder } from 'kysely'
import { COLUMNS, where } from './leads.ts'
import type { LeadRow } from './leads.ts'

/**
 * The lead board's queries over the leads read model (http/leads/lead-board.ts): which column a lead
 * shows in is an expression over its row, so the pipeline board (a column per stage) and the status
 * board (a column per status) share one query. Cards are by kanban order, then id.
 */
export type BoardColumn = RawBuilder<string | null>

/**
 * A pipeline board's column of a lead: its stage, or, for a lead never moved, `inboxStageId` (the
 * default lead pipeline's first open stage, which shows the leads not yet placed; null elsewhere).
 */
export const stageColumn = (inboxStageId: string | null): BoardColumn => sql<string | null>`coalesce(l.stage_id, ${inboxStageId}::uuid)::text`
/** A status board's column of a lead: its status. */
export const statusColumn: BoardColumn = sql<string>`l.status`

/** Leads showing in one of these columns (e.g. on a pipeline's board), as a filter condition. */
export const inColumns = (column: BoardColumn, keys: readonly string[]) => sql<boolean>`${column} = ANY(${[...keys]}::text[])`

export type BoardLead = LeadRow & { column_key: string }

/** At most `perColumn` cards per column key (a lateral walk each), and every column's full count, under the filtered set's conditions. */
export async function boardLeads(db: Kysely<any>, conditions: RawBuilder<boolean>[], column: BoardColumn, keys: readonly string[], perColumn: number): Promise<{ rows: BoardLead[]; counts: Map<string, number> }> {
  const [cards, counts] = await Promise.all([
    sql<BoardLead>`SELECT c.* FROM unnest(${[...keys]}::text[]) AS board_column(key) CROSS JOIN LATERAL (
        SELECT ${COLUMNS}, board_column.key AS column_key FROM leads l WHERE ${where(conditions)} AND ${column} = board_column.key ORDER BY l.kanban_order, l.id LIMIT ${perColumn}) c
      ORDER BY c.kanban_order, c.id`.execute(db),
    sql<{ key: string; n: string }>`SELECT ${column} AS key, count(*) AS n FROM leads l WHERE ${where(conditions)} AND ${inColumns(column, keys)} GROUP BY 1`.execute(db),
  ])
  return { rows: cards.rows, counts: new Map(counts.rows.map((r) => [r.key, Number(r.n)])) }
}

/** The column a live lead of the organization shows in and its kanban order, for placing another card next to it. */
export async function leadCardOf(db: Kysely<any>, orgId: string, column: BoardColumn, id: string): Promise<{ column_key: string | null; kanban_order: number } | undefined> {
  const { rows } = await sql<{ column_key: string | null; kanban_order: number }>`SELECT ${column} AS column_key, l.kanban_order FROM leads l WHERE l.org_id = ${orgId} AND l.id = ${id} AND NOT l.is_deleted`.execute(db)
  return rows[0]
}

/** The nearest kanban order in a column strictly after (`next`) or before (`previous`) `order`, or at the column's end when `order` is null. */
export async function leadNeighbourOrder(db: Kysely<any>, orgId: string, column: { expression: BoardColumn; key: string }, order: number | null, direction: 'next' | 'previous', exceptId: string): Promise<number | null> {
  const bound = order === null ? sql`true` : direction === 'next' ? sql`l.kanban_order > ${order}` : sql`l.kanban_order < ${order}`
  const sort = direction === 'next' ? sql`ASC` : sql`DESC`
  const { rows } = await sql<{ kanban_order: number }>`SELECT l.kanban_order FROM leads l
    WHERE l.org_id = ${orgId} AND NOT l.is_deleted AND l.id <> ${exceptId} AND ${column.expression} = ${column.key} AND ${bound} ORDER BY l.kanban_order ${sort} LIMIT 1`.execute(db)
  return rows[0]?.kanban_order ?? null
}
