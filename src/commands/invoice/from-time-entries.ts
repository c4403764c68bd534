import { randomUUID } from 'node:crypto'
import { NotFoundError, ValidationError } from '../../errors.ts'
import type { Position } from '../../eventstore/event-store.ts'
import { accountOf } from '../../projections/account/accounts.ts'
import { caseOf } from '../../projections/case/queries.ts'
import { contactsOfAccount } from '../../projections/contact/contacts.ts'
import { timeEntryOf } from '../../projections/time-entry/time-entries.ts'
import type { TimeEntryRow } from '../../projections/time-entry/time-entries.ts'
import type { Caller } from '../caller.ts'
import { commandSession } from '../command-session.ts'
import type { CommandSession } from '../command-session.ts'
import { companion } from '../handle-command.ts'
import { timesheetDecider, timesheetStream } from '../time-entry/time-entry.ts'
import type { LineItemInput } from './fields.ts'
import { divRound, money } from './money.ts'
import { createInvoice, todayOf } from './write-invoice.ts'
import type { InvoiceDeps } from './write-invoice.ts'

/**
 * POST /api/invoices/from-time-entries/ (the original's InvoiceFromTimeEntriesView): a draft billed
 * to an account (and its first contact) with one line per billable, stopped time entry, in one
 * currency. The entries are marked billed in the same append as the invoice's creation (one
 * TimeEntryBilled per entry on its agent's timesheet, a companion of the creation): two
 * conversions of the same time read the same timesheet revision, one commits, and the other is
 * decided again on the billed entries and refused (400). So time is never billed twice, and no
 * failure leaves an invoice without its entries billed or entries billed by no invoice.
 */
export type TimeBilled = { id: string; currency: string; lineCount: number; entryIds: string[]; position: Position | null }

/** Hours to the hundredth (the line's quantity has two places, as the original's), half away from zero: 20 minutes bill 0.33 h. */
export const hoursOf = (minutes: number): string => money(divRound(BigInt(minutes) * 100n, 60n))

async function lineOf(deps: InvoiceDeps, orgId: string, entry: TimeEntryRow, order: number): Promise<LineItemInput> {
  const caseName = (await caseOf(deps.db, orgId, entry.case_id))?.name ?? 'Time entry'
  const text = entry.description.trim() ? `${caseName}, ${entry.description.trim()}` : caseName
  return { product: null, name: text.slice(0, 255), description: text.slice(0, 500), quantity: hoursOf(entry.duration_minutes), unit_price: entry.hourly_rate ?? '0.00', discount_type: null, discount_value: '0.00', tax_rate: null, order }
}

/** The entries the caller sees (their own; an admin the organization's), oldest first; 404 when one is not among them. */
async function entriesOf(deps: InvoiceDeps, caller: Caller, ids: readonly string[]): Promise<TimeEntryRow[]> {
  const rows = await Promise.all([...new Set(ids)].map((id) => timeEntryOf(deps.db, caller, id)))
  if (rows.some((row) => !row)) throw new NotFoundError('One or more time entries were not found.')
  return (rows as TimeEntryRow[]).sort((a, b) => a.started_at.getTime() - b.started_at.getTime() || a.id.localeCompare(b.id))
}

export async function invoiceFromTimeEntries(deps: InvoiceDeps, caller: Caller, input: { accountId: string; entryIds: readonly string[] }, session: CommandSession = commandSession(deps.store, caller)): Promise<TimeBilled> {
  const account = await accountOf(deps.db, caller.orgId, input.accountId)
  if (!account) throw new NotFoundError('Account not found.')
  const entries = await entriesOf(deps, caller, input.entryIds)
  const currencies = [...new Set(entries.map((e) => e.currency))].sort()
  if (currencies.length > 1) throw new ValidationError(`Cannot invoice entries in multiple currencies: ${currencies.join(', ')}.`)
  const contact = (await contactsOfAccount(deps.db, caller.orgId, account.id))[0]
  if (!contact) throw new ValidationError({ account_id: ['The account has no contact to bill.'] })
  const lines = await Promise.all(entries.map((entry, order) => lineOf(deps, caller.orgId, entry, order)))
  const id = randomUUID()
  const now = deps.clock()
  // The entries, as the lines were made of them, billed on each agent's timesheet with the creation; the timesheet decides whether they still may be.
  const agents = [...new Set(entries.map((entry) => entry.profile_id))]
  const also = agents.map((profileId) => [profileId, entries.filter((entry) => entry.profile_id === profileId)] as const).map(([profileId, own]) =>
    companion(timesheetDecider, timesheetStream(profileId), { type: 'BillTimeEntries', orgId: caller.orgId, invoiceId: id, billed: own.map((e) => ({ id: e.id, minutes: e.duration_minutes, hourlyRate: e.hourly_rate, currency: e.currency })), by: caller.profileId, at: now.toISOString() }),
  )
  const currency = currencies[0]!
  const fields = { invoice_title: `Time entries, ${todayOf(now)}`, account: account.id, contact: contact.id, currency }
  await createInvoice(deps, caller, { id, fields, lines, also }, session)
  return { id, currency, lineCount: lines.length, entryIds: entries.map((e) => e.id), position: session.position() }
}
