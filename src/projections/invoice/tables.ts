import type { InvoiceFields, LineItem } from '../../commands/invoice/fields.ts'
import type { CreditTaken } from '../../commands/invoice/credit-notes.ts'
import type { Payment } from '../../commands/invoice/invoice.ts'
import type { TaxCategory } from '../../commands/invoice/money.ts'
import type { ProductFields } from '../../commands/invoice/product.ts'
import type { EstimateFields } from '../../commands/invoice/estimate.ts'
import type { RecurringFields } from '../../commands/invoice/recurring.ts'
import type { TemplateFields, TemplateLogo } from '../../commands/invoice/template.ts'
import type { NoteTablesOf } from '../kernel/note-tables.ts'

/**
 * The invoices read model: one row per invoice with its lines and payments (jsonb, in order), the
 * amounts computed from them (commands/invoice/money.ts; numeric columns, returned by pg as
 * strings) and its stored status (invoice.ts `statusOf`; Overdue is added by the queries from the
 * clock). Comments and attachments in the shared note tables. Products: one row per product.
 */
export type InvoiceRow = Omit<InvoiceFields, 'issue_date' | 'due_date'> & {
  id: string
  org_id: string
  invoice_number: string | null
  status: 'Draft' | 'Sent' | 'Viewed' | 'Partially_Paid' | 'Paid' | 'Cancelled'
  /** YYYY-MM-DD (read back as text). */
  issue_date: string
  due_date: string | null
  line_items: LineItem[]
  payments: Payment[]
  /** The credit notes issued against it: what each took off. */
  credit_notes: Pick<CreditTaken, 'credit_note_id' | 'total_amount'>[]
  subtotal: string
  discount_amount: string
  tax_amount: string
  tax_breakdown: TaxCategory[]
  total_amount: string
  amount_paid: string
  amount_credited: string
  amount_due: string
  duplicated_from: string | null
  created_by: string | null
  created_at: Date
  updated_at: Date
  sent_at: Date | null
  viewed_at: Date | null
  paid_at: Date | null
  cancelled_at: Date | null
}

export type EstimateRow = Omit<EstimateFields, 'expiry_date'> & {
  id: string
  org_id: string
  estimate_number: string | null
  status: 'Draft' | 'Sent' | 'Viewed' | 'Accepted' | 'Declined'
  expiry_date: string | null
  line_items: LineItem[]
  subtotal: string
  discount_amount: string
  tax_amount: string
  tax_breakdown: TaxCategory[]
  total_amount: string
  converted_to_invoice: string | null
  is_deleted: boolean
  created_by: string | null
  created_at: Date
  updated_at: Date
  sent_at: Date | null
  answered_at: Date | null
}

/** A schedule: its fields (dates as YYYY-MM-DD text), lines, one period's amounts, and the next period to generate. */
export type RecurringRow = RecurringFields & {
  id: string
  org_id: string
  line_items: LineItem[]
  subtotal: string
  total_amount: string
  is_active: boolean
  is_deleted: boolean
  next_period: number
  next_generation_date: string
  invoices_generated: number
  last_generated_at: Date | null
  created_by: string | null
  created_at: Date
  updated_at: Date
}

export type TemplateRow = TemplateFields & { id: string; org_id: string; logo: TemplateLogo | null; created_by: string | null; updated_by: string | null; created_at: Date; updated_at: Date }

export type ProductRow = ProductFields & { id: string; org_id: string; is_deleted: boolean; created_by: string | null; created_at: Date; updated_at: Date }

/** The list header's totals kept beside the rows (invoice-totals.ts): per status, unpaid due date and paid day; bigint and numeric columns come back as strings. */
export type InvoiceTotalsRow = { org_id: string; status: InvoiceRow['status']; due_date: string | null; paid_on: string | null; n: string; amount_due: string; total_amount: string; amount_paid: string }

export type InvoiceTables = { invoices: InvoiceRow; invoice_totals: InvoiceTotalsRow; estimates: EstimateRow; products: ProductRow; recurring_invoices: RecurringRow; invoice_templates: TemplateRow } & NoteTablesOf<'invoice'>

// This module's tables join the one Database type (db/database.ts).
declare module '../../db/database.ts' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging: the tables are the members
  interface Database extends InvoiceTables {}
}
