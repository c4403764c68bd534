import { ValidationError } from '../../errors.ts'
import type { Actor } from '../caller.ts'
import type { LineItem } from './fields.ts'
import { cents, invoiceAmounts, money } from './money.ts'
import type { InvoiceAmounts, TaxCategory } from './money.ts'

/**
 * Credit notes: the only correction of an issued invoice, whose money never changes. A credit note
 * credits quantities of the invoice's lines (all that is left of every line when none are named:
 * a full credit). Its amounts are what the invoice still bills before it less what it bills after
 * it, each computed in the EN 16931 order (money.ts): so the credit notes of an invoice and what
 * it still bills always add up to its total exactly, cent for cent, per tax category too; a
 * percentage discount shrinks with the lines, a fixed one stays until nothing is left to bill; the
 * shipping charge is credited with the last of the lines. A credit note never takes more than is
 * due (reverse a payment first: refunds are not modelled), so the amount due never goes below 0.
 * Its number (CN-<year>-<n>) is a series of its own (number-sequence.ts), given in the same append.
 */

/** A quantity of one of the invoice's lines, credited. */
export type CreditedQuantity = { line_id: string; quantity: string }

/** A credited line as the credit note shows it: the invoice line's text and price, the quantity credited, and what that takes off. */
export type CreditNoteLine = { line_id: string; name: string; description: string; quantity: string; unit_price: string; tax_rate: string; subtotal: string; discount_amount: string; net: string }

export type CreditNoteAmounts = Omit<InvoiceAmounts, 'lines'> & { lines: CreditNoteLine[] }

/** What the invoice's fold keeps of a credit note: which quantities it took and how much. */
export type CreditTaken = { credit_note_id: string; lines: CreditedQuantity[]; total_amount: string }

export type IssueCreditNote = { type: 'IssueCreditNote'; creditNoteId: string; reason: string; lines?: readonly CreditedQuantity[]; orgId: string; actor: Actor; at: string }

type Billing = { fields: { discount_type: LineItem['discount_type']; discount_value: string; tax_rate: string; shipping_amount: string }; lines: readonly LineItem[]; credits: readonly CreditTaken[] }

/** Each line's quantity not credited yet, in hundredths. */
export function quantitiesLeft(invoice: Pick<Billing, 'lines' | 'credits'>): Map<string, bigint> {
  const left = new Map(invoice.lines.map((line) => [line.id, cents(line.quantity)]))
  for (const credit of invoice.credits) for (const taken of credit.lines) left.set(taken.line_id, (left.get(taken.line_id) ?? 0n) - cents(taken.quantity))
  return left
}

/** What the invoice bills for these quantities of its lines (shipping only while a line is left). */
function billedFor(invoice: Billing, left: ReadonlyMap<string, bigint>): InvoiceAmounts & { kept: LineItem[] } {
  const kept = invoice.lines.flatMap((line) => (left.get(line.id)! > 0n ? [{ ...line, quantity: money(left.get(line.id)!) }] : []))
  const shipping = kept.length ? invoice.fields.shipping_amount : '0.00'
  return { ...invoiceAmounts(kept, { ...invoice.fields, shipping_amount: shipping }), kept }
}

const minus = (a: string, b: string | undefined) => money(cents(a) - cents(b ?? '0.00'))

function categoriesTaken(before: readonly TaxCategory[], after: readonly TaxCategory[]): TaxCategory[] {
  return before.map((category) => {
    const still = after.find((c) => c.tax_rate === category.tax_rate)
    return { tax_rate: category.tax_rate, taxable_amount: minus(category.taxable_amount, still?.taxable_amount), tax_amount: minus(category.tax_amount, still?.tax_amount) }
  })
}

