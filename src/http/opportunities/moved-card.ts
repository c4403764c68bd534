import { isDeepStrictEqual } from 'node:util'
import type { OpportunityEvent, OpportunityState } from '../../commands/opportunity/opportunity.ts'
import type { Stage } from '../../commands/pipeline/stage-rules.ts'
import type { OpportunityView } from '../../projections/opportunity/opportunities.ts'
import type { CardRow } from '../../projections/opportunity/queries.ts'

/** The deal fields a board card shows (opportunity-views.ts). */
const CARD_FIELDS = ['name', 'account', 'assigned_to', 'tags', 'currency', 'probability', 'closed_on'] as const

// The read model holds amounts as numeric(15, 2) ("1000.00"), an event as it was given.
const sameAmount = (a: string | null, b: string | null) => (a === null || b === null ? a === b : Number(a) === Number(b))

/**
 * The moved card's row without reading the deal again (issue 20: it was the move's second read of
 * the same row): the row read before the move with the move's own events laid over it, as the
 * read model applies them. Undefined when the command decided on a deal that had changed since
 * that read (another write came between): the caller reads the read model then.
 */
export function movedRow(before: OpportunityView, events: readonly OpportunityEvent[], after: OpportunityState, stages: readonly Stage[]): CardRow | undefined {
  const row: OpportunityView = { ...before }
  for (const event of events) {
    const changed = { updated_at: new Date(event.data.at) }
    if (event.type === 'OpportunityUpdated') Object.assign(row, Object.fromEntries(Object.entries(event.data.changes).map(([key, change]) => [key, change.to])), changed)
    else if (event.type === 'OpportunityStageChanged') Object.assign(row, event.data.to, { stage_changed_at: new Date(event.data.at) }, changed)
    else if (event.type === 'OpportunityPositioned') Object.assign(row, { kanban_order: event.data.kanban_order }, changed)
  }
  const same = CARD_FIELDS.every((key) => isDeepStrictEqual(row[key], after.fields[key])) && sameAmount(row.amount, after.fields.amount) && row.stage_id === after.placement?.stage_id && row.kanban_order === after.kanbanOrder
  if (!same) return undefined
  const stage = stages.find((s) => s.id === row.stage_id)
  return { ...row, stage_label: stage?.label ?? null, expected_days: stage?.expected_days ?? null, warning_days: stage?.warning_days ?? null }
}
