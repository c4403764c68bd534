import { sql } from 'kysely'
import { z } from 'zod'
import { PAYMENT_METHODS, PAYMENT_TERMS, REMINDER_FREQUENCIES } from '../commands/invoice/fields.ts'
import type { EstimateEvent } from '../commands/invoice/estimate.ts'
import type { InvoiceEvent } from '../commands/invoice/invoice.ts'
import { DISCOUNT_TYPES } from '../commands/invoice/money.ts'
import type { NumberEvent } from '../commands/invoice/number-sequence.ts'
import type { ProductEvent } from '../commands/invoice/product.ts'
import type { RecurringEvent } from '../commands/invoice/recurring.ts'
import { RECURRING_FREQUENCIES } from '../commands/invoice/recurring-schedule.ts'
import { createRecurringInvoicer } from '../processes/recurring-invoices.ts'
import { recurringProjector } from '../projections/invoice/recurring.ts'
import { templatesProjector } from '../projections/invoice/templates.ts'
import type { TemplateEvent } from '../commands/invoice/template.ts'
import { By, Day, Decimal, Id, Ids, at, changesOf, eventsOf, noPersonalData, noteDefinitions } from '../events/event-schemas.ts'
import { estimatesProjector } from '../projections/invoice/estimates.ts'
import { creditNotesProjector } from '../projections/invoice/credit-notes.ts'
import { invoicesProjector } from '../projections/invoice/invoices.ts'
import { productsProjector } from '../projections/invoice/products.ts'
import { created, noteReadings, updatedChanges } from '../projections/record/record-kinds.ts'
import type { ModuleManifest } from './manifest.ts'