/** The credit note's amounts: the invoice's billing before it, less after it. */
export function creditNoteAmounts(invoice: Billing, taking: readonly CreditedQuantity[]): CreditNoteAmounts {
  const left = quantitiesLeft(invoice)
  const after = new Map(left)
  for (const taken of taking) after.set(taken.line_id, after.get(taken.line_id)! - cents(taken.quantity))
  const was = billedFor(invoice, left)
  const is = billedFor(invoice, after)
  const lines = taking.map((taken) => {
    const line = invoice.lines.find((l) => l.id === taken.line_id)!
    const before = was.lines[was.kept.findIndex((l) => l.id === line.id)]!
    const still = is.lines[is.kept.findIndex((l) => l.id === line.id)]
    return { line_id: line.id, name: line.name, description: line.description, quantity: taken.quantity, unit_price: line.unit_price, tax_rate: before.tax_rate, subtotal: minus(before.subtotal, still?.subtotal), discount_amount: minus(before.discount_amount, still?.discount_amount), net: minus(before.net, still?.net) }
  })
  const total = (key: 'subtotal' | 'discount_amount' | 'taxable_amount' | 'tax_amount' | 'shipping_amount' | 'total_amount') => minus(was[key], is[key])
  // A category the credit note leaves untouched is not part of it.
  const categories = categoriesTaken(was.tax_breakdown, is.tax_breakdown).filter((c) => c.taxable_amount !== '0.00' || c.tax_amount !== '0.00' || lines.some((l) => l.tax_rate === c.tax_rate))
  return { lines, subtotal: total('subtotal'), discount_amount: total('discount_amount'), taxable_amount: total('taxable_amount'), tax_breakdown: categories, tax_amount: total('tax_amount'), shipping_amount: total('shipping_amount'), total_amount: total('total_amount') }
}

/** The quantities a credit note takes: those named (each at most what is left of its line), or all that is left. */
export function quantitiesTaken(invoice: Pick<Billing, 'lines' | 'credits'>, named: readonly CreditedQuantity[] | undefined): CreditedQuantity[] {
  const left = quantitiesLeft(invoice)
  if (!named) return invoice.lines.flatMap((line) => (left.get(line.id)! > 0n ? [{ line_id: line.id, quantity: money(left.get(line.id)!) }] : []))
  const errors: Record<string, string[]> = {}
  named.forEach((taken, i) => {
    const rest = left.get(taken.line_id)
    if (rest === undefined) errors[`lines.${i}.line_id`] = ['Expected a line of this invoice.']
    else if (cents(taken.quantity) <= 0n) errors[`lines.${i}.quantity`] = ['Expected a quantity above 0.']
    else if (cents(taken.quantity) > rest) errors[`lines.${i}.quantity`] = [`At most ${money(rest)} of this line is left to credit.`]
    if (named.findIndex((other) => other.line_id === taken.line_id) !== i) errors[`lines.${i}.line_id`] = ['Each line once.']
  })
  if (Object.keys(errors).length) throw new ValidationError(errors)
  return named.map((taken) => ({ line_id: taken.line_id, quantity: money(cents(taken.quantity)) }))
}

/** The event's data: the credit note whole, its amounts fixed as issued. */
export type CreditNoteData = { credit_note_id: string; org_id: string; currency: string; reason: string } & CreditNoteAmounts & { by: string | null; at: string }

type Creditable = Billing & { issued: boolean; cancelled: boolean; amountDue: string }

export function decideCreditNote(command: IssueCreditNote, invoice: Creditable, currency: string): { type: 'CreditNoteIssued'; data: CreditNoteData }[] {
  if (invoice.credits.some((c) => c.credit_note_id === command.creditNoteId)) return []
  if (invoice.cancelled) throw new ValidationError('A cancelled invoice cannot be credited.')
  if (!invoice.issued) throw new ValidationError('Only an issued invoice is credited: change the draft instead.')
  const taking = quantitiesTaken(invoice, command.lines)
  if (!taking.length) throw new ValidationError({ lines: ['Nothing is left to credit on this invoice.'] })
  const amounts = creditNoteAmounts(invoice, taking)
  if (amounts.total_amount.startsWith('-') || cents(amounts.total_amount) === 0n) throw new ValidationError({ lines: ['These lines credit nothing: their amount is 0.'] })
  if (cents(amounts.total_amount) > cents(invoice.amountDue)) throw new ValidationError({ lines: [`The credit (${amounts.total_amount}) exceeds the amount due (${invoice.amountDue}); reverse a payment first.`] })
  return [{ type: 'CreditNoteIssued', data: { credit_note_id: command.creditNoteId, org_id: command.orgId, currency, reason: command.reason, ...amounts, by: command.actor.profileId, at: command.at } }]
}
