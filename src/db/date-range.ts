import { sql } from 'kysely'
import type { RawBuilder } from 'kysely'

/**
 * `<field>__gte` / `<field>__lte` date filters (§4.1) as SQL conditions. Values are YYYY-MM-DD; a
 * malformed or impossible date matches nothing (no error). On a timestamp column the upper bound
 * includes that whole (UTC) day; on a date column both bounds are inclusive.
 */
export const isIsoDate = (value: string): boolean => {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return false
  const date = new Date(`${value}T00:00:00Z`)
  return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(value)
}

export function dateRange(column: RawBuilder<unknown>, kind: 'timestamptz' | 'date', range: { from?: string; to?: string }): RawBuilder<boolean>[] {
  const conditions: RawBuilder<boolean>[] = []
  const valid = (value: string) => isIsoDate(value.trim())
  if (range.from !== undefined) conditions.push(valid(range.from) ? sql<boolean>`${column} >= ${range.from.trim()}::date` : sql<boolean>`false`)
  if (range.to !== undefined) {
    const to = range.to.trim()
    if (!valid(to)) conditions.push(sql<boolean>`false`)
    else conditions.push(kind === 'date' ? sql<boolean>`${column} <= ${to}::date` : sql<boolean>`${column} < (${to}::date + 1)::timestamptz`)
  }
  return conditions
}
