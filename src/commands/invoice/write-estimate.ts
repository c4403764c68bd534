import { randomUUID } from 'node:crypto'
import type { Deps } from '../../deps.ts'
import { ForbiddenError, NotFoundError } from '../../errors.ts'
import { decodeEvent } from '../../events/versions.ts'
import type { Position } from '../../eventstore/event-store.ts'
import { estimateOf } from '../../projections/invoice/estimates.ts'
import type { EstimateView } from '../../projections/invoice/estimates.ts'
import type { Caller } from '../caller.ts'
import { actorOfCaller } from '../caller.ts'
import { commandSession } from '../command-session.ts'
import type { CommandSession } from '../command-session.ts'
import { fold } from '../decider.ts'
import { companion } from '../handle-command.ts'
import { estimateDecider, estimateStream, mayAccessEstimate } from './estimate.ts'
import type { EstimateEvent, EstimateFields } from './estimate.ts'
import type { LineItem, LineItemInput } from './fields.ts'
import { invoiceDecider, invoiceStream } from './invoice.ts'
import { SEQUENCE_RETRIES, numberSequenceDecider, numberStream } from './number-sequence.ts'
import { checkLinks, todayOf, withIds } from './write-invoice.ts'
import type { InvoiceDeps } from './write-invoice.ts'

type Written = { id: string; position: Position | null }
const facts = (deps: InvoiceDeps, caller: Caller) => {
  const now = deps.clock()
  return { orgId: caller.orgId, actor: actorOfCaller(caller), at: now.toISOString(), today: todayOf(now) }
}

/** An estimate of the caller's organization (404 otherwise) that the caller may act on (403 otherwise). */
export async function visibleEstimate(deps: Pick<Deps, 'db' | 'clock'>, caller: Caller, id: string): Promise<EstimateView> {
  const row = await estimateOf(deps.db, caller, id, todayOf(deps.clock()))
  if (!row) throw new NotFoundError('Estimate not found')
  if (!mayAccessEstimate({ createdBy: row.created_by, fields: row }, actorOfCaller(caller))) throw new ForbiddenError('Only an admin, the creator or an assignee may act on this estimate')
  return row
}

/** Creates an estimate with the organization's next estimate number (EST-<year>-<n>), allocated in the same append (concurrent creations retry until each has its number). */
export async function createEstimate(deps: InvoiceDeps, caller: Caller, input: { fields: Partial<EstimateFields>; lines: readonly LineItemInput[] }, session: CommandSession = commandSession(deps.store, caller)): Promise<Written> {
  await checkLinks(deps.db, caller, input.fields, input.lines)
  const id = randomUUID()
  const command = { type: 'CreateEstimate' as const, estimateId: id, input: input.fields, lines: withIds(input.lines), ...facts(deps, caller) }
  const year = command.today.slice(0, 4)
  // The sequence is the main stream so that the estimate is written first in the append (companions go first): its number then lands on a row that exists.
  const creation = companion(estimateDecider, estimateStream(id), command, { expectNew: true })
  await session.run(numberSequenceDecider, numberStream(caller.orgId, 'EST', year), { type: 'AllocateNumber', series: 'EST', recordId: id, year, at: command.at }, { also: [creation], maxRetries: SEQUENCE_RETRIES })
  return { id, position: session.position() }
}

/** PUT: the fields sent, and the lines as a whole when sent. */
export async function changeEstimate(deps: InvoiceDeps, caller: Caller, id: string, input: { fields: Partial<EstimateFields>; lines?: readonly LineItemInput[] }, session: CommandSession = commandSession(deps.store, caller)): Promise<Written> {
  const current = await visibleEstimate(deps, caller, id)
  await checkLinks(deps.db, caller, input.fields, input.lines, current)
  await session.run(estimateDecider, estimateStream(id), { type: 'UpdateEstimate', input: input.fields, lines: input.lines && withIds(input.lines), ...facts(deps, caller) })
  return { id, position: session.position() }
}

/** Send, or delete: one command on the estimate the caller may act on. */
export async function actOnEstimate(deps: InvoiceDeps, caller: Caller, id: string, type: 'SendEstimate' | 'DeleteEstimate', session: CommandSession = commandSession(deps.store, caller)): Promise<Written> {
  await visibleEstimate(deps, caller, id)
  await session.run(estimateDecider, estimateStream(id), { type, ...facts(deps, caller) })
  return { id, position: session.position() }
}

/** The invoice an estimate becomes: its client, terms and lines (new ids), a draft issued today. */
function invoiceCommandOf(state: { fields: EstimateFields; lines: readonly LineItem[] }, invoiceId: string, command: ReturnType<typeof facts>) {
  const { title, expiry_date: _expiry, issue_date: _issued, public_link_enabled: _link, ...fields } = state.fields
  return { type: 'CreateInvoice' as const, invoiceId, input: { ...fields, invoice_title: title.slice(0, 100) }, lines: withIds(state.lines.map(({ id: _id, ...line }) => line)), ...command }
}

/**
 * Converts an estimate to a draft invoice in one decision: EstimateConverted on the estimate's
 * stream and the invoice's InvoiceCreated in the same append, the invoice made from the estimate as
 * that attempt read it. A second conversion (concurrent or later) is refused, so an estimate
 * becomes at most one invoice.
 */
export async function convertEstimate(deps: InvoiceDeps, caller: Caller, id: string, session: CommandSession = commandSession(deps.store, caller)): Promise<{ invoiceId: string; position: Position | null }> {
  await visibleEstimate(deps, caller, id)
  const invoiceId = randomUUID()
  const command = facts(deps, caller)
  const invoice = companion(invoiceDecider, invoiceStream(invoiceId), async () => {
    const recorded = await deps.store.readStream(estimateStream(id))
    return { command: invoiceCommandOf(fold(estimateDecider, recorded.map((e) => decodeEvent(e) as EstimateEvent)), invoiceId, command) }
  }, { expectNew: true })
  await session.run(estimateDecider, estimateStream(id), { type: 'ConvertEstimate', invoiceId, ...command }, { also: [invoice] })
  return { invoiceId, position: session.position() }
}
