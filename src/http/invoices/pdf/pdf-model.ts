import type { LineItem } from '../../../commands/invoice/fields.ts'
import { lineAmounts } from '../../../commands/invoice/money.ts'
import type { TaxCategory } from '../../../commands/invoice/money.ts'
import { emptyTemplate } from '../../../commands/invoice/template.ts'
import type { TemplateFields } from '../../../commands/invoice/template.ts'
import type { OrganizationSettingsRow } from '../../../identity/organizations.ts'
import type { EstimateView } from '../../../projections/invoice/estimates.ts'
import type { InvoiceView } from '../../../projections/invoice/queries.ts'

/**
 * What an invoice or estimate PDF shows, decided apart from how it is drawn (render-pdf.ts): the
 * seller (the organization's company profile), the client, the document's facts, its lines with
 * their nets, the tax per category, the totals and (for an invoice) its payment status and
 * payments. Amounts stay the read model's exact decimal strings; only the renderer formats them.
 * The template is the organization's default one (as the original's estimates; neither client
 * picks a template per invoice): its colours, its footer, and its default notes and terms where
 * the document has none. Its HTML and CSS are not rendered: the layout is drawn, and no
 * organization-authored markup reaches a renderer that could fetch files or hosts.
 */
export type PdfLine = { name: string; description: string; quantity: string; unitPrice: string; discount: string; taxRate: string; net: string }
export type PdfTotal = { label: string; amount: string; strong?: boolean }
/** No reference number: the public links do not show those either (public-links.ts), and the client receives this document. */
export type PdfPayment = { date: string; method: string; amount: string }
export type PdfModel = {
  heading: 'INVOICE' | 'ESTIMATE'
  /** The document's name: its Info title, the mail's attachment. */
  title: string
  fileName: string
  /** The time of the document's last event: the PDF's creation date, so the same facts give the same bytes. */
  createdAt: Date
  /** The default template's logo, a PNG or a JPEG (the formats a PDF draws): top left, above the seller. */
  logo?: Buffer
  colors: { primary: string; secondary: string }
  seller: string[]
  buyer: string[]
  facts: [string, string][]
  status: string
  currency: string
  lines: PdfLine[]
  taxes: TaxCategory[]
  totals: PdfTotal[]
  payments: PdfPayment[]
  notes: string
  terms: string
  footer: string[]
}

export type Seller = Pick<OrganizationSettingsRow, 'name' | 'company_name' | 'address_line' | 'city' | 'state' | 'postcode' | 'country' | 'phone' | 'email' | 'website' | 'tax_id'>
export type Template = Pick<TemplateFields, 'primary_color' | 'secondary_color' | 'default_notes' | 'default_terms' | 'footer_text'>

const present = (lines: (string | null | undefined | false)[]): string[] => lines.filter((line): line is string => typeof line === 'string' && line.trim() !== '')
const place = (city: string | null, state: string | null, postcode: string | null) => present([[city, state].filter(Boolean).join(', '), postcode ?? '']).join(' ')
const nonZero = (amount: string) => amount !== '0.00'
const label = (value: string) => value.replaceAll('_', ' ').toLowerCase().replace(/^./, (first) => first.toUpperCase())

const address = (line: string | null, city: string | null, state: string | null, postcode: string | null, country: string | null) => present([line, place(city, state, postcode), country])

/** The client's address, else the billing address: one or the other whole, never a mix of the two. */
function invoiceAddress(row: InvoiceView): string[] {
  const client = address(row.client_address_line, row.client_city, row.client_state, row.client_postcode, row.client_country)
  return client.length ? client : address(row.billing_address_line, row.billing_city, row.billing_state, row.billing_postcode, row.billing_country)
}

function sellerLines(org: Seller): string[] {
  return present([org.company_name || org.name, ...address(org.address_line, org.city, org.state, org.postcode, org.country), org.phone && `Tel: ${org.phone}`, org.email, org.website, org.tax_id && `Tax ID: ${org.tax_id}`])
}

function pdfLines(lines: readonly LineItem[], documentRate: string): PdfLine[] {
  return lines.map((line) => {
    const amounts = lineAmounts(line, documentRate)
    return { name: line.name || line.description, description: line.name ? line.description : '', quantity: line.quantity, unitPrice: line.unit_price, discount: amounts.discount_amount, taxRate: amounts.tax_rate, net: amounts.net }
  })
}

type Shared = Pick<PdfModel, 'colors' | 'seller' | 'currency' | 'lines' | 'taxes' | 'notes' | 'terms' | 'footer' | 'createdAt'>

