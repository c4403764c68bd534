import { randomUUID } from 'node:crypto'
import type { Deps } from '../../deps.ts'
import { ForbiddenError, NotFoundError } from '../../errors.ts'
import { decodeEvent } from '../../events/versions.ts'
import type { Position } from '../../eventstore/event-store.ts'
import { recurringOf } from '../../projections/invoice/recurring.ts'
import type { RecurringView } from '../../projections/invoice/recurring.ts'
import type { Caller } from '../caller.ts'
import { actorOfCaller } from '../caller.ts'
import { commandSession } from '../command-session.ts'
import type { CommandSession } from '../command-session.ts'
import { fold } from '../decider.ts'
import { companion } from '../handle-command.ts'
import type { LineItemInput } from './fields.ts'
import { invoiceDecider, invoiceStream } from './invoice.ts'
import { mayAccessRecurring, recurringDecider, recurringInvoiceId, recurringStream } from './recurring.ts'
import type { RecurringEvent, RecurringFields, RecurringState } from './recurring.ts'
import { periodDate } from './recurring-schedule.ts'
import { checkLinks, todayOf, withIds } from './write-invoice.ts'
import type { InvoiceDeps } from './write-invoice.ts'

type Written = { id: string; position: Position | null }
const facts = (deps: InvoiceDeps, caller: Caller) => {
  const now = deps.clock()
  return { orgId: caller.orgId, actor: actorOfCaller(caller), at: now.toISOString(), today: todayOf(now) }
}

/** A recurring invoice of the caller's organization (404 otherwise) that the caller may act on (403 otherwise). */
export async function visibleRecurring(deps: Pick<Deps, 'db' | 'clock'>, caller: Caller, id: string): Promise<RecurringView> {
  const row = await recurringOf(deps.db, caller.orgId, id)
  if (!row) throw new NotFoundError('Recurring invoice not found')
  if (!mayAccessRecurring({ createdBy: row.created_by, fields: row }, actorOfCaller(caller))) throw new ForbiddenError('Only an admin, the creator or an assignee may act on this recurring invoice')
  return row
}

/** POST /api/invoices/recurring/: any member; its links checked as an invoice's. */
export async function createRecurring(deps: InvoiceDeps, caller: Caller, input: { fields: Partial<RecurringFields>; lines: readonly LineItemInput[] }, session: CommandSession = commandSession(deps.store, caller)): Promise<Written> {
  await checkLinks(deps.db, caller, input.fields, input.lines)
  const id = randomUUID()
  await session.run(recurringDecider, recurringStream(id), { type: 'CreateRecurring', recurringId: id, input: input.fields, lines: withIds(input.lines), ...facts(deps, caller) }, { expectNew: true })
  return { id, position: session.position() }
}

/** PUT: the fields sent, and the lines as a whole when sent. */
export async function changeRecurring(deps: InvoiceDeps, caller: Caller, id: string, input: { fields: Partial<RecurringFields>; lines?: readonly LineItemInput[] }, session: CommandSession = commandSession(deps.store, caller)): Promise<Written> {
  const current = await visibleRecurring(deps, caller, id)
  await checkLinks(deps.db, caller, input.fields, input.lines, current)
  await session.run(recurringDecider, recurringStream(id), { type: 'UpdateRecurring', input: input.fields, lines: input.lines && withIds(input.lines), ...facts(deps, caller) })
  return { id, position: session.position() }
}

/** Pause or resume (`toggle/`), or delete. */
export async function actOnRecurring(deps: InvoiceDeps, caller: Caller, id: string, type: 'ToggleRecurring' | 'DeleteRecurring', session: CommandSession = commandSession(deps.store, caller)): Promise<Written> {
  await visibleRecurring(deps, caller, id)
  await session.run(recurringDecider, recurringStream(id), { type, ...facts(deps, caller) })
  return { id, position: session.position() }
}

/** Period n's draft: the schedule's client, terms and lines (new ids), issued on the period's date, billing the days up to the next period; its creator is the schedule's. */
export function periodInvoiceCommand(state: RecurringState, period: number, at: string) {
  const { title, frequency: _f, custom_days: _c, start_date: _s, end_date: _e, auto_send: _a, ...fields } = state.fields
  const issue_date = periodDate(state.fields, period)
  const lastDay = new Date(Date.parse(periodDate(state.fields, period + 1)) - 86_400_000).toISOString().slice(0, 10)
  return {
    type: 'CreateInvoice' as const,
    invoiceId: recurringInvoiceId(state.id, period),
    orgId: state.orgId!,
    actor: { profileId: state.createdBy, isAdmin: false, isSuperuser: false },
    input: { ...fields, invoice_title: title.slice(0, 100), issue_date, billing_period: `${issue_date} – ${lastDay}` },
    lines: withIds(state.lines.map(({ id: _id, ...line }) => line)),
    today: issue_date,
    at,
  }
}

/**
 * Generates the periods of one schedule that were due (`periods`, as its read model showed them):
 * RecurringInvoiceGenerated for each (and RecurringInvoiceCaughtUp when several) on the schedule's
 * stream, each draft's InvoiceCreated on its own, all in one append. The drafts are made from the
 * schedule as stored at each attempt; an invoice stream that exists already decides nothing, and the
 * schedule's decider skips periods already generated, so a retry or a second process adds nothing.
 */
export async function generatePeriods(deps: Pick<Deps, 'store' | 'clock'>, schedule: { id: string; orgId: string }, periods: readonly number[]): Promise<{ generated: number; position: Position | null }> {
  const now = deps.clock()
  const at = now.toISOString()
  const stored = async () => fold(recurringDecider, (await deps.store.readStream(recurringStream(schedule.id))).map((e) => decodeEvent(e) as RecurringEvent))
  const invoices = periods.map((period) => companion(invoiceDecider, invoiceStream(recurringInvoiceId(schedule.id, period)), async () => ({ command: periodInvoiceCommand(await stored(), period, at) }), { expectNew: true }))
  const session = commandSession(deps.store, { orgId: schedule.orgId, profileId: null, isAdmin: false })
  const { events } = await session.run(recurringDecider, recurringStream(schedule.id), { type: 'GenerateDue', orgId: schedule.orgId, periods, today: todayOf(now), at }, { also: invoices })
  return { generated: events.filter((e) => e.type === 'RecurringInvoiceGenerated').length, position: session.position() }
}
