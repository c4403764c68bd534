import { cents, money } from '../../../commands/invoice/money.ts'
import type { TaxCategory } from '../../../commands/invoice/money.ts'

/**
 * An invoice or credit note as EN 16931 sees it (the business terms, BT-n), built from our amounts,
 * from which ubl-xml.ts writes the UBL 2.1 syntax element by element and en16931-rules.ts checks
 * the rules. How our model maps:
 * - each line's net (BT-131) is ours, its discount a line allowance (BG-27);
 * - the document discount is shared among the tax categories (money.ts): one document allowance
 *   (BG-20) per category, its share (a category's net less its taxable amount);
 * - shipping, charged outside tax, is a document charge (BG-21) of the zero-rated category (Z, 0 %),
 *   so the categories' bases add up to the total without tax (BR-CO-13, BR-Z-08);
 * - a tax rate above 0 is the standard-rated category (S), 0 is Z;
 * - the invoice's payments are the paid amount (BT-113); a credit note names its invoice (BG-3).
 */
export const CUSTOMIZATION_ID = 'urn:cen.eu:en16931:2017'

export type UblParty = { name: string; street: string; city: string; postcode: string; subdivision: string; country: string; taxId: string; email: string }
export type UblTaxCategory = { code: 'S' | 'Z'; rate: string }
export type UblAllowanceCharge = { charge: boolean; amount: string; reason: string; category: UblTaxCategory }
export type UblLine = { id: string; quantity: string; net: string; name: string; description: string; price: string; allowance: string; category: UblTaxCategory }
export type UblTaxSubtotal = { taxable: string; tax: string; category: UblTaxCategory }

export type UblDocument = {
  kind: 'Invoice' | 'CreditNote'
  customizationId: string
  number: string
  issueDate: string
  typeCode: '380' | '381'
  dueDate: string | null
  paymentTerms: string
  currency: string
  note: string
  buyerReference: string
  precedingInvoice: { number: string; issueDate: string } | null
  seller: UblParty
  buyer: UblParty
  allowanceCharges: UblAllowanceCharge[]
  taxSubtotals: UblTaxSubtotal[]
  taxTotal: string
  totals: { lineExtension: string; allowances: string; charges: string; taxExclusive: string; taxInclusive: string; prepaid: string; payable: string }
  lines: UblLine[]
}

/** What a document is made of: our lines' amounts, the tax categories, shipping and what was paid. */
export type UblSource = Omit<UblDocument, 'customizationId' | 'typeCode' | 'allowanceCharges' | 'taxSubtotals' | 'taxTotal' | 'totals' | 'lines'> & {
  lines: { name: string; description: string; quantity: string; unit_price: string; tax_rate: string; discount_amount: string; net: string }[]
  tax_breakdown: readonly TaxCategory[]
  shipping_amount: string
  paid: string
}

/** Hundredths of a decimal that may be negative (a credit note's category share may be a cent below 0). */
export const centsOf = (decimal: string): bigint => (decimal.startsWith('-') ? -cents(decimal.slice(1)) : cents(decimal))

const categoryOf = (rate: string): UblTaxCategory => ({ code: cents(rate) > 0n ? 'S' : 'Z', rate })
const sum = (amounts: readonly string[]) => money(amounts.reduce((total, amount) => total + centsOf(amount), 0n))
const signed = (value: bigint) => (value < 0n ? -value : value)

/** The categories' allowances (the discount's shares; a negative share, from rounding, is a charge) and the shipping charge. */
function allowanceChargesOf(source: UblSource): UblAllowanceCharge[] {
  const shares = source.tax_breakdown.flatMap((category) => {
    const share = centsOf(sum(source.lines.filter((line) => line.tax_rate === category.tax_rate).map((line) => line.net))) - centsOf(category.taxable_amount)
    return share === 0n ? [] : [{ charge: share < 0n, amount: money(signed(share)), reason: share < 0n ? 'Rounding of the discount' : 'Discount', category: categoryOf(category.tax_rate) }]
  })
  const shipping = centsOf(source.shipping_amount) > 0n ? [{ charge: true, amount: source.shipping_amount, reason: 'Shipping', category: categoryOf('0.00') }] : []
  return [...shares, ...shipping]
}

/** The tax breakdown (BG-23), shipping added to the zero-rated category's base. */
function taxSubtotalsOf(source: UblSource): UblTaxSubtotal[] {
  const subtotals = source.tax_breakdown.map((c) => ({ taxable: c.taxable_amount, tax: c.tax_amount, category: categoryOf(c.tax_rate) }))
  if (centsOf(source.shipping_amount) === 0n) return subtotals
  const zero = subtotals.find((s) => s.category.code === 'Z')
  if (!zero) return [...subtotals, { taxable: source.shipping_amount, tax: '0.00', category: categoryOf('0.00') }]
  return subtotals.map((s) => (s === zero ? { ...s, taxable: sum([s.taxable, source.shipping_amount]) } : s))
}

export function ublDocument(source: UblSource): UblDocument {
  const { lines, tax_breakdown: _breakdown, shipping_amount: _shipping, paid, ...header } = source
  const allowanceCharges = allowanceChargesOf(source)
  const taxSubtotals = taxSubtotalsOf(source)
  const lineExtension = sum(lines.map((line) => line.net))
  const allowances = sum(allowanceCharges.filter((a) => !a.charge).map((a) => a.amount))
  const charges = sum(allowanceCharges.filter((a) => a.charge).map((a) => a.amount))
  const taxExclusive = money(centsOf(lineExtension) - centsOf(allowances) + centsOf(charges))
  const taxTotal = sum(taxSubtotals.map((s) => s.tax))
  const taxInclusive = sum([taxExclusive, taxTotal])
  return {
    ...header,
    customizationId: CUSTOMIZATION_ID,
    typeCode: source.kind === 'Invoice' ? '380' : '381',
    allowanceCharges,
    taxSubtotals,
    taxTotal,
    totals: { lineExtension, allowances, charges, taxExclusive, taxInclusive, prepaid: paid, payable: money(centsOf(taxInclusive) - centsOf(paid)) },
    lines: lines.map((line, i) => ({ id: String(i + 1), quantity: line.quantity, net: line.net, name: line.name || line.description, description: line.description, price: line.unit_price, allowance: centsOf(line.discount_amount) > 0n ? line.discount_amount : '0.00', category: categoryOf(line.tax_rate) })),
  }
}
