import type { DiscountType } from './money.ts'

/** An invoice's fields and the values they take (the original's Invoice, InvoiceLineItem and Payment models). */

/** The original's INVOICE_STATUS, exact strings. Overdue is derived from the clock, never stored; Pending is never reached (the original has no way into it either). */
export const INVOICE_STATUSES = ['Draft', 'Sent', 'Viewed', 'Paid', 'Partially_Paid', 'Overdue', 'Pending', 'Cancelled'] as const
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number]
/** Statuses where money is owed (the original's UNPAID_STATUSES): billed, not settled, not written off. */
export const UNPAID_STATUSES = ['Sent', 'Viewed', 'Partially_Paid', 'Overdue'] as const

export const PAYMENT_TERMS = ['DUE_ON_RECEIPT', 'NET_15', 'NET_30', 'NET_45', 'NET_60', 'CUSTOM'] as const
export type PaymentTerms = (typeof PAYMENT_TERMS)[number]
const TERM_DAYS: Record<Exclude<PaymentTerms, 'CUSTOM'>, number> = { DUE_ON_RECEIPT: 0, NET_15: 15, NET_30: 30, NET_45: 45, NET_60: 60 }

export const PAYMENT_METHODS = ['CASH', 'CHECK', 'CREDIT_CARD', 'BANK_TRANSFER', 'PAYPAL', 'STRIPE', 'OTHER'] as const
export type PaymentMethod = (typeof PAYMENT_METHODS)[number]
export const REMINDER_FREQUENCIES = ['ONCE', 'WEEKLY', 'CUSTOM'] as const

/** The fields whose change would change what is owed: frozen once the invoice is issued (corrections are credit notes). */
export const MONEY_FIELDS = ['currency', 'discount_type', 'discount_value', 'tax_rate', 'shipping_amount'] as const

export type InvoiceFields = {
  invoice_title: string
  account: string | null
  contact: string | null
  opportunity: string | null
  client_name: string
  client_email: string
  client_phone: string
  billing_address_line: string
  billing_city: string
  billing_state: string
  billing_postcode: string
  billing_country: string
  client_address_line: string
  client_city: string
  client_state: string
  client_postcode: string
  client_country: string
  currency: string
  discount_type: DiscountType | null
  /** Decimal strings with two places. */
  discount_value: string
  tax_rate: string
  shipping_amount: string
  /** YYYY-MM-DD. */
  issue_date: string
  due_date: string | null
  payment_terms: PaymentTerms
  reminder_enabled: boolean
  reminder_days_before: number
  reminder_days_after: number
  reminder_frequency: (typeof REMINDER_FREQUENCIES)[number]
  public_link_enabled: boolean
  notes: string
  terms: string
  billing_period: string | null
  po_number: string | null
  assigned_to: string[]
  teams: string[]
}

export const emptyInvoice = (issueDate: string): InvoiceFields => ({
  invoice_title: '', account: null, contact: null, opportunity: null, client_name: '', client_email: '', client_phone: '',
  billing_address_line: '', billing_city: '', billing_state: '', billing_postcode: '', billing_country: '',
  client_address_line: '', client_city: '', client_state: '', client_postcode: '', client_country: '',
  currency: 'USD', discount_type: null, discount_value: '0.00', tax_rate: '0.00', shipping_amount: '0.00',
  issue_date: issueDate, due_date: null, payment_terms: 'NET_30',
  reminder_enabled: true, reminder_days_before: 3, reminder_days_after: 7, reminder_frequency: 'ONCE', public_link_enabled: true,
  notes: '', terms: '', billing_period: null, po_number: null, assigned_to: [], teams: [],
})

export type LineItem = {
  id: string
  product: string | null
  name: string
  description: string
  quantity: string
  unit_price: string
  discount_type: DiscountType | null
  discount_value: string
  /** null: the invoice's tax rate applies to this line. */
  tax_rate: string | null
  order: number
}
export type LineItemInput = Omit<LineItem, 'id'>

export type PaymentData = { payment_id: string; amount: string; payment_date: string; payment_method: PaymentMethod; reference_number: string; notes: string }

/**
 * The due date the terms give from the issue date (the original's `calculate_due_date`), when none
 * was chosen. CUSTOM names no number of days: its due date is the one given, or none (the original
 * quietly took 30 days).
 */
export function dueDateOf(fields: Pick<InvoiceFields, 'issue_date' | 'due_date' | 'payment_terms'>): string | null {
  if (fields.due_date) return fields.due_date
  if (fields.payment_terms === 'CUSTOM') return null
  const day = new Date(`${fields.issue_date}T00:00:00Z`)
  day.setUTCDate(day.getUTCDate() + TERM_DAYS[fields.payment_terms])
  return day.toISOString().slice(0, 10)
}
