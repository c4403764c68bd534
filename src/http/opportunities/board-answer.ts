import type { z } from 'zod'
import type { Deps } from '../../deps.ts'
import type { PipelineStageRow } from '../../projections/pipeline/pipelines.ts'
import type { CardRow, DealQuery } from '../../projections/opportunity/queries.ts'
import { boardDeals } from '../../projections/opportunity/queries.ts'
import { cardColumns, columnItems } from '../../projections/opportunity/card-json.ts'
import type { CardColumnRow, CardJsonViewer } from '../../projections/opportunity/card-json.ts'
import type { LineItem } from '../../commands/opportunity/line-items.ts'
import { compileFast } from '../kernel/serializer.ts'
import { cardsOf } from './opportunity-views.ts'
import { Board } from './schemas.ts'

/** §4.6: each column shows at most this many cards; item_count still counts them all. */
export const CARDS_PER_COLUMN = 100

type Stage = Pick<PipelineStageRow, 'id' | 'code' | 'label' | 'kind' | 'expected_days' | 'warning_days'> & { position: number }
type BoardShape = { pipeline: z.infer<typeof Board>['pipeline']; stages: readonly Stage[]; counts: Map<string, number> }

/** A column without its items, in the schema's field order. */
const columnOf = (stage: Stage, counts: Map<string, number>) => ({
  id: stage.code,
  name: stage.label,
  order: stage.position,
  kind: stage.kind,
  color: null,
  stage_type: stage.kind,
  expected_days: stage.expected_days,
  warning_days: stage.warning_days,
  is_status_column: true,
  wip_limit: null,
  item_count: counts.get(stage.id) ?? 0,
})
const totalOf = (counts: Map<string, number>) => [...counts.values()].reduce((a, b) => a + b, 0)

/** The board as an object, its cards built in Node from rows: the board as of an instant, and the reference the live board is checked against in tests. */
export async function boardObject(deps: Deps, viewer: CardJsonViewer, board: BoardShape, rows: readonly CardRow[], now: Date, lineItemsThen?: ReadonlyMap<string, readonly LineItem[]>): Promise<z.infer<typeof Board>> {
  const cards = await cardsOf(deps, viewer.orgId, rows, { profileId: viewer.profileId, isAdmin: viewer.isAdmin, isSuperuser: false }, now, lineItemsThen)
  const columns = board.stages.map((stage) => ({ ...columnOf(stage, board.counts), items: cards.filter((_, i) => rows[i]!.stage_id === stage.id) }))
  return { mode: 'status' as const, pipeline: board.pipeline, columns, total_items: totalOf(board.counts) }
}

let writeBoard: ((board: unknown) => string) | undefined

/**
 * The live board as JSON text: its cards written by PostgreSQL (card-json.ts), spliced into the
 * envelope; with the instant (epoch ms) its first card's days in stage change, until which the text
 * holds at the same read models (the clock shows in nothing else). With `check` (tests) the board is also built as an object and written by the serializer
 * every other answer uses; the two texts must be the same bytes, and the object must pass the zod
 * schema, so the answer is held to what the schema says.
 */
export async function liveBoardText(deps: Deps, viewer: CardJsonViewer, query: DealQuery, pipeline: BoardShape['pipeline'], stages: readonly Stage[], check: boolean): Promise<{ text: string; until: number }> {
  const stageIds = stages.map((s) => s.id)
  const { rows, counts } = await boardDeals<CardColumnRow>(deps.db, query, stageIds, CARDS_PER_COLUMN, 'opportunities', cardColumns(viewer, query.now))
  const items = new Map(rows.map((row) => [row.stage_id, columnItems(row)]))
  const columns = stages.map((stage) => {
    const head = JSON.stringify(columnOf(stage, counts))
    return `${head.slice(0, -1)},"items":[${items.get(stage.id) ?? ''}]}`
  })
  const text = `{"mode":"status","pipeline":${JSON.stringify({ id: pipeline.id, name: pipeline.name, is_default: pipeline.is_default })},"columns":[${columns.join(',')}],"total_items":${totalOf(counts)}}`
  if (check) {
    const reference = await boardDeals(deps.db, query, stageIds, CARDS_PER_COLUMN)
    const board = Board.parse(await boardObject(deps, viewer, { pipeline, stages, counts: reference.counts }, reference.rows, query.now))
    const expected = (writeBoard ??= compileFast(Board)!)(board)
    if (text !== expected) throw new Error(`The live board's JSON differs from the serializer's:\n${text.slice(0, 2000)}\nexpected\n${expected.slice(0, 2000)}`)
  }
  return { text, until: Math.min(...rows.map((row) => row.days_change_at ?? Infinity)) }
}
