/**
 * Invoice money, exact: every amount is a decimal string with two places on the wire and in the
 * events, and integer hundredths (BigInt) in arithmetic. No floating point touches an amount.
 *
 * The order of computation is EN 16931's (the original's `recalculate_totals` summed the lines'
 * gross amounts, so line discounts and line taxes never reached its total):
 * 1. each line: gross = quantity × unit price (exact, in ten-thousandths); its discount (a
 *    percentage of the gross, or a fixed amount, at most the gross); its net = gross − discount,
 *    rounded to hundredths (BT-131);
 * 2. the subtotal is the sum of the rounded line nets (BT-106);
 * 3. the document discount (an allowance, BT-107): a percentage of the subtotal, rounded, or a
 *    fixed amount, at most the subtotal;
 * 4. tax per tax category (BR-CO-17): the lines are grouped by their tax rate (a line's own
 *    `tax_rate`, or the invoice's when the line has none); each category's base is its lines' net
 *    less its share of the document discount (shared in proportion to the category nets, largest
 *    remainder first, so the shares add up to the discount exactly); its tax is base × rate,
 *    rounded; the invoice's tax is the sum of the categories' taxes, not of per-line taxes;
 * 5. total = subtotal − discount + tax + shipping (shipping is a charge outside tax, as in the
 *    original); amount due = total − the payments not reversed.
 *
 * Rounding rule: to the cent, half away from zero (2.345 → 2.35), at the steps named above only.
 * A line's own `tax_amount` and `total` are shown for reading; they are rounded per line and so may
 * differ by cents from the document's per-category tax, which is the one that counts.
 */

export const DISCOUNT_TYPES = ['PERCENTAGE', 'FIXED'] as const
export type DiscountType = (typeof DISCOUNT_TYPES)[number]

/** A canonical non-negative decimal with two places ("12.50") → hundredths (1250n). */
export function cents(decimal: string): bigint {
  const match = /^(\d+)(?:\.(\d{1,2}))?$/.exec(decimal)
  if (!match) throw new RangeError(`Expected a non-negative decimal with at most 2 places, got "${decimal}"`)
  return BigInt(match[1]!) * 100n + BigInt((match[2] ?? '').padEnd(2, '0'))
}

/** Hundredths → "12.50" (negative amounts keep their sign: "-0.05"). */
export function money(value: bigint): string {
  const sign = value < 0n ? '-' : ''
  const abs = value < 0n ? -value : value
  return `${sign}${abs / 100n}.${(abs % 100n).toString().padStart(2, '0')}`
}

/** numerator / denominator rounded half away from zero (denominator > 0). */
export function divRound(numerator: bigint, denominator: bigint): bigint {
  const half = denominator / 2n
  return numerator >= 0n ? (numerator + half) / denominator : -((-numerator + half) / denominator)
}

const min = (a: bigint, b: bigint) => (a < b ? a : b)

export type PricedLine = {
  quantity: string
  unit_price: string
  discount_type: DiscountType | null
  discount_value: string
  /** null: the invoice's rate applies. */
  tax_rate: string | null
}

export type LineAmounts = { subtotal: string; discount_amount: string; net: string; tax_rate: string; tax_amount: string; total: string }

export type DocumentTerms = { discount_type: DiscountType | null; discount_value: string; tax_rate: string; shipping_amount: string }

export type TaxCategory = { tax_rate: string; taxable_amount: string; tax_amount: string }

export type InvoiceAmounts = {
  lines: LineAmounts[]
  subtotal: string
  discount_amount: string
  taxable_amount: string
  tax_breakdown: TaxCategory[]
  tax_amount: string
  shipping_amount: string
  total_amount: string
}

/** A discount in the unit of `base`: `value` percent of it (value in hundredths of a percent), or a fixed amount; at most `base`. */
function discountOf(type: DiscountType | null, value: bigint, base: bigint, fixedScale: bigint): bigint {
  if (type === null) return 0n
  const discount = type === 'PERCENTAGE' ? divRound(base * value, 10_000n) : value * fixedScale
  return min(discount, base)
}

/** One line's amounts (step 1), with its effective tax rate. */
export function lineAmounts(line: PricedLine, invoiceRate: string): LineAmounts & { netCents: bigint; rate: bigint } {
  const gross = cents(line.quantity) * cents(line.unit_price) // ten-thousandths
  const net = divRound(gross - discountOf(line.discount_type, cents(line.discount_value), gross, 100n), 100n)
  const subtotal = divRound(gross, 100n)
  const rate = cents(line.tax_rate ?? invoiceRate)
  const tax = divRound(net * rate, 10_000n)
  return { subtotal: money(subtotal), discount_amount: money(subtotal - net), net: money(net), tax_rate: money(rate), tax_amount: money(tax), total: money(net + tax), netCents: net, rate }
}

/** Shares of `amount` in proportion to `weights` (all ≥ 0, sum > 0), adding up to `amount` exactly: largest remainder first, ties to the earlier. */
export function apportion(amount: bigint, weights: readonly bigint[]): bigint[] {
  const total = weights.reduce((a, b) => a + b, 0n)
  if (total === 0n) return weights.map(() => 0n)
  const floors = weights.map((w) => (amount * w) / total)
  let left = amount - floors.reduce((a, b) => a + b, 0n)
  const order = weights.map((w, i) => ({ i, rest: (amount * w) % total })).sort((a, b) => (a.rest === b.rest ? a.i - b.i : a.rest > b.rest ? -1 : 1))
  for (const { i } of order) {
    if (left === 0n) break
    floors[i]! += 1n
    left -= 1n
  }
  return floors
}

/** The invoice's amounts from its lines and terms, in the order above. */
export function invoiceAmounts(lines: readonly PricedLine[], terms: DocumentTerms): InvoiceAmounts {
  const computed = lines.map((line) => lineAmounts(line, terms.tax_rate))
  const subtotal = computed.reduce((sum, line) => sum + line.netCents, 0n)
  const discount = discountOf(terms.discount_type, cents(terms.discount_value), subtotal, 1n)
  const rates = [...new Set(computed.map((line) => line.rate))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
  const nets = rates.map((rate) => computed.filter((line) => line.rate === rate).reduce((sum, line) => sum + line.netCents, 0n))
  const shares = apportion(discount, nets)
  const categories = rates.map((rate, i) => {
    const base = nets[i]! - shares[i]!
    return { rate, base, tax: divRound(base * rate, 10_000n) }
  })
  const tax = categories.reduce((sum, c) => sum + c.tax, 0n)
  const shipping = cents(terms.shipping_amount)
  return {
    lines: computed.map(({ netCents: _n, rate: _r, ...line }) => line),
    subtotal: money(subtotal),
    discount_amount: money(discount),
    taxable_amount: money(subtotal - discount),
    tax_breakdown: categories.map((c) => ({ tax_rate: money(c.rate), taxable_amount: money(c.base), tax_amount: money(c.tax) })),
    tax_amount: money(tax),
    shipping_amount: money(shipping),
    total_amount: money(subtotal - discount + tax + shipping),
  }
}

/** Σ of decimal strings, exactly. */
export const sumMoney = (amounts: readonly string[]): string => money(amounts.reduce((sum, amount) => sum + cents(amount), 0n))

/** a − b, exactly (may be negative). */
export const minusMoney = (a: string, b: string): string => money(cents(a) - cents(b))
