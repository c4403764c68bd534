/**
 * Card positions within a kanban column (§4.7; rules from where-the-spec-is-silent.md): a number,
 * cards sorted ascending. A card placed between two others goes midway; at either end, 1000 beyond.
 */
export const ORDER_STEP = 1000

export function placeBetween(before: number | null, after: number | null): number {
  if (before !== null && after !== null) return (before + after) / 2
  if (before !== null) return before + ORDER_STEP
  if (after !== null) return after - ORDER_STEP
  return ORDER_STEP
}
