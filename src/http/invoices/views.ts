import { z } from 'zod'
import type { LineItem } from '../../commands/invoice/fields.ts'
import type { Payment } from '../../commands/invoice/invoice.ts'
import { lineAmounts } from '../../commands/invoice/money.ts'
import type { InvoiceView } from '../../projections/invoice/queries.ts'
import { iso } from '../kernel/schemas/common.ts'
import { ContactErased, ContactRef, contactRef, erasedMarkAs } from '../kernel/relations.ts'

/** Invoices as the original's serializers answer them (InvoiceListSerializer, InvoiceSerializer): amounts as decimal strings. */

const Decimal = z.string().describe('A decimal as a string with 2 places (no floating point)')
const Day = z.string().nullable().describe('YYYY-MM-DD')

export const LineItemView = z.object({
  id: z.uuid(),
  product: z.uuid().nullable(),
  product_name: z.string().nullable(),
  name: z.string(),
  description: z.string(),
  quantity: Decimal,
  unit_price: Decimal,
  discount_type: z.string().nullable(),
  discount_value: Decimal,
  discount_amount: Decimal,
  tax_rate: Decimal.describe('The rate applied: the line\'s own, or the invoice\'s'),
  tax_amount: Decimal.describe('This line\'s tax, rounded per line, for reading: the invoice\'s tax is computed per rate (tax_breakdown)'),
  subtotal: Decimal.describe('quantity × unit price'),
  total: Decimal.describe('Net of the line\'s discount, plus its tax'),
  order: z.number().int(),
  formatted_unit_price: z.string(),
  formatted_total: z.string(),
})

export const PaymentView = z.object({
  id: z.uuid(),
  invoice: z.uuid(),
  amount: Decimal,
  payment_date: Day,
  payment_method: z.string(),
  reference_number: z.string(),
  notes: z.string(),
  is_reversed: z.boolean().describe('Reversed payments stay on record and count for nothing'),
})

export const InvoiceListItem = z.object({
  id: z.uuid(),
  invoice_number: z.string().nullable().describe('Given when the invoice is issued (first sent): INV-<year>-<n>, gap-free per organization; null on a draft'),
  invoice_title: z.string(),
  status: z.string().describe('Draft, Sent, Viewed, Partially_Paid, Paid, Cancelled, or Overdue (issued, unpaid, past its due date: from the clock)'),
  account: z.uuid().nullable(),
  account_name: z.string().nullable(),
  contact: z.uuid().nullable(),
  contact_name: z.string().nullable(),
  contact_erased: ContactErased,
  client_name: z.string(),
  client_email: z.string(),
  issue_date: Day,
  due_date: Day,
  total_amount: Decimal,
  amount_due: Decimal,
  amount_paid: Decimal,
  currency: z.string(),
  is_overdue: z.boolean(),
  line_items_count: z.number().int(),
  created_at: z.string(),
})

const Ref = z.object({ id: z.uuid(), name: z.string() }).nullable()

export const InvoiceDetailView = InvoiceListItem.omit({ account: true, contact: true }).extend({
  account: Ref,
  contact: ContactRef.nullable(),
  opportunity: z.object({ id: z.uuid(), name: z.string(), amount: z.string().nullable(), stage: z.string(), currency: z.string().nullable() }).nullable().describe('Null when none, or when the caller may not see the deal'),
  amount_credited: Decimal.describe("The credit notes' totals (/api/invoices/{id}/credit-notes/): amount_due is total_amount less this and amount_paid"),
  client_phone: z.string(),
  billing_address_line: z.string(),
  billing_city: z.string(),
  billing_state: z.string(),
  billing_postcode: z.string(),
  billing_country: z.string(),
  client_address_line: z.string(),
  client_city: z.string(),
  client_state: z.string(),
  client_postcode: z.string(),
  client_country: z.string(),
  subtotal: Decimal.describe('Σ of the lines\' nets (after their discounts)'),
  discount_type: z.string().nullable(),
  discount_value: Decimal,
  discount_amount: Decimal,
  tax_rate: Decimal,
  tax_amount: Decimal.describe('Σ over tax_breakdown'),
  tax_breakdown: z.array(z.object({ tax_rate: Decimal, taxable_amount: Decimal, tax_amount: Decimal })).describe('Per tax rate: its base (its lines\' nets less their share of the invoice discount) and its tax'),
  shipping_amount: Decimal,
  payment_terms: z.string(),
  sent_at: z.string().nullable(),
  paid_at: z.string().nullable(),
  cancelled_at: z.string().nullable(),
  reminder_enabled: z.boolean(),
  reminder_days_before: z.number().int(),
  reminder_days_after: z.number().int(),
  reminder_frequency: z.string(),
  public_link_enabled: z.boolean(),
  notes: z.string(),
  terms: z.string(),
  billing_period: z.string().nullable(),
  po_number: z.string().nullable(),
  line_items: z.array(LineItemView),
  payments: z.array(PaymentView).describe('The payments not reversed'),
  assigned_to: z.array(z.uuid()),
  teams: z.array(z.uuid()),
  created_by: z.uuid().nullable(),
  updated_at: z.string(),
  public_url: z.string().nullable().describe("The client's link (no sign-in), valid 90 days from this answer; null until the invoice is issued, or while its link is switched off"),
})

