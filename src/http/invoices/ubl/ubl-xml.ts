import type { UblAllowanceCharge, UblDocument, UblParty, UblTaxCategory } from './ubl-document.ts'

/**
 * The UBL 2.1 syntax of an EN 16931 document (ubl-document.ts), in the schema's element order. A
 * tiny element tree and its writer stand in for an XML library: the document is written, never
 * read, and all text and attribute values pass through one escaping function. Optional business
 * terms without a value leave no element.
 */
type Element = { name: string; attrs?: Record<string, string>; text?: string; children?: (Element | null)[] }

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' }
/** Text and attribute values, escaped; characters XML 1.0 forbids (controls other than tab, newline and return) dropped. */
// eslint-disable-next-line no-control-regex -- the control characters are what is removed
export const escapeXml = (value: string): string => value.replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '').replace(/[&<>"']/g, (c) => ESCAPES[c]!)

function write(element: Element, indent: string): string {
  const attrs = Object.entries(element.attrs ?? {}).map(([key, value]) => ` ${key}="${escapeXml(value)}"`).join('')
  const children = (element.children ?? []).filter((child): child is Element => child !== null)
  if (children.length) return `${indent}<${element.name}${attrs}>\n${children.map((child) => write(child, `${indent}  `)).join('')}${indent}</${element.name}>\n`
  return `${indent}<${element.name}${attrs}>${escapeXml(element.text ?? '')}</${element.name}>\n`
}

const cbc = (name: string, text: string, attrs?: Record<string, string>): Element | null => (text === '' ? null : { name: `cbc:${name}`, text, ...(attrs && { attrs }) })
const cac = (name: string, ...children: (Element | null)[]): Element | null => (children.some((c) => c !== null) ? { name: `cac:${name}`, children } : null)

const vat = () => cac('TaxScheme', cbc('ID', 'VAT'))
const category = (name: string, c: UblTaxCategory) => cac(name, cbc('ID', c.code), cbc('Percent', c.rate), vat())

function party(p: UblParty): Element | null {
  // A VAT identifier starts with its country's code (BR-CO-9); any other tax number is a tax registration (BT-32).
  const isVat = /^[A-Z]{2}[0-9A-Za-z+*.]{2,}$/.test(p.taxId)
  return cac(
    'Party',
    cac('PostalAddress', cbc('StreetName', p.street), cbc('CityName', p.city), cbc('PostalZone', p.postcode), cbc('CountrySubentity', p.subdivision), cac('Country', cbc('IdentificationCode', p.country))),
    p.taxId ? cac('PartyTaxScheme', cbc('CompanyID', p.taxId), isVat ? vat() : cac('TaxScheme', cbc('ID', 'FC'))) : null,
    cac('PartyLegalEntity', cbc('RegistrationName', p.name)),
    cac('Contact', cbc('ElectronicMail', p.email)),
  )
}

export function ublXml(doc: UblDocument): string {
  const amount = (name: string, value: string) => cbc(name, value, { currencyID: doc.currency })
  // A line's allowance takes its line's tax category; only the document's name one.
  const allowanceCharge = (a: Omit<UblAllowanceCharge, 'category'> & { category?: UblTaxCategory }) => cac('AllowanceCharge', cbc('ChargeIndicator', String(a.charge)), cbc('AllowanceChargeReason', a.reason), amount('Amount', a.amount), a.category ? category('TaxCategory', a.category) : null)
  const invoice = doc.kind === 'Invoice'
  const root: Element = {
    name: doc.kind,
    attrs: { xmlns: `urn:oasis:names:specification:ubl:schema:xsd:${doc.kind}-2`, 'xmlns:cac': 'urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2', 'xmlns:cbc': 'urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2' },
    children: [
      cbc('CustomizationID', doc.customizationId),
      cbc('ID', doc.number),
      cbc('IssueDate', doc.issueDate),
      invoice ? cbc('DueDate', doc.dueDate ?? '') : null,
      cbc(invoice ? 'InvoiceTypeCode' : 'CreditNoteTypeCode', doc.typeCode),
      cbc('Note', doc.note),
      cbc('DocumentCurrencyCode', doc.currency),
      cbc('BuyerReference', doc.buyerReference),
      doc.precedingInvoice && cac('BillingReference', cac('InvoiceDocumentReference', cbc('ID', doc.precedingInvoice.number), cbc('IssueDate', doc.precedingInvoice.issueDate))),
      cac('AccountingSupplierParty', party(doc.seller)),
      cac('AccountingCustomerParty', party(doc.buyer)),
      cac('PaymentTerms', cbc('Note', doc.paymentTerms)),
      ...doc.allowanceCharges.map(allowanceCharge),
      cac('TaxTotal', amount('TaxAmount', doc.taxTotal), ...doc.taxSubtotals.map((s) => cac('TaxSubtotal', amount('TaxableAmount', s.taxable), amount('TaxAmount', s.tax), category('TaxCategory', s.category)))),
      cac('LegalMonetaryTotal', amount('LineExtensionAmount', doc.totals.lineExtension), amount('TaxExclusiveAmount', doc.totals.taxExclusive), amount('TaxInclusiveAmount', doc.totals.taxInclusive), amount('AllowanceTotalAmount', doc.totals.allowances), amount('ChargeTotalAmount', doc.totals.charges), amount('PrepaidAmount', doc.totals.prepaid), amount('PayableAmount', doc.totals.payable)),
      ...doc.lines.map((line) =>
        cac(
          invoice ? 'InvoiceLine' : 'CreditNoteLine',
          cbc('ID', line.id),
          cbc(invoice ? 'InvoicedQuantity' : 'CreditedQuantity', line.quantity, { unitCode: 'C62' }),
          amount('LineExtensionAmount', line.net),
          line.allowance === '0.00' ? null : allowanceCharge({ charge: false, amount: line.allowance, reason: 'Discount' }),
          cac('Item', cbc('Description', line.description), cbc('Name', line.name), category('ClassifiedTaxCategory', line.category)),
          cac('Price', amount('PriceAmount', line.price)),
        ),
      ),
    ],
  }
  return `<?xml version="1.0" encoding="UTF-8"?>\n${write(root, '')}`
}
