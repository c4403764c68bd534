import { NotFoundError, ValidationError } from '../../errors.ts'
import type { Actor } from '../caller.ts'
import type { PaymentData } from './fields.ts'
import { amountsOf, statusOf } from './invoice.ts'
import type { InvoiceEvent, InvoiceState } from './invoice.ts'
import { cents } from './money.ts'

/**
 * Payments against an invoice: recorded and reversed as events, never deleted (the original deleted
 * the row, so removing the last payment left "Paid" with money due). The status follows from what
 * is recorded (invoice.ts `statusOf`). Rules, from the original's PaymentCreateSerializer: more than
 * zero, at most what is due, never against a cancelled invoice; and ours: only once it is issued
 * (a draft bills no one).
 */
type Facts = { orgId: string; actor: Actor; at: string }
export type PaymentCommand =
  /** `payment.amount` undefined: the whole amount due (mark-paid without an amount). */
  | ({ type: 'RecordPayment'; payment: Omit<PaymentData, 'amount'> & { amount?: string } } & Facts)
  | ({ type: 'ReversePayment'; paymentId: string } & Facts)

function decideRecord(command: Extract<PaymentCommand, { type: 'RecordPayment' }>, state: InvoiceState): InvoiceEvent[] {
  const { payment } = command
  if (state.payments.some((p) => p.payment_id === payment.payment_id)) return []
  const status = statusOf(state)
  if (status === 'Cancelled') throw new ValidationError({ non_field_errors: ['Cannot record a payment against a cancelled invoice.'] })
  if (status === 'Draft') throw new ValidationError({ non_field_errors: ['Send the invoice before recording a payment against it.'] })
  const due = amountsOf(state).amount_due
  const amount = payment.amount ?? due
  if (cents(amount) <= 0n) throw new ValidationError({ amount: ['Payment amount must be greater than zero.'] })
  if (cents(amount) > cents(due)) throw new ValidationError({ amount: [`Payment amount exceeds the amount due (${due}).`] })
  return [{ type: 'InvoicePaymentRecorded', data: { ...payment, amount, by: command.actor.profileId, at: command.at } }]
}

function decideReverse(command: Extract<PaymentCommand, { type: 'ReversePayment' }>, state: InvoiceState): InvoiceEvent[] {
  const payment = state.payments.find((p) => p.payment_id === command.paymentId)
  if (!payment) throw new NotFoundError('Payment not found')
  if (payment.reversed) return []
  return [{ type: 'InvoicePaymentReversed', data: { payment_id: payment.payment_id, by: command.actor.profileId, at: command.at } }]
}

export function decidePayment(command: PaymentCommand, state: InvoiceState): InvoiceEvent[] {
  return command.type === 'RecordPayment' ? decideRecord(command, state) : decideReverse(command, state)
}
