import { z } from 'zod'
import type { LineItemInput } from '../../commands/invoice/fields.ts'
import { todayOf } from '../../commands/invoice/write-invoice.ts'
import { INVOICE_STATUSES, PAYMENT_METHODS, PAYMENT_TERMS, REMINDER_FREQUENCIES } from '../../commands/invoice/fields.ts'
import { DISCOUNT_TYPES, cents } from '../../commands/invoice/money.ts'
import { isCurrency } from '../../identity/organizations.ts'
import { isIsoDate } from '../../db/date-range.ts'
import { RelationList, blankable } from '../accounts/schemas.ts'
import { IdFilter } from '../kernel/relations.ts'
import { PageQuery } from '../kernel/schemas/common.ts'
import { formBoolean, formNumber } from '../kernel/schemas/form-values.ts'
import { Amount } from '../opportunities/schemas.ts'

/** Request bodies and filters of /api/invoices/ (the original's InvoiceCreateSerializer, InvoiceLineItemCreateSerializer, PaymentCreateSerializer). */

const text = (max: number) => z.preprocess((v) => (v === null ? '' : v), z.string().trim().max(max)).optional()
const day = z.iso.date('Expected a date, YYYY-MM-DD.').refine(isIsoDate, 'Expected a real date, YYYY-MM-DD.')
/** A non-negative decimal with at most 2 places and `digits` before the point (the original's DecimalFields), from a JSON number or string, kept exact. */
const Money = (what: string, digits = 10) =>
  Amount.refine((v) => v.split('.')[0]!.length <= digits, `Expected at most ${digits} digits before the point.`).describe(`${what}: a non-negative decimal (string or number), at most ${digits} digits and 2 places; answered as a string with 2 decimals`)
const Rate = Amount.refine((v) => cents(v) <= 10_000n, 'Expected a rate from 0 to 100.')
const Discount = blankable(z.enum(DISCOUNT_TYPES)).describe('PERCENTAGE or FIXED; blank or null for none')

export const LineItemBody = z.object({
  product: blankable(z.uuid()).describe('A product of this organization\'s catalogue (optional: a line may be free text)'),
  name: text(255).describe('The line\'s own text; the product\'s name when blank'),
  description: text(500),
  quantity: Money('Quantity', 8).refine((v) => v !== '0.00', 'Expected a quantity above 0.').optional().describe('Default 1'),
  unit_price: Money('Unit price').optional().describe('Default 0'),
  discount_type: Discount,
  discount_value: Money('The line\'s discount: a percentage (0 to 100) or an amount').optional(),
  tax_rate: blankable(Rate).describe('The line\'s tax rate in percent; null or blank for the invoice\'s rate'),
  order: formNumber(z.number().int().min(0)).optional().describe('Position among the lines; defaults to the order sent'),
})