// Invoices (invoice-<id>), their numbering (invoice_number-<org>-<year>), the product catalogue (product-<id>) and recurring invoices (recurring_invoice-<id>).
const invoiceShape = {
  invoice_title: z.string(),
  account: Id.nullable(),
  contact: Id.nullable(),
  opportunity: Id.nullable(),
  ...Object.fromEntries(['client_name', 'client_email', 'client_phone', 'billing_address_line', 'billing_city', 'billing_state', 'billing_postcode', 'billing_country', 'client_address_line', 'client_city', 'client_state', 'client_postcode', 'client_country'].map((key) => [key, z.string()])) as Record<'client_name' | 'client_email' | 'client_phone' | 'billing_address_line' | 'billing_city' | 'billing_state' | 'billing_postcode' | 'billing_country' | 'client_address_line' | 'client_city' | 'client_state' | 'client_postcode' | 'client_country', z.ZodString>,
  currency: z.string(),
  discount_type: z.enum(DISCOUNT_TYPES).nullable(),
  discount_value: Decimal,
  tax_rate: Decimal,
  shipping_amount: Decimal,
  issue_date: Day,
  due_date: Day.nullable(),
  payment_terms: z.enum(PAYMENT_TERMS),
  reminder_enabled: z.boolean(),
  reminder_days_before: z.number().int(),
  reminder_days_after: z.number().int(),
  reminder_frequency: z.enum(REMINDER_FREQUENCIES),
  public_link_enabled: z.boolean(),
  notes: z.string(),
  terms: z.string(),
  billing_period: z.string().nullable(),
  po_number: z.string().nullable(),
  assigned_to: Ids,
  teams: Ids,
}
/** A credit note's share of a category or line may be a cent below 0 where rounding moved a discount's share between categories. */
const SignedDecimal = z.string().regex(/^-?\d+\.\d{2}$/).describe('A decimal with two places, as a string; may be negative')
const allocation = { record_id: Id, number: z.string(), sequence: z.number().int().min(1), ...at }
const LineItem = z.strictObject({
  id: Id, product: Id.nullable(), name: z.string(), description: z.string(), quantity: Decimal, unit_price: Decimal,
  discount_type: z.enum(DISCOUNT_TYPES).nullable(), discount_value: Decimal, tax_rate: Decimal.nullable().describe("null: the invoice's rate"), order: z.number().int(),
})
const CreditNoteLine = z.strictObject({ line_id: Id, name: z.string(), description: z.string(), quantity: Decimal, unit_price: Decimal, tax_rate: Decimal, subtotal: SignedDecimal, discount_amount: SignedDecimal, net: SignedDecimal })
const creditAmounts = {
  ...Object.fromEntries(['subtotal', 'discount_amount', 'taxable_amount', 'tax_amount', 'shipping_amount', 'total_amount'].map((key) => [key, SignedDecimal])) as Record<'subtotal' | 'discount_amount' | 'taxable_amount' | 'tax_amount' | 'shipping_amount' | 'total_amount', typeof SignedDecimal>,
  tax_breakdown: z.array(z.strictObject({ tax_rate: Decimal, taxable_amount: SignedDecimal, tax_amount: SignedDecimal })),
}
const estimateShape = {
  title: z.string(),
  account: Id.nullable(),
  contact: Id.nullable(),
  opportunity: Id.nullable(),
  client_name: z.string(),
  client_email: z.string(),
  client_phone: z.string(),
  client_address_line: z.string(),
  client_city: z.string(),
  client_state: z.string(),
  client_postcode: z.string(),
  client_country: z.string(),
  currency: z.string(),
  discount_type: invoiceShape.discount_type,
  discount_value: Decimal,
  tax_rate: Decimal,
  issue_date: Day,
  expiry_date: Day.nullable(),
  public_link_enabled: z.boolean(),
  notes: z.string(),
  terms: z.string(),
  assigned_to: Ids,
  teams: Ids,
}
const respondent = { name: z.string(), email: z.string(), ip: z.string().nullable(), user_agent: z.string(), ...at }
const recurringShape = {
  title: z.string(),
  account: Id.nullable(),
  contact: Id.nullable(),
  opportunity: Id.nullable(),
  client_name: z.string(),
  client_email: z.string(),
  frequency: z.enum(RECURRING_FREQUENCIES),
  custom_days: z.number().int().nullable(),
  start_date: Day,
  end_date: Day.nullable(),
  payment_terms: z.enum(PAYMENT_TERMS),
  auto_send: z.boolean(),
  currency: z.string(),
  discount_type: invoiceShape.discount_type,
  discount_value: Decimal,
  tax_rate: Decimal,
  notes: z.string(),
  terms: z.string(),
  assigned_to: Ids,
  teams: Ids,
}
const byAt = { by: By, ...at }
const templateShape = { name: z.string(), primary_color: z.string(), secondary_color: z.string(), template_html: z.string(), template_css: z.string(), default_notes: z.string(), default_terms: z.string(), footer_text: z.string(), is_default: z.boolean() }
const templateChanges = Object.fromEntries(Object.entries(templateShape).map(([key, schema]) => [key, schema.optional()])) as { [K in keyof typeof templateShape]: z.ZodOptional<(typeof templateShape)[K]> }
const productShape = { name: z.string(), description: z.string().nullable(), sku: z.string().nullable(), price: Decimal, currency: z.string().nullable(), category: z.string().nullable(), is_active: z.boolean() }
const productChanges = Object.fromEntries(Object.entries(productShape).map(([key, schema]) => [key, schema.optional()])) as { [K in keyof typeof productShape]: z.ZodOptional<(typeof productShape)[K]> }

