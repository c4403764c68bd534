import { NotFoundError, ValidationError } from '../../errors.ts'
import { existing, fieldEvents } from './opportunity.ts'
import type { Of, OpportunityEvent, OpportunityState } from './opportunity.ts'
import { assertMayAccess, checkClosingRules } from './rules.ts'

/**
 * A deal's line items (where-the-spec-is-silent.md, Deals): events on the deal's own stream, so
 * the deal's amount follows them atomically. While a deal has line items they own its amount
 * (amount_source CALCULATED): the amount is their total, and an edit sending another amount, or
 * null, is refused; removing the last one leaves the amount as it was, MANUAL again.
 */
export const DISCOUNT_TYPES = ['percentage', 'fixed'] as const
export type LineItem = {
  id: string
  name: string
  description: string | null
  /** Decimal strings with two places, e.g. "2.50". */
  quantity: string
  unit_price: string
  discount_type: (typeof DISCOUNT_TYPES)[number] | null
  discount_value: string | null
}
export type LineItemInput = Omit<LineItem, 'id'>

// Money in integer hundredths (BigInt): no floating point touches an amount.
const hundredths = (decimal: string) => {
  const [whole, fraction = ''] = decimal.split('.')
  return BigInt(whole!) * 100n + BigInt(fraction.padEnd(2, '0').slice(0, 2))
}
const decimalText = (value: bigint) => `${value / 100n}.${(value % 100n).toString().padStart(2, '0')}`
// From ten-thousandths to hundredths, half away from zero (all values here are non-negative).
const roundToHundredths = (value: bigint) => (value + 50n) / 100n

type Priced = Pick<LineItem, 'quantity' | 'unit_price' | 'discount_type' | 'discount_value'>

/** The discount in ten-thousandths: a percentage of quantity × unit price, or a fixed amount, at most the gross. */
function discountOf(item: Priced, gross: bigint): bigint {
  if (item.discount_type === null || item.discount_value === null) return 0n
  const value = hundredths(item.discount_value)
  const discount = item.discount_type === 'percentage' ? (gross * value) / 10_000n : value * 100n
  return discount < gross ? discount : gross
}

/** The discount of a line item, in money. */
export function discountAmount(item: Priced): string {
  const gross = hundredths(item.quantity) * hundredths(item.unit_price) // ten-thousandths
  return decimalText(roundToHundredths(discountOf(item, gross)))
}

/** quantity × unit price, less the discount, never below zero. */
export function lineTotal(item: Priced): string {
  const gross = hundredths(item.quantity) * hundredths(item.unit_price)
  return decimalText(roundToHundredths(gross - discountOf(item, gross)))
}

export const lineItemsTotal = (items: readonly LineItem[]): string => decimalText(items.reduce((sum, item) => sum + hundredths(lineTotal(item)), 0n))

/** 400 unless a percentage discount is at most 100 and a discount has both its type and value. */
function checkDiscount(item: LineItemInput): void {
  if ((item.discount_type === null) !== (item.discount_value === null)) throw new ValidationError({ discount_value: ['Expected discount_type and discount_value together, or neither.'] })
  if (item.discount_type === 'percentage' && hundredths(item.discount_value!) > 10_000n) throw new ValidationError({ discount_value: ['Expected a percentage from 0 to 100.'] })
}

/** The deal's amount after its line items changed to `items`: their total while there are any. */
function amountEvents(state: OpportunityState, items: readonly LineItem[], at: string): OpportunityEvent[] {
  if (!items.length) return []
  const fields = { ...state.fields, amount: lineItemsTotal(items) }
  checkClosingRules(fields, state.placement!.stage_kind)
  return fieldEvents(state.fields, fields, at)
}

function itemOf(state: OpportunityState, id: string): LineItem {
  const item = state.lineItems.find((i) => i.id === id)
  if (!item) throw new NotFoundError('Line item not found')
  return item
}

export function decideLineItems(command: Of<'AddLineItem' | 'ChangeLineItem' | 'RemoveLineItem'>, state: OpportunityState): OpportunityEvent[] {
  existing(state, command.orgId)
  assertMayAccess(state, command.actor)
  const { at } = command
  switch (command.type) {
    case 'AddLineItem': {
      if (state.lineItems.some((i) => i.id === command.lineItemId)) return []
      checkDiscount(command.item)
      const item = { id: command.lineItemId, ...command.item }
      return [{ type: 'OpportunityLineItemAdded', data: { line_item: item, at } }, ...amountEvents(state, [...state.lineItems, item], at)]
    }
    case 'ChangeLineItem': {
      const current = itemOf(state, command.lineItemId)
      const next = { ...current, ...command.item }
      checkDiscount(next)
      const changes = Object.fromEntries(Object.entries(command.item).filter(([key, value]) => value !== current[key as keyof LineItem])) as Partial<LineItemInput>
      if (!Object.keys(changes).length) return []
      const items = state.lineItems.map((i) => (i.id === current.id ? next : i))
      return [{ type: 'OpportunityLineItemChanged', data: { line_item_id: current.id, changes, at } }, ...amountEvents(state, items, at)]
    }
    case 'RemoveLineItem': {
      const current = itemOf(state, command.lineItemId)
      const items = state.lineItems.filter((i) => i.id !== current.id)
      return [{ type: 'OpportunityLineItemRemoved', data: { line_item_id: current.id, at } }, ...amountEvents(state, items, at)]
    }
  }
}

/** An edit of a deal with line items: their total is its amount; another amount, or null, is refused. */
export function calculatedAmount(state: OpportunityState, requested: string | null | undefined): string | undefined {
  if (!state.lineItems.length) return undefined
  const total = lineItemsTotal(state.lineItems)
  if (requested !== undefined && requested !== total) throw new ValidationError({ amount: [`The deal's line items own its amount (${total}); change them instead.`] })
  return total
}
