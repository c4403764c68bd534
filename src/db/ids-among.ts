import type { SelectQueryBuilder } from 'kysely'

/**
 * Which of `ids` are rows of `query` (already narrowed to the organization and to the rows a
 * record may point at): the existence checks made before a command.
 */
export async function idsAmong(query: SelectQueryBuilder<any, any, object>, ids: readonly string[]): Promise<Set<string>> {
  if (!ids.length) return new Set()
  const rows: { id: string }[] = await query.select('id').where('id', 'in', ids).execute()
  return new Set(rows.map((row) => row.id))
}
