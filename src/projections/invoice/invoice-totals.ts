import { sql } from 'kysely'
import type { Db } from '../../db/database.ts'
import type { InvoiceRow } from './tables.ts'

/**
 * What the invoices read model keeps beside its rows so the list header's totals need no scan of an
 * organization's invoices (issue 33 performance): `invoice_totals`, per organization, how many
 * invoices and their sums of amount due, total and amount paid, grouped by what the totals tell
 * apart: the stored status, an unpaid one's due date (overdue and due this month are read from it
 * against the clock, so the rows hold for any day) and the day it was paid in full (paid this
 * quarter; the database session's day, as the scan compares `paid_at` in it). Each change of an
 * invoice moves the groups by its share after less its share before, so applying an event twice
 * moves nothing the second time, and a rebuild sums what the live rows hold. Rows that fall to zero stay.
 */
export async function createInvoiceTotalsTable(db: Db): Promise<void> {
  await sql`CREATE TABLE invoice_totals (org_id uuid NOT NULL, status text NOT NULL, due_date date, paid_on date, n bigint NOT NULL,
    amount_due numeric NOT NULL, total_amount numeric NOT NULL, amount_paid numeric NOT NULL,
    UNIQUE NULLS NOT DISTINCT (org_id, status, due_date, paid_on))`.execute(db)
}

export const INVOICE_TOTALS_TABLE = 'invoice_totals'

/** The statuses owing money (queries.ts `unpaidSql`): only theirs is read by due date. */
const UNPAID: readonly string[] = ['Sent', 'Viewed', 'Partially_Paid']

export type ShareRow = Pick<InvoiceRow, 'org_id' | 'status' | 'due_date' | 'paid_at' | 'amount_due' | 'total_amount' | 'amount_paid'>
type Share = ShareRow & { sign: 1 | -1 }

/** An invoice's share of the totals: its group and its amounts (a paid one's due date is not read, so not kept apart). */
const shareOf = (row: ShareRow) => ({ org_id: row.org_id, status: row.status, due_date: UNPAID.includes(row.status) ? row.due_date : null, paid_at: row.paid_at, amount_due: row.amount_due, total_amount: row.total_amount, amount_paid: row.amount_paid })

/** Moves the totals from an invoice's row before a change (none: a new one) to its row after, in one statement; nothing when its share is unchanged. */
export async function moveInvoiceTotals(db: Db, before: ShareRow | undefined, after: ShareRow): Promise<void> {
  const [from, to] = [before && shareOf(before), shareOf(after)]
  if (JSON.stringify(from) === JSON.stringify(to)) return
  const shares: Share[] = [...(from ? [{ ...from, sign: -1 as const }] : []), { ...to, sign: 1 }]
  await sql`INSERT INTO invoice_totals AS t
    SELECT org_id, status, due_date, paid_at::date, sum(sign), sum(sign * amount_due), sum(sign * total_amount), sum(sign * amount_paid)
    FROM jsonb_to_recordset(${JSON.stringify(shares)}::jsonb) AS s (org_id uuid, status text, due_date date, paid_at timestamptz, amount_due numeric, total_amount numeric, amount_paid numeric, sign integer)
    GROUP BY 1, 2, 3, 4
    ON CONFLICT (org_id, status, due_date, paid_on) DO UPDATE SET n = t.n + EXCLUDED.n, amount_due = t.amount_due + EXCLUDED.amount_due,
      total_amount = t.total_amount + EXCLUDED.total_amount, amount_paid = t.amount_paid + EXCLUDED.amount_paid`.execute(db)
}
