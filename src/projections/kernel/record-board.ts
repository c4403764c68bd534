import { sql } from 'kysely'
import type { RawBuilder } from 'kysely'
import type { Db } from '../../db/database.ts'

/**
 * The queries of a kanban board over a record read model (the lead board, the task board): which
 * column a record shows in is an expression over its row (a stage, a status), so every board of
 * every module shares these. Cards are by kanban order, then id.
 */
export type BoardColumn = RawBuilder<string | null>

/** A read model a board shows: its table, the alias its conditions and column expressions use, and the columns a card row selects. */
export type BoardSource = { table: string; alias: string; columns: RawBuilder<unknown> }

const from = (source: BoardSource) => sql`${sql.table(source.table)} AS ${sql.id(source.alias)}`
const ref = (source: BoardSource, column: string) => sql.ref(`${source.alias}.${column}`)
const where = (conditions: RawBuilder<boolean>[]) => sql.join(conditions, sql` AND `)

/** Records showing in one of these columns, as a filter condition. */
export const inColumns = (column: BoardColumn, keys: readonly string[]) => sql<boolean>`${column} = ANY(${[...keys]}::text[])`

/** At most `perColumn` cards per column key (a lateral walk each), and every column's full count, under the filtered set's conditions. */
export async function boardCards<Row>(db: Db, source: BoardSource, conditions: RawBuilder<boolean>[], column: BoardColumn, keys: readonly string[], perColumn: number): Promise<{ rows: (Row & { column_key: string })[]; counts: Map<string, number> }> {
  const [cards, counts] = await Promise.all([
    sql<Row & { column_key: string; kanban_order: number }>`SELECT c.* FROM unnest(${[...keys]}::text[]) AS board_column(key) CROSS JOIN LATERAL (
        SELECT ${source.columns}, board_column.key AS column_key FROM ${from(source)} WHERE ${where(conditions)} AND ${column} = board_column.key ORDER BY ${ref(source, 'kanban_order')}, ${ref(source, 'id')} LIMIT ${perColumn}) c
      ORDER BY c.kanban_order, c.id`.execute(db),
    sql<{ key: string; n: string }>`SELECT ${column} AS key, count(*) AS n FROM ${from(source)} WHERE ${where(conditions)} AND ${inColumns(column, keys)} GROUP BY 1`.execute(db),
  ])
  return { rows: cards.rows, counts: new Map(counts.rows.map((r) => [r.key, Number(r.n)])) }
}

/** The column a live record of the organization shows in and its kanban order, for placing another card next to it. */
export async function cardIn(db: Db, source: BoardSource, orgId: string, column: BoardColumn, id: string): Promise<{ column_key: string | null; kanban_order: number } | undefined> {
  const { rows } = await sql<{ column_key: string | null; kanban_order: number }>`SELECT ${column} AS column_key, ${ref(source, 'kanban_order')} AS kanban_order FROM ${from(source)}
    WHERE ${ref(source, 'org_id')} = ${orgId} AND ${ref(source, 'id')} = ${id} AND NOT ${ref(source, 'is_deleted')}`.execute(db)
  return rows[0]
}

/** The nearest kanban order in a column strictly after (`next`) or before (`previous`) `order`, or at the column's end when `order` is null. */
export async function neighbourOrderIn(db: Db, source: BoardSource, orgId: string, column: { expression: BoardColumn; key: string }, order: number | null, direction: 'next' | 'previous', exceptId: string): Promise<number | null> {
  const kanbanOrder = ref(source, 'kanban_order')
  const bound = order === null ? sql`true` : direction === 'next' ? sql`${kanbanOrder} > ${order}` : sql`${kanbanOrder} < ${order}`
  const sort = direction === 'next' ? sql`ASC` : sql`DESC`
  const { rows } = await sql<{ kanban_order: number }>`SELECT ${kanbanOrder} AS kanban_order FROM ${from(source)}
    WHERE ${ref(source, 'org_id')} = ${orgId} AND NOT ${ref(source, 'is_deleted')} AND ${ref(source, 'id')} <> ${exceptId} AND ${column.expression} = ${column.key} AND ${bound} ORDER BY ${kanbanOrder} ${sort} LIMIT 1`.execute(db)
  return rows[0]?.kanban_order ?? null
}
