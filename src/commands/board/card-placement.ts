import { ORDER_STEP, placeBetween } from '../opportunity/placement.ts'

/**
 * Where a card sits in its column: a rank, cards sorted by rank (then id), placed between its new
 * neighbours with the deal board's rule (placeBetween). Halving a gap again and again runs out of
 * floating-point room after about fifty drops into the same slot; when the midpoint is no longer
 * strictly between the neighbours, the column is renumbered (every card, in its new order, a
 * step apart), which keeps the order exact whatever the sequence of moves.
 */

type Ranked = { id: string; columnId: string; rank: number }

const byRank = (a: Ranked, b: Ranked) => a.rank - b.rank || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

/** A column's cards in their order. */
export function cardsOfColumn<C extends Ranked>(board: { cards: Record<string, C> }, columnId: string): C[] {
  return Object.values(board.cards)
    .filter((card) => card.columnId === columnId)
    .sort(byRank)
}

/** The rank for `cardId` dropped at `index` among `others` (null: at the end), and the renumbered column when the gap ran out. */
export function placeCard(others: readonly Ranked[], index: number | null, cardId: string): { rank: number; renumber: string[] | null } {
  const at = index === null ? others.length : Math.max(0, Math.min(index, others.length))
  const before = others[at - 1]?.rank ?? null
  const after = others[at]?.rank ?? null
  const rank = placeBetween(before, after)
  if ((before === null || rank > before) && (after === null || rank < after)) return { rank, renumber: null }
  const renumber = others.map((card) => card.id)
  renumber.splice(at, 0, cardId)
  return { rank: (at + 1) * ORDER_STEP, renumber }
}

/** The ranks of a renumbered column: the cards in this order, a step apart. */
export const renumberedRanks = (cardIds: readonly string[]): Map<string, number> => new Map(cardIds.map((id, i) => [id, (i + 1) * ORDER_STEP]))
