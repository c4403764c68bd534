import { invoiceAmounts } from '../../../commands/invoice/money.ts'
import { ValidationError } from '../../../errors.ts'
import type { OrganizationSettingsRow } from '../../../identity/organizations.ts'
import type { CreditNoteRow } from '../../../projections/invoice/credit-notes.ts'
import type { InvoiceView } from '../../../projections/invoice/queries.ts'
import { checkEn16931 } from './en16931-rules.ts'
import { ublDocument } from './ubl-document.ts'
import type { UblParty, UblSource } from './ubl-document.ts'
import { ublXml } from './ubl-xml.ts'

/** Who sells (the organization's company profile) and who buys (the invoice's client and billing address) in EN 16931's terms. */
const countryCode = (...candidates: (string | null)[]) => candidates.map((c) => (c ?? '').trim().toUpperCase()).find((c) => /^[A-Z]{2}$/.test(c)) ?? ''

function sellerOf(org: OrganizationSettingsRow): UblParty {
  return { name: org.company_name || org.name, street: org.address_line, city: org.city, postcode: org.postcode, subdivision: org.state, country: countryCode(org.country, org.default_country), taxId: org.tax_id, email: org.email }
}

function buyerOf(invoice: InvoiceView): UblParty {
  const billing = [invoice.billing_address_line, invoice.billing_city, invoice.billing_postcode].some((v) => v !== '')
  const [street, city, postcode, subdivision] = billing ? [invoice.billing_address_line, invoice.billing_city, invoice.billing_postcode, invoice.billing_state] : [invoice.client_address_line, invoice.client_city, invoice.client_postcode, invoice.client_state]
  return { name: invoice.client_name || invoice.account_name || '', street, city, postcode, subdivision, country: countryCode(invoice.billing_country, invoice.client_country), taxId: '', email: invoice.client_email || invoice.contact_email || '' }
}

const TERMS: Record<string, string> = { DUE_ON_RECEIPT: 'Due on receipt', NET_15: 'Net 15 days', NET_30: 'Net 30 days', NET_45: 'Net 45 days', NET_60: 'Net 60 days', CUSTOM: '' }

/** The XML, once the document keeps every rule checked (400 naming each broken rule: a missing country, say, is the organization's or the client's to fill in). */
function checkedXml(source: UblSource): string {
  const doc = ublDocument(source)
  const violations = checkEn16931(doc)
  if (violations.length) throw new ValidationError({ ubl: violations.map((v) => `${v.rule}: ${v.message}`) })
  return ublXml(doc)
}

/** An issued invoice as UBL 2.1 (EN 16931); a draft has no number and is no invoice yet (400). */
export function invoiceUblXml(invoice: InvoiceView, org: OrganizationSettingsRow): string {
  if (!invoice.invoice_number) throw new ValidationError('Only an issued invoice is exported: send it first.')
  const amounts = invoiceAmounts(invoice.line_items, invoice)
  const lines = invoice.line_items.map((line, i) => ({ ...line, ...amounts.lines[i]! }))
  return checkedXml({
    kind: 'Invoice', number: invoice.invoice_number, issueDate: invoice.issue_date, dueDate: invoice.due_date, paymentTerms: TERMS[invoice.payment_terms] ?? '', currency: invoice.currency, note: invoice.notes, buyerReference: invoice.po_number ?? '', precedingInvoice: null,
    seller: sellerOf(org), buyer: buyerOf(invoice), lines, tax_breakdown: amounts.tax_breakdown, shipping_amount: amounts.shipping_amount, paid: invoice.amount_paid,
  })
}

/** A credit note as UBL 2.1 (EN 16931): its lines and amounts as issued, naming its invoice. */
export function creditNoteUblXml(note: CreditNoteRow, invoice: InvoiceView, org: OrganizationSettingsRow): string {
  return checkedXml({
    kind: 'CreditNote', number: note.credit_note_number ?? '', issueDate: note.created_at.toISOString().slice(0, 10), dueDate: null, paymentTerms: '', currency: note.currency, note: note.reason, buyerReference: invoice.po_number ?? '', precedingInvoice: { number: invoice.invoice_number ?? '', issueDate: invoice.issue_date },
    seller: sellerOf(org), buyer: buyerOf(invoice), lines: note.lines, tax_breakdown: note.tax_breakdown, shipping_amount: note.shipping_amount, paid: '0.00',
  })
}