function shared(row: InvoiceView | EstimateView, org: Seller, template: Template | undefined): Shared {
  const look = template ?? emptyTemplate
  return {
    colors: { primary: look.primary_color, secondary: look.secondary_color },
    seller: sellerLines(org),
    currency: row.currency,
    lines: pdfLines(row.line_items, row.tax_rate),
    taxes: row.tax_breakdown,
    notes: row.notes || look.default_notes,
    terms: row.terms || look.default_terms,
    footer: present([look.footer_text]),
    createdAt: row.updated_at,
  }
}

/** "1234567.50" in EUR → "EUR 1,234,567.50": grouping on the decimal string itself, never through a float. */
export function formatMoney(currency: string, amount: string): string {
  const match = /^(-?)(\d+)(\.\d+)?$/.exec(amount)
  if (!match) return `${currency} ${amount}`
  return `${match[1]}${currency} ${match[2]!.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}${match[3] ?? ''}`
}

/** What is paid and what is due, in words: the invoice's payment status as of today. */
function paymentStatus(row: InvoiceView): string {
  const money = (amount: string) => formatMoney(row.currency, amount)
  switch (row.status) {
    case 'Draft': return 'Draft: not issued, no number yet'
    case 'Cancelled': return 'Cancelled: nothing is due'
    case 'Paid': return `Paid in full (${money(row.amount_paid)})`
    case 'Partially_Paid': return `Partially paid: ${money(row.amount_paid)} paid, ${money(row.amount_due)} due`
    default: return `${row.is_overdue ? 'Overdue' : 'Unpaid'}: ${money(row.amount_due)} due${row.due_date ? ` by ${row.due_date}` : ''}`
  }
}

export function invoicePdfModel(row: InvoiceView, org: Seller, template: Template | undefined): PdfModel {
  const name = row.invoice_number ?? 'draft'
  return {
    heading: 'INVOICE',
    title: `Invoice ${name}`,
    fileName: `Invoice_${row.invoice_number ?? `draft-${row.id.slice(0, 8)}`}.pdf`,
    ...shared(row, org, template),
    buyer: present([row.client_name || row.account_name, ...invoiceAddress(row), row.client_email, row.client_phone]),
    facts: [
      ['Invoice #', row.invoice_number ?? 'Draft'],
      ...(row.invoice_title ? [['Reference', row.invoice_title] as [string, string]] : []),
      ...(row.po_number ? [['PO number', row.po_number] as [string, string]] : []),
      ...(row.billing_period ? [['Billing period', row.billing_period] as [string, string]] : []),
      ['Terms', label(row.payment_terms)],
      ['Issue date', row.issue_date],
      ...(row.due_date ? [['Due date', row.due_date] as [string, string]] : []),
    ],
    status: paymentStatus(row),
    totals: [
      { label: 'Subtotal', amount: row.subtotal },
      ...(nonZero(row.discount_amount) ? [{ label: 'Discount', amount: `-${row.discount_amount}` }] : []),
      { label: 'Tax', amount: row.tax_amount },
      ...(nonZero(row.shipping_amount) ? [{ label: 'Shipping', amount: row.shipping_amount }] : []),
      { label: 'Total', amount: row.total_amount, strong: true },
      { label: 'Amount paid', amount: row.amount_paid },
      { label: 'Amount due', amount: row.amount_due, strong: true },
    ],
    payments: row.payments.filter((payment) => !payment.reversed).map((payment) => ({ date: payment.payment_date, method: label(payment.payment_method), amount: payment.amount })),
  }
}

export function estimatePdfModel(row: EstimateView, org: Seller, template: Template | undefined): PdfModel {
  const name = row.estimate_number ?? 'draft'
  return {
    heading: 'ESTIMATE',
    title: `Estimate ${name}`,
    fileName: `Estimate_${row.estimate_number ?? `draft-${row.id.slice(0, 8)}`}.pdf`,
    ...shared(row, org, template),
    buyer: present([row.client_name || row.account_name, ...address(row.client_address_line, row.client_city, row.client_state, row.client_postcode, row.client_country), row.client_email, row.client_phone]),
    facts: [
      ['Estimate #', row.estimate_number ?? 'Draft'],
      ...(row.title ? [['Reference', row.title] as [string, string]] : []),
      ['Issue date', row.issue_date],
      ...(row.expiry_date ? [['Valid until', row.expiry_date] as [string, string]] : []),
      ['Status', label(row.status)],
    ],
    status: row.invoice_number ? `${label(row.status)}: invoiced as ${row.invoice_number}` : label(row.status),
    totals: [
      { label: 'Subtotal', amount: row.subtotal },
      ...(nonZero(row.discount_amount) ? [{ label: 'Discount', amount: `-${row.discount_amount}` }] : []),
      { label: 'Tax', amount: row.tax_amount },
      { label: 'Total', amount: row.total_amount, strong: true },
    ],
    payments: [],
  }
}
