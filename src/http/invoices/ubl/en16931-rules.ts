import { divRound, money } from '../../../commands/invoice/money.ts'
import { centsOf } from './ubl-document.ts'
import type { UblDocument, UblTaxCategory } from './ubl-document.ts'

/**
 * EN 16931's business rules, checked in code on the document the XML is written from (no
 * Schematron processor runs here). Checked:
 * - BR-01…BR-16: the mandatory terms (specification id, number, issue date, type code, currency,
 *   seller and buyer names, postal addresses and country codes, the four totals, at least one line);
 * - BR-21, BR-22, BR-24, BR-25, BR-26, BR-27: each line's id, quantity, net, item name, price not negative;
 * - BR-31, BR-32, BR-33, BR-36, BR-37, BR-38: document allowances' and charges' amount, tax category, reason;
 * - BR-55: a credit note names its preceding invoice;
 * - BR-CO-04 (each line's tax category), BR-CO-10…BR-CO-16 (the totals' sums), BR-CO-17 (a
 *   category's tax is its base × rate, rounded; to within a cent on a credit note, whose tax is a
 *   difference of two rounded taxes, so that credit notes add up to their invoice exactly), BR-CO-18 (a tax breakdown), BR-CO-25 (money due
 *   needs a due date or payment terms);
 * - BR-S-02 (standard-rated lines need the seller's tax identifier), BR-S-05 / BR-Z-05 (the
 *   categories' rates), BR-S-08 / BR-Z-08 (each category's base is its lines' nets less its
 *   allowances plus its charges), BR-Z-09 (zero-rated tax is 0);
 * - BR-DEC: amounts have at most two decimals; code formats (BR-CL) only by shape: a 3-letter
 *   currency, a 2-letter country.
 * Not checked: the UBL 2.1 XSD, the code lists' contents (BR-CL-*: which currency, country and
 * unit codes exist), the rules of the categories we never write (AE, E, G, K, L, M, O), payee and
 * tax representative (BR-17…BR-20), payment instructions (BR-49…BR-51, BR-61), invoicing periods
 * (BR-29, BR-30, BR-CO-19), and the syntax-bound UBL-CR/UBL-SR rules of the CEN Schematron.
 */
export type RuleViolation = { rule: string; message: string }

const AMOUNT = /^-?\d+(\.\d{1,2})?$/