export const InvoiceBody = z
  .object({
    invoice_title: text(100).describe('Required when creating'),
    status: z.string().optional().describe('Ignored, as by the original: the status follows the lifecycle (send, payments, cancel)'),
    account_id: z.uuid().optional().describe('Required when creating: an account of this organization (who pays)'),
    contact_id: z.uuid().optional().describe('Required when creating: the "bill to" contact, not one of another account'),
    opportunity_id: blankable(z.uuid()).describe('A deal of this organization the caller may see'),
    template_id: blankable(z.uuid()).describe('Invoice templates are not built yet: only null is accepted'),
    client_name: text(255),
    client_email: z.preprocess((v) => (v === null ? '' : v), z.union([z.literal(''), z.email('Enter a valid email address.').max(254)])).optional(),
    client_phone: text(25),
    billing_address_line: text(255),
    billing_city: text(100),
    billing_state: text(100),
    billing_postcode: text(20),
    billing_country: text(3),
    client_address_line: text(255),
    client_city: text(100),
    client_state: text(100),
    client_postcode: text(20),
    client_country: text(3),
    discount_type: Discount,
    discount_value: Money('The invoice\'s discount: a percentage (0 to 100) or an amount').optional(),
    tax_rate: Rate.optional().describe('Percent, for lines without their own rate'),
    shipping_amount: Money('Shipping, charged after tax').optional(),
    currency: z.string().trim().toUpperCase().refine(isCurrency, 'Expected an ISO 4217 currency code, such as "USD".').optional().describe('Default USD'),
    issue_date: day.optional().describe('Default today'),
    due_date: blankable(day).describe('Default: the issue date plus the payment terms\' days (none for CUSTOM)'),
    payment_terms: z.enum(PAYMENT_TERMS).optional().describe('Default NET_30'),
    reminder_enabled: formBoolean(z.boolean()).optional(),
    reminder_days_before: formNumber(z.number().int().min(0).max(365)).optional(),
    reminder_days_after: formNumber(z.number().int().min(0).max(365)).optional(),
    reminder_frequency: z.enum(REMINDER_FREQUENCIES).optional(),
    public_link_enabled: formBoolean(z.boolean()).optional(),
    notes: text(10_000),
    terms: text(10_000),
    billing_period: blankable(z.string().trim().max(100)),
    po_number: blankable(z.string().trim().max(100)),
    line_items: z.array(LineItemBody).max(500).optional().describe('The lines, as a whole: on PUT they replace the current ones (a draft\'s only)'),
    assigned_to: RelationList('active profiles').optional(),
    teams: RelationList('teams').optional(),
    custom_fields: z.record(z.string(), z.unknown()).refine((v) => Object.keys(v).length === 0, 'Custom fields for invoices are not available yet.').optional(),
  })
  .describe('PUT is partial, as the original\'s: only the fields sent change. Once the invoice is issued, its lines and money fields are refused (400); once paid or cancelled, every change is.')

export const PaymentBody = z.object({
  amount: Money('Amount').optional().describe('Default: all that is due'),
  payment_date: day.optional().describe('Default today'),
  payment_method: z.enum(PAYMENT_METHODS).optional().describe('Default OTHER'),
  reference_number: text(100),
  notes: text(10_000),
})

const Text = z.string().optional()
export const InvoiceListQuery = PageQuery.extend({
  search: Text.describe('Case-insensitive contains on the title, number, client name or client email'),
  status: z.enum(INVOICE_STATUSES).optional().describe('The status as of today (Overdue: issued, unpaid, past its due date)'),
  account: IdFilter('invoices billed to an account'),
  contact: IdFilter('invoices of a contact'),
  opportunity: IdFilter('invoices of a deal'),
  assigned_to: IdFilter('invoices assigned to a profile'),
  created_by: IdFilter('invoices a profile created'),
  issue_date_gte: Text.describe('YYYY-MM-DD, inclusive (single underscore, as the original)'),
  issue_date_lte: Text.describe('YYYY-MM-DD, inclusive'),
  due_date_gte: Text.describe('YYYY-MM-DD, inclusive'),
  due_date_lte: Text.describe('YYYY-MM-DD, inclusive'),
  sort: z.enum(['created_at', 'due_date', 'issue_date', 'total_amount', 'status', '-created_at', '-due_date', '-issue_date', '-total_amount', '-status']).optional().describe('Default -created_at (newest first)'),
})

export const InvoiceParams = z.object({ invoice_id: z.uuid() })
export const InvoiceItemParams = z.object({ invoice_id: z.uuid(), id: z.uuid() })

/** A body line as the use cases take it, with the original's defaults. */
export const lineInputOf = (line: z.infer<typeof LineItemBody>, index: number): LineItemInput => ({
  product: line.product ?? null, name: line.name ?? '', description: line.description ?? '', quantity: line.quantity ?? '1.00', unit_price: line.unit_price ?? '0.00',
  discount_type: line.discount_type ?? null, discount_value: line.discount_value ?? '0.00', tax_rate: line.tax_rate ?? null, order: line.order ?? index,
})

/** A payment body as the use case takes it, with the original's defaults (today, OTHER). */
export const paymentOf = (body: z.infer<typeof PaymentBody>, now: Date) => ({ amount: body.amount, payment_date: body.payment_date ?? todayOf(now), payment_method: body.payment_method ?? ('OTHER' as const), reference_number: body.reference_number ?? '', notes: body.notes ?? '' })