/** Invoices: drafts, issue with gap-free numbers, lines, payments and their reversals, cancellation; estimates and their conversion; the product catalogue; recurring invoices and the process that generates them; the reports. */
export const invoiceModule: ModuleManifest = {
  name: 'invoice',
  // Records of account: kept whole for the accounting retention law (GDPR Art. 17(3)(b)), so an
  // erasure leaves their client and billing details; a person's own data lives on their contact.
  events: noPersonalData(eventsOf<InvoiceEvent | EstimateEvent | NumberEvent | ProductEvent | RecurringEvent | TemplateEvent>()({
    InvoiceCreated: { stream: 'invoice', description: 'A draft invoice was created (or duplicated from another: `duplicated_from`): its fields and lines. Drafts have no number.', data: z.strictObject({ invoice_id: Id, org_id: Id, ...invoiceShape, line_items: z.array(LineItem), duplicated_from: Id.nullable(), created_by: By, ...at }) },
    InvoiceUpdated: { stream: 'invoice', description: "Fields of an invoice changed: only those, each before and after (an issued invoice's money fields never do).", data: z.strictObject({ changes: changesOf(invoiceShape), by: By, ...at }) },
    InvoiceLinesChanged: { stream: 'invoice', description: "A draft's lines changed: all of them as they now are, in order.", data: z.strictObject({ line_items: z.array(LineItem), by: By, ...at }) },
    InvoiceIssued: { stream: 'invoice', description: 'The invoice was sent for the first time: issued, its total fixed from here on (its number is the InvoiceNumberAllocated of the same append).', data: z.strictObject({ total_amount: Decimal, by: By, ...at }) },
    InvoiceViewed: { stream: 'invoice', description: 'The client first opened the invoice through its public link: Sent became Viewed.', data: z.strictObject(at) },
    InvoiceResent: { stream: 'invoice', description: 'An issued invoice was sent again.', data: z.strictObject({ by: By, ...at }) },
    InvoicePaymentRecorded: { stream: 'invoice', description: 'A payment was recorded against the invoice.', data: z.strictObject({ payment_id: Id, amount: Decimal, payment_date: Day, payment_method: z.enum(PAYMENT_METHODS), reference_number: z.string(), notes: z.string(), by: By, ...at }) },
    InvoicePaymentReversed: { stream: 'invoice', description: 'A payment was reversed: it stays on record and counts for nothing.', data: z.strictObject({ payment_id: Id, by: By, ...at }) },
    CreditNoteIssued: { stream: 'invoice', description: "A credit note corrected the issued invoice: the quantities of its lines it credits, and its amounts (the invoice's billing before it less after it, in the EN 16931 order); its number is the CreditNoteNumberAllocated of the same append. The amount due falls by its total.", data: z.strictObject({ credit_note_id: Id, org_id: Id, currency: z.string(), reason: z.string(), lines: z.array(CreditNoteLine), ...creditAmounts, by: By, ...at }) },
    InvoiceCancelled: { stream: 'invoice', description: 'The invoice was cancelled (void).', data: z.strictObject({ by: By, ...at }) },
    ...noteDefinitions('Invoice', 'invoice', 'invoice'),
    EstimateCreated: { stream: 'estimate', description: 'An estimate was created: its fields and lines (its number is the EstimateNumberAllocated of the same append).', data: z.strictObject({ estimate_id: Id, org_id: Id, ...estimateShape, line_items: z.array(LineItem), created_by: By, ...at }) },
    EstimateUpdated: { stream: 'estimate', description: 'Fields of an estimate changed: only those, each before and after.', data: z.strictObject({ changes: changesOf(estimateShape), by: By, ...at }) },
    EstimateLinesChanged: { stream: 'estimate', description: "An estimate's lines changed: all of them as they now are.", data: z.strictObject({ line_items: z.array(LineItem), by: By, ...at }) },
    EstimateSent: { stream: 'estimate', description: 'An estimate was sent to its client.', data: z.strictObject({ by: By, ...at }) },
    EstimateViewed: { stream: 'estimate', description: 'The client first opened the estimate through its public link: Sent became Viewed.', data: z.strictObject(at) },
    EstimateAccepted: { stream: 'estimate', description: 'The client accepted the estimate (through its public link): who, from where.', data: z.strictObject(respondent) },
    EstimateDeclined: { stream: 'estimate', description: 'The client declined the estimate (through its public link): who, from where.', data: z.strictObject(respondent) },
    EstimateConverted: { stream: 'estimate', description: 'The estimate became an invoice (`invoice_id`), whose InvoiceCreated is in the same append.', data: z.strictObject({ invoice_id: Id, by: By, ...at }) },
    EstimateDeleted: { stream: 'estimate', description: 'An estimate was (soft) deleted.', data: z.strictObject({ by: By, ...at }) },
    InvoiceNumberAllocated: { stream: 'invoice_number', description: "The organization's next invoice number of the year (its `sequence`-th) was given to an invoice (`record_id`), in the same append as its InvoiceIssued.", data: z.strictObject(allocation) },
    EstimateNumberAllocated: { stream: 'invoice_number', description: "The organization's next estimate number of the year (its `sequence`-th) was given to an estimate (`record_id`), in the same append as its EstimateCreated.", data: z.strictObject(allocation) },
    CreditNoteNumberAllocated: { stream: 'invoice_number', description: "The organization's next credit note number of the year (its `sequence`-th, a series of its own) was given to a credit note (`record_id`), in the same append as its CreditNoteIssued.", data: z.strictObject(allocation) },
    RecurringInvoiceCreated: { stream: 'recurring_invoice', description: 'A recurring invoice (a schedule) was created: its fields, lines, and the first period it generates (`next_period`: periods dated before its creation day are not billed).', data: z.strictObject({ recurring_id: Id, org_id: Id, ...recurringShape, line_items: z.array(LineItem), next_period: z.number().int().min(0), created_by: By, ...at }) },
    RecurringInvoiceUpdated: { stream: 'recurring_invoice', description: 'Fields of a recurring invoice changed: only those, each before and after.', data: z.strictObject({ changes: changesOf(recurringShape), ...byAt }) },
    RecurringInvoiceLinesChanged: { stream: 'recurring_invoice', description: "A recurring invoice's lines changed: all of them as they now are.", data: z.strictObject({ line_items: z.array(LineItem), ...byAt }) },
    RecurringInvoicePaused: { stream: 'recurring_invoice', description: 'The schedule was paused (`toggle/`): no period is generated until it resumes.', data: z.strictObject(byAt) },
    RecurringInvoiceResumed: { stream: 'recurring_invoice', description: 'The schedule resumed (`toggle/`) at `next_period`, its first period dated on or after that day: the periods the pause covered are not billed.', data: z.strictObject({ next_period: z.number().int().min(0), ...byAt }) },
    RecurringInvoiceDeleted: { stream: 'recurring_invoice', description: 'The schedule was deleted; the invoices it generated stay.', data: z.strictObject(byAt) },
    RecurringInvoiceGenerated: { stream: 'recurring_invoice', description: 'Period `period` (dated `period_date`) generated the draft `invoice_id`, whose InvoiceCreated is in the same append; the id is derived from the schedule and the period, so no period makes two.', data: z.strictObject({ period: z.number().int().min(0), period_date: Day, invoice_id: Id, ...at }) },
    RecurringInvoiceCaughtUp: { stream: 'recurring_invoice', description: 'One run generated several periods (`first_period`..`last_period`): `missed` of them were due before this run (the process was down).', data: z.strictObject({ first_period: z.number().int().min(0), last_period: z.number().int().min(0), missed: z.number().int().min(1), ...at }) },
    InvoiceTemplateCreated: { stream: 'invoice_template', description: 'An invoice template was added: its colours, markup, defaults and footer; `is_default` unsets the organization\'s previous default.', data: z.strictObject({ template_id: Id, org_id: Id, ...templateShape, created_by: By, ...at }) },
    InvoiceTemplateUpdated: { stream: 'invoice_template', description: 'Fields of a template changed: only the new values (`is_default: true` unsets the previous default).', data: z.strictObject({ ...templateChanges, ...byAt }) },
    InvoiceTemplateLogoSet: { stream: 'invoice_template', description: "The template's logo was uploaded (a new one replaces the last): the file store's key, the client's file name, the type sniffed from its bytes (PNG, JPEG, GIF or WebP) and its size in bytes.", data: z.strictObject({ storage_key: z.string(), file_name: z.string(), content_type: z.string(), size: z.number().int().min(0), ...byAt }) },
    InvoiceTemplateDeleted: { stream: 'invoice_template', description: 'A template was deleted.', data: z.strictObject(byAt) },
    ProductCreated: { stream: 'product', description: 'A product was added to the catalogue.', data: z.strictObject({ product_id: Id, org_id: Id, ...productShape, created_by: By, ...at }) },
    ProductUpdated: { stream: 'product', description: 'Fields of a product changed: only the new values.', data: z.strictObject({ ...productChanges, ...at }) },
    ProductDeleted: { stream: 'product', description: 'A product was deleted from the catalogue (invoices keep their lines).', data: z.strictObject(at) },
  })),
  routes: async (deps, files) => {
    const { invoiceRoutes } = await import('../http/invoices/invoices.ts')
    const { productRoutes } = await import('../http/invoices/products.ts')
    const { estimateRoutes } = await import('../http/invoices/estimates.ts')
    const { publicLinkRoutes } = await import('../http/invoices/public-links.ts')
    const { invoiceReportRoutes } = await import('../http/invoices/reports.ts')
    const { recurringRoutes } = await import('../http/invoices/recurring.ts')
    const { templateRoutes } = await import('../http/invoices/templates.ts')
    const { creditNoteRoutes } = await import('../http/invoices/credit-notes.ts')
    const { fromTimeEntriesRoutes } = await import('../http/invoices/from-time-entries.ts')
    const { pdfRoutes } = await import('../http/invoices/pdf/pdf-routes.ts')
    return [productRoutes(deps), estimateRoutes(deps, files), invoiceReportRoutes(deps), recurringRoutes(deps), templateRoutes(deps, files), fromTimeEntriesRoutes(deps), creditNoteRoutes(deps), invoiceRoutes(deps, files), publicLinkRoutes(deps), pdfRoutes(deps, files)]
  },
  projectors: [invoicesProjector, estimatesProjector, productsProjector, recurringProjector, templatesProjector, creditNotesProjector],
  // Recurring invoices are generated on the cadence of the other time-driven work (the due notifier's).
  processes: [({ config, ...deps }) => createRecurringInvoicer({ ...deps, intervalMs: config.dueNotifyIntervalMs })],
  record: {
    entityType: 'Invoice',
    version: 2,
    table: 'invoices',
    name: sql<string>`coalesce(r.invoice_number || ' ' || r.invoice_title, r.invoice_title)`,
    page: '/invoices',
    noun: 'invoice',
    activity: {
      InvoiceCreated: created,
      InvoiceUpdated: updatedChanges,
      InvoiceLinesChanged: { action: 'UPDATE', describe: () => 'Changed the lines' },
      InvoiceIssued: { action: 'UPDATE', describe: (data) => `Sent the invoice (${String(data.total_amount)})` },
      InvoiceResent: { action: 'UPDATE', describe: () => 'Sent the invoice again' },
      InvoiceViewed: { action: 'UPDATE', describe: () => 'The client opened the invoice' },
      InvoicePaymentRecorded: { action: 'UPDATE', describe: (data) => `Recorded a payment of ${String(data.amount)}` },
      InvoicePaymentReversed: { action: 'UPDATE', describe: () => 'Reversed a payment' },
      InvoiceCancelled: { action: 'UPDATE', describe: () => 'Cancelled the invoice' },
      CreditNoteIssued: { action: 'UPDATE', describe: (data) => `Issued a credit note (${String(data.total_amount)})` },
      ...noteReadings('Invoice'),
    },
    notifiedBy: { created: 'InvoiceCreated', updated: 'InvoiceUpdated', commented: 'InvoiceCommentAdded' },
  },
  idKinds: [
    [/^\/api\/invoices\/products\/\{id\}/, 'product'],
    [/^\/api\/invoices\/estimates\/\{id\}/, 'estimate'],
    [/^\/api\/invoices\/recurring\/\{id\}/, 'recurringInvoice'],
    [/^\/api\/invoices\/templates\/\{id\}/, 'invoiceTemplate'],
    [/^\/api\/invoices\/comments\/\{id\}/, 'invoiceComment'],
    [/^\/api\/invoices\/attachments\/\{id\}/, 'invoiceAttachment'],
    [/^\/api\/invoices\/credit-notes\/\{id\}/, 'creditNote'],
    [/^\/api\/invoices\/\{invoice_id\}\/line-items\/\{id\}/, 'invoiceLineItem'],
    [/^\/api\/invoices\/\{invoice_id\}\/payments\/\{id\}/, 'invoicePayment'],
    [/^\/api\/invoices\/\{id\}/, 'invoice'],
  ],
  idParams: { invoice_id: 'invoice' },
}