export function checkEn16931(doc: UblDocument): RuleViolation[] {
  const violations: RuleViolation[] = []
  const must = (rule: string, holds: boolean, message: string) => {
    if (!holds) violations.push({ rule, message })
  }
  const sum = (amounts: readonly string[]) => amounts.reduce((total, a) => total + centsOf(a), 0n)
  const equal = (rule: string, actual: string, expected: bigint, what: string) => must(rule, centsOf(actual) === expected, `${what} is ${actual}, expected ${money(expected)}`)

  must('BR-01', doc.customizationId !== '', 'Specification identifier (BT-24) missing')
  must('BR-02', doc.number !== '', 'Invoice number (BT-1) missing')
  must('BR-03', /^\d{4}-\d{2}-\d{2}$/.test(doc.issueDate), 'Issue date (BT-2) missing')
  must('BR-04', doc.typeCode !== ('' as string), 'Type code (BT-3) missing')
  must('BR-05', /^[A-Z]{3}$/.test(doc.currency), 'Currency code (BT-5) missing')
  must('BR-06', doc.seller.name.trim() !== '', "Seller's name (BT-27) missing")
  must('BR-07', doc.buyer.name.trim() !== '', "Buyer's name (BT-44) missing")
  must('BR-08', doc.seller.street !== '' || doc.seller.city !== '' || doc.seller.postcode !== '', "Seller's postal address (BG-5) missing")
  must('BR-09', /^[A-Z]{2}$/.test(doc.seller.country), "Seller's country code (BT-40) missing")
  must('BR-10', doc.buyer.street !== '' || doc.buyer.city !== '' || doc.buyer.postcode !== '', "Buyer's postal address (BG-8) missing")
  must('BR-11', /^[A-Z]{2}$/.test(doc.buyer.country), "Buyer's country code (BT-55) missing")
  const totals = doc.totals
  must('BR-12', totals.lineExtension !== '', 'Sum of line net amounts (BT-106) missing')
  must('BR-13', totals.taxExclusive !== '', 'Total without VAT (BT-109) missing')
  must('BR-14', totals.taxInclusive !== '', 'Total with VAT (BT-112) missing')
  must('BR-15', totals.payable !== '', 'Amount due for payment (BT-115) missing')
  must('BR-16', doc.lines.length > 0, 'At least one line (BG-25)')
  must('BR-55', doc.kind === 'Invoice' || (doc.precedingInvoice?.number ?? '') !== '', 'A credit note names its preceding invoice (BT-25)')

  const amounts = [totals.lineExtension, totals.allowances, totals.charges, totals.taxExclusive, totals.taxInclusive, totals.prepaid, totals.payable, doc.taxTotal, ...doc.lines.flatMap((l) => [l.net, l.price, l.allowance]), ...doc.allowanceCharges.map((a) => a.amount), ...doc.taxSubtotals.flatMap((s) => [s.taxable, s.tax])]
  for (const amount of amounts) must('BR-DEC', AMOUNT.test(amount), `Amount ${amount} has more than two decimals`)
  if (violations.some((v) => v.rule === 'BR-DEC')) return violations

  doc.lines.forEach((line, i) => {
    const at = `line ${i + 1}`
    must('BR-21', line.id !== '', `${at}: identifier (BT-126) missing`)
    must('BR-22', line.quantity !== '', `${at}: quantity (BT-129) missing`)
    must('BR-24', line.net !== '', `${at}: net amount (BT-131) missing`)
    must('BR-25', line.name.trim() !== '', `${at}: item name (BT-153) missing`)
    must('BR-26', line.price !== '', `${at}: net price (BT-146) missing`)
    must('BR-27', centsOf(line.price) >= 0n, `${at}: net price (BT-146) negative`)
    must('BR-CO-04', ['S', 'Z'].includes(line.category.code), `${at}: tax category (BT-151) missing`)
    checkRate(line.category, must, at)
  })
  doc.allowanceCharges.forEach((a, i) => {
    const [amount, category, reason] = a.charge ? ['BR-36', 'BR-37', 'BR-38'] : ['BR-31', 'BR-32', 'BR-33']
    must(amount, a.amount !== '', `${a.charge ? 'charge' : 'allowance'} ${i + 1}: amount missing`)
    must(category, ['S', 'Z'].includes(a.category.code), `${a.charge ? 'charge' : 'allowance'} ${i + 1}: tax category missing`)
    must(reason, a.reason.trim() !== '', `${a.charge ? 'charge' : 'allowance'} ${i + 1}: reason missing`)
  })

  const allowances = doc.allowanceCharges.filter((a) => !a.charge)
  const charges = doc.allowanceCharges.filter((a) => a.charge)
  equal('BR-CO-10', totals.lineExtension, sum(doc.lines.map((l) => l.net)), 'Sum of line net amounts (BT-106)')
  equal('BR-CO-11', totals.allowances, sum(allowances.map((a) => a.amount)), 'Sum of allowances (BT-107)')
  equal('BR-CO-12', totals.charges, sum(charges.map((a) => a.amount)), 'Sum of charges (BT-108)')
  equal('BR-CO-13', totals.taxExclusive, centsOf(totals.lineExtension) - centsOf(totals.allowances) + centsOf(totals.charges), 'Total without VAT (BT-109)')
  equal('BR-CO-14', doc.taxTotal, sum(doc.taxSubtotals.map((s) => s.tax)), 'Total VAT (BT-110)')
  equal('BR-CO-15', totals.taxInclusive, centsOf(totals.taxExclusive) + centsOf(doc.taxTotal), 'Total with VAT (BT-112)')
  equal('BR-CO-16', totals.payable, centsOf(totals.taxInclusive) - centsOf(totals.prepaid), 'Amount due for payment (BT-115)')
  must('BR-CO-18', doc.taxSubtotals.length > 0, 'At least one VAT breakdown (BG-23)')
  must('BR-CO-25', centsOf(totals.payable) <= 0n || doc.kind === 'CreditNote' || doc.dueDate !== null || doc.paymentTerms !== '', 'Money is due: a due date (BT-9) or payment terms (BT-20)')
  must('BR-S-02', !doc.lines.some((l) => l.category.code === 'S') || doc.seller.taxId !== '', "Standard-rated lines: the seller's VAT identifier or tax registration (BT-31, BT-32)")

  const same = (a: UblTaxCategory, b: UblTaxCategory) => a.code === b.code && centsOf(a.rate) === centsOf(b.rate)
  for (const subtotal of doc.taxSubtotals) {
    const c = subtotal.category
    const at = `category ${c.code} ${c.rate} %`
    checkRate(c, must, at)
    const base = sum(doc.lines.filter((l) => same(l.category, c)).map((l) => l.net)) - sum(allowances.filter((a) => same(a.category, c)).map((a) => a.amount)) + sum(charges.filter((a) => same(a.category, c)).map((a) => a.amount))
    equal(`BR-${c.code}-08`, subtotal.taxable, base, `${at}: taxable amount (BT-116)`)
    const tax = divRound(centsOf(subtotal.taxable) * centsOf(c.rate), 10_000n)
    // A credit note's category tax is the difference of the invoice's rounded taxes before and after it, so it may be a cent off its own base × rate.
    const off = centsOf(subtotal.tax) - tax
    must('BR-CO-17', doc.kind === 'Invoice' ? off === 0n : off >= -1n && off <= 1n, `${at}: VAT amount (BT-117) is ${subtotal.tax}, expected ${money(tax)}`)
    if (c.code === 'Z') equal('BR-Z-09', subtotal.tax, 0n, `${at}: VAT amount (BT-117)`)
  }
  return violations
}

function checkRate(category: UblTaxCategory, must: (rule: string, holds: boolean, message: string) => void, at: string): void {
  if (category.code === 'S') must('BR-S-05', centsOf(category.rate) > 0n, `${at}: a standard rate is above 0`)
  if (category.code === 'Z') must('BR-Z-05', centsOf(category.rate) === 0n, `${at}: the zero rate is 0`)
}
