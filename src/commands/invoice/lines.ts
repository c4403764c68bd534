import { NotFoundError, ValidationError } from '../../errors.ts'
import type { Actor } from '../caller.ts'
import type { LineItem, LineItemInput } from './fields.ts'
import { assertEditable, assertMoneyOpen } from './invoice.ts'
import type { InvoiceEvent, InvoiceState } from './invoice.ts'
import { cents } from './money.ts'

/**
 * A draft's lines, one at a time (/api/invoices/{invoice_id}/line-items/): each change records the
 * lines as a whole (InvoiceLinesChanged). An issued invoice's lines are fixed.
 */
type Facts = { orgId: string; actor: Actor; at: string }
export type LineItemCommand =
  | ({ type: 'AddLineItem'; lineItemId: string; item: LineItemInput } & Facts)
  | ({ type: 'ChangeLineItem'; lineItemId: string; item: Partial<LineItemInput> } & Facts)
  | ({ type: 'RemoveLineItem'; lineItemId: string } & Facts)

/** 400 naming the first line that breaks a rule: a name, description or product, a percentage discount of at most 100, a tax rate of at most 100. */
export function checkLines(lines: readonly LineItemInput[]): void {
  lines.forEach((line, i) => {
    const field = (name: string) => `line_items.${i}.${name}`
    if (!line.name.trim() && !line.description.trim() && !line.product) throw new ValidationError({ [field('name')]: ['A line needs a name, a description or a product.'] })
    if (line.discount_type === 'PERCENTAGE' && cents(line.discount_value) > 10_000n) throw new ValidationError({ [field('discount_value')]: ['Expected a percentage from 0 to 100.'] })
    if (line.tax_rate !== null && cents(line.tax_rate) > 10_000n) throw new ValidationError({ [field('tax_rate')]: ['Expected a rate from 0 to 100.'] })
  })
}

function lineOf(state: InvoiceState, id: string): LineItem {
  const line = state.lines.find((l) => l.id === id)
  if (!line) throw new NotFoundError('Line item not found')
  return line
}

/** The lines after the command; null when it changes nothing. */
function nextLines(command: LineItemCommand, state: InvoiceState): LineItem[] | null {
  switch (command.type) {
    case 'AddLineItem':
      return state.lines.some((l) => l.id === command.lineItemId) ? null : [...state.lines, { id: command.lineItemId, ...command.item }]
    case 'ChangeLineItem': {
      const current = lineOf(state, command.lineItemId)
      const next = { ...current, ...command.item }
      return JSON.stringify(next) === JSON.stringify(current) ? null : state.lines.map((l) => (l.id === current.id ? next : l))
    }
    case 'RemoveLineItem': {
      const gone = lineOf(state, command.lineItemId)
      return state.lines.filter((l) => l !== gone)
    }
  }
}

export function decideLineItem(command: LineItemCommand, state: InvoiceState): InvoiceEvent[] {
  const lines = nextLines(command, state)
  if (!lines) return []
  assertEditable(state)
  assertMoneyOpen(state, 'line_items')
  checkLines(lines)
  lines.sort((a, b) => a.order - b.order)
  return [{ type: 'InvoiceLinesChanged', data: { line_items: lines, by: command.actor.profileId, at: command.at } }]
}