const personName = (row: InvoiceView) => (row.contact_first_name === null ? null : [row.contact_first_name, row.contact_last_name].filter(Boolean).join(' '))

export function invoiceListItem(row: InvoiceView): z.infer<typeof InvoiceListItem> {
  return {
    id: row.id, invoice_number: row.invoice_number, invoice_title: row.invoice_title, status: row.status,
    account: row.account, account_name: row.account_name, contact: row.contact, contact_name: personName(row), ...erasedMarkAs('contact_erased', row.contact_is_erased),
    client_name: row.client_name, client_email: row.client_email, issue_date: row.issue_date, due_date: row.due_date,
    total_amount: row.total_amount, amount_due: row.amount_due, amount_paid: row.amount_paid, currency: row.currency,
    is_overdue: row.is_overdue, line_items_count: row.line_items.length, created_at: row.created_at.toISOString(),
  }
}

export function lineItemView(line: LineItem, invoice: Pick<InvoiceView, 'tax_rate' | 'currency'>, productNames: ReadonlyMap<string, string>): z.infer<typeof LineItemView> {
  const amounts = lineAmounts(line, invoice.tax_rate)
  const { net: _net, ...shown } = amounts
  return { ...line, ...shown, product_name: line.product ? (productNames.get(line.product) ?? null) : null, formatted_unit_price: `${invoice.currency} ${line.unit_price}`, formatted_total: `${invoice.currency} ${amounts.total}` }
}

export const paymentView = (invoiceId: string, { payment_id, reversed, ...payment }: Payment): z.infer<typeof PaymentView> => ({ id: payment_id, invoice: invoiceId, ...payment, is_reversed: reversed })

export function invoiceDetail(row: InvoiceView, productNames: ReadonlyMap<string, string>, publicUrl: string | null): z.infer<typeof InvoiceDetailView> {
  const { account: _a, contact: _c, ...listed } = invoiceListItem(row)
  return {
    ...listed,
    account: row.account ? { id: row.account, name: row.account_name ?? '' } : null,
    contact: row.contact && row.contact_first_name !== null ? contactRef({ id: row.contact, first_name: row.contact_first_name, last_name: row.contact_last_name, email: row.contact_email, is_erased: row.contact_is_erased === true }) : null,
    opportunity: row.opportunity && row.opportunity_name !== null ? { id: row.opportunity, name: row.opportunity_name, amount: row.opportunity_amount, stage: row.opportunity_stage ?? '', currency: row.opportunity_currency } : null,
    amount_credited: row.amount_credited,
    client_phone: row.client_phone,
    billing_address_line: row.billing_address_line, billing_city: row.billing_city, billing_state: row.billing_state, billing_postcode: row.billing_postcode, billing_country: row.billing_country,
    client_address_line: row.client_address_line, client_city: row.client_city, client_state: row.client_state, client_postcode: row.client_postcode, client_country: row.client_country,
    subtotal: row.subtotal, discount_type: row.discount_type, discount_value: row.discount_value, discount_amount: row.discount_amount,
    tax_rate: row.tax_rate, tax_amount: row.tax_amount, tax_breakdown: row.tax_breakdown, shipping_amount: row.shipping_amount,
    payment_terms: row.payment_terms, sent_at: iso(row.sent_at), paid_at: iso(row.paid_at), cancelled_at: iso(row.cancelled_at),
    reminder_enabled: row.reminder_enabled, reminder_days_before: row.reminder_days_before, reminder_days_after: row.reminder_days_after, reminder_frequency: row.reminder_frequency,
    public_link_enabled: row.public_link_enabled, notes: row.notes, terms: row.terms, billing_period: row.billing_period, po_number: row.po_number,
    line_items: row.line_items.map((line) => lineItemView(line, row, productNames)),
    payments: row.payments.filter((p) => !p.reversed).map((p) => paymentView(row.id, p)),
    assigned_to: row.assigned_to, teams: row.teams, created_by: row.created_by, updated_at: row.updated_at.toISOString(),
    public_url: row.status !== 'Draft' && row.public_link_enabled ? publicUrl : null,
  }
}
