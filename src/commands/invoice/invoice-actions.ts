import { randomUUID } from 'node:crypto'
import type { Position } from '../../eventstore/event-store.ts'
import type { Caller } from '../caller.ts'
import { actorOfCaller } from '../caller.ts'
import { commandSession } from '../command-session.ts'
import type { CommandSession } from '../command-session.ts'
import { companion } from '../handle-command.ts'
import type { LineItemInput, PaymentData } from './fields.ts'
import { invoiceDecider, invoiceStream } from './invoice.ts'
import type { InvoiceCommand } from './invoice.ts'
import { SEQUENCE_RETRIES, numberSequenceDecider, numberStream } from './number-sequence.ts'
import { checkLineProduct, todayOf, visibleInvoice } from './write-invoice.ts'
import type { InvoiceDeps } from './write-invoice.ts'

/**
 * The invoice's lifecycle actions and its lines and payments, each one command on its stream after
 * the caller's access is checked on the read model (the decider checks it again on the events).
 */
type Done = { position: Position | null }
type Command = Extract<InvoiceCommand, { type: 'CancelInvoice' | 'AddLineItem' | 'ChangeLineItem' | 'RemoveLineItem' | 'RecordPayment' | 'ReversePayment' }>
type Body<C> = C extends unknown ? Omit<C, 'orgId' | 'actor' | 'at'> : never

async function act(deps: InvoiceDeps, caller: Caller, id: string, command: Body<Command>, session: CommandSession): Promise<Done> {
  await visibleInvoice(deps, caller, id)
  await session.run(invoiceDecider, invoiceStream(id), { ...command, orgId: caller.orgId, actor: actorOfCaller(caller), at: deps.clock().toISOString() } as InvoiceCommand)
  return { position: session.position() }
}

/**
 * Sends the invoice. The first send issues it: InvoiceIssued and the organization's next number
 * (number-sequence.ts) in one append, so the number exists exactly when the issue does; a retry
 * after a concurrent issue decides both again. Later sends record a re-send and keep the number.
 */
export async function sendInvoice(deps: InvoiceDeps, caller: Caller, id: string, session: CommandSession = commandSession(deps.store, caller)): Promise<Done> {
  const current = await visibleInvoice(deps, caller, id)
  const now = deps.clock()
  const year = todayOf(now).slice(0, 4)
  const numbering = current.invoice_number === null ? [companion(numberSequenceDecider, numberStream(caller.orgId, 'INV', year), { type: 'AllocateNumber', series: 'INV', recordId: id, year, at: now.toISOString() })] : []
  await session.run(invoiceDecider, invoiceStream(id), { type: 'SendInvoice', orgId: caller.orgId, actor: actorOfCaller(caller), at: now.toISOString() }, { also: numbering, maxRetries: SEQUENCE_RETRIES })
  return { position: session.position() }
}

export const cancelInvoice = (deps: InvoiceDeps, caller: Caller, id: string, session = commandSession(deps.store, caller)) => act(deps, caller, id, { type: 'CancelInvoice' }, session)

/** Records a payment (all that is due when no amount is given); answers its id. */
export async function recordPayment(deps: InvoiceDeps, caller: Caller, id: string, payment: Omit<PaymentData, 'payment_id' | 'amount'> & { amount?: string }, session = commandSession(deps.store, caller)): Promise<Done & { paymentId: string }> {
  const paymentId = randomUUID()
  const done = await act(deps, caller, id, { type: 'RecordPayment', payment: { ...payment, payment_id: paymentId } }, session)
  return { ...done, paymentId }
}

/** Reverses a payment: an event, never a deletion; the status follows. */
export const reversePayment = (deps: InvoiceDeps, caller: Caller, id: string, paymentId: string, session = commandSession(deps.store, caller)) => act(deps, caller, id, { type: 'ReversePayment', paymentId }, session)

export async function addLineItem(deps: InvoiceDeps, caller: Caller, id: string, item: LineItemInput, session = commandSession(deps.store, caller)): Promise<Done & { lineItemId: string }> {
  await checkLineProduct(deps.db, caller, item)
  const lineItemId = randomUUID()
  const done = await act(deps, caller, id, { type: 'AddLineItem', lineItemId, item }, session)
  return { ...done, lineItemId }
}

export async function changeLineItem(deps: InvoiceDeps, caller: Caller, id: string, lineItemId: string, item: Partial<LineItemInput>, session = commandSession(deps.store, caller)): Promise<Done> {
  await checkLineProduct(deps.db, caller, item)
  return act(deps, caller, id, { type: 'ChangeLineItem', lineItemId, item }, session)
}

export const removeLineItem = (deps: InvoiceDeps, caller: Caller, id: string, lineItemId: string, session = commandSession(deps.store, caller)) => act(deps, caller, id, { type: 'RemoveLineItem', lineItemId }, session)
