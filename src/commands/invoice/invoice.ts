import { ForbiddenError, NotFoundError, ValidationError } from '../../errors.ts'
import { mayAccess } from '../../visibility/policy.ts'
import type { Actor } from '../caller.ts'
import type { Decider } from '../decider.ts'
import { decideNote, evolveNotes, isNoteCommand, isNoteEvent, noNotes } from '../notes.ts'
import type { NoteCommand, NoteEvent, Notes } from '../notes.ts'
import { streamCategory } from '../streams.ts'
import { MONEY_FIELDS, dueDateOf, emptyInvoice } from './fields.ts'
import type { InvoiceFields, InvoiceStatus, LineItem, LineItemInput, PaymentData } from './fields.ts'
import { checkLines, decideLineItem } from './lines.ts'
import type { LineItemCommand } from './lines.ts'
import { cents, invoiceAmounts, minusMoney, sumMoney } from './money.ts'
import { decideCreditNote } from './credit-notes.ts'
import type { CreditNoteData, CreditTaken, IssueCreditNote } from './credit-notes.ts'
import { decidePayment } from './payments.ts'
import type { PaymentCommand } from './payments.ts'

/**
 * An invoice (the original's invoices app), one stream per invoice. Its lifecycle has no silent
 * edits: Draft → issued (InvoiceIssued: Sent, numbered in the same append, see invoice-actions.ts) →
 * Viewed (the public link's first opening) →
 * Partially_Paid → Paid, or Cancelled; Overdue is read from the clock, never stored. The status is a
 * pure function of the events (`statusOf`), so no removal can leave "Paid" with money due. Once
 * issued, what is owed cannot change (lines and the money fields are refused with 400); once paid or
 * cancelled, nothing can. Payments are recorded and reversed as events, never deleted. Who: an
 * admin, the creator or an assignee (the original's invoices/permissions.py), for every action.
 */

export type FieldChanges = { [K in keyof InvoiceFields]?: { from: InvoiceFields[K]; to: InvoiceFields[K] } }

// Events: the storage contract.
export type InvoiceEvent =
  | { type: 'InvoiceCreated'; data: InvoiceFields & { invoice_id: string; org_id: string; line_items: LineItem[]; duplicated_from: string | null; created_by: string | null; at: string } }
  | { type: 'InvoiceUpdated'; data: { changes: FieldChanges; by: string | null; at: string } }
  /** Every line after the change: a draft's lines as a whole, so the projection replaces them in one statement. */
  | { type: 'InvoiceLinesChanged'; data: { line_items: LineItem[]; by: string | null; at: string } }
  /** The first send: the invoice is issued (its number is the InvoiceNumberAllocated appended with it). */
  | { type: 'InvoiceIssued'; data: { total_amount: string; by: string | null; at: string } }
  | { type: 'InvoiceResent'; data: { by: string | null; at: string } }
  /** The client first opened the invoice through its public link. */
  | { type: 'InvoiceViewed'; data: { at: string } }
  | { type: 'InvoicePaymentRecorded'; data: PaymentData & { by: string | null; at: string } }
  | { type: 'InvoicePaymentReversed'; data: { payment_id: string; by: string | null; at: string } }
  | { type: 'InvoiceCancelled'; data: { by: string | null; at: string } }
  /** A correction of the issued invoice (credit-notes.ts); its number is the CreditNoteNumberAllocated of the same append. */
  | { type: 'CreditNoteIssued'; data: CreditNoteData }
  | NoteEvent<'Invoice'>

export type Payment = PaymentData & { reversed: boolean }

export type InvoiceState = {
  exists: boolean
  orgId: string | null
  createdBy: string | null
  fields: InvoiceFields
  lines: LineItem[]
  payments: Payment[]
  credits: CreditTaken[]
  issued: boolean
  viewed: boolean
  cancelled: boolean
  notes: Notes
}

export const initialInvoiceState = (): InvoiceState => ({ exists: false, orgId: null, createdBy: null, fields: emptyInvoice('1970-01-01'), lines: [], payments: [], credits: [], issued: false, viewed: false, cancelled: false, notes: noNotes() })

export function evolveInvoice(state: InvoiceState, event: InvoiceEvent): InvoiceState {
  if (isNoteEvent('Invoice', event)) return { ...state, notes: evolveNotes('Invoice', state.notes, event) }
  switch (event.type) {
    case 'InvoiceCreated': {
      const { invoice_id: _id, org_id, line_items, duplicated_from: _from, created_by, at: _at, ...fields } = event.data
      return { ...initialInvoiceState(), exists: true, orgId: org_id, createdBy: created_by, fields, lines: line_items }
    }
    case 'InvoiceUpdated': {
      const next = { ...state.fields }
      for (const [key, change] of Object.entries(event.data.changes)) (next as Record<string, unknown>)[key] = change.to
      return { ...state, fields: next }
    }
    case 'InvoiceLinesChanged':
      return { ...state, lines: event.data.line_items }
    case 'InvoiceIssued':
      return { ...state, issued: true }
    case 'InvoiceResent':
      return state
    case 'InvoiceViewed':
      return { ...state, viewed: true }
    case 'InvoicePaymentRecorded': {
      const { by: _by, at: _at, ...payment } = event.data
      return { ...state, payments: [...state.payments, { ...payment, reversed: false }] }
    }
    case 'InvoicePaymentReversed':
      return { ...state, payments: state.payments.map((p) => (p.payment_id === event.data.payment_id ? { ...p, reversed: true } : p)) }
    case 'InvoiceCancelled':
      return { ...state, cancelled: true }
    case 'CreditNoteIssued':
      return { ...state, credits: [...state.credits, { credit_note_id: event.data.credit_note_id, lines: event.data.lines.map(({ line_id, quantity }) => ({ line_id, quantity })), total_amount: event.data.total_amount }] }
  }
}

/** The invoice's amounts as they stand (money.ts), with what has been paid, credited (credit notes) and is due. */
export function amountsOf(state: Pick<InvoiceState, 'fields' | 'lines' | 'payments'> & { credits: readonly Pick<CreditTaken, 'total_amount'>[] }) {
  const amounts = invoiceAmounts(state.lines, state.fields)
  const amount_paid = sumMoney(state.payments.filter((p) => !p.reversed).map((p) => p.amount))
  const amount_credited = sumMoney(state.credits.map((c) => c.total_amount))
  return { ...amounts, amount_paid, amount_credited, amount_due: minusMoney(minusMoney(amounts.total_amount, amount_credited), amount_paid) }
}

export type StoredStatus = Exclude<InvoiceStatus, 'Overdue' | 'Pending'>

/** The stored status, from what the events recorded (the read model derives it the same way; Overdue adds the clock in its queries). */
export function statusFrom(facts: { cancelled: boolean; issued: boolean; viewed: boolean; amount_paid: string; amount_due: string }): StoredStatus {
  if (facts.cancelled) return 'Cancelled'
  if (!facts.issued) return 'Draft'
  if (cents(facts.amount_due) <= 0n) return 'Paid'
  if (cents(facts.amount_paid) > 0n) return 'Partially_Paid'
  return facts.viewed ? 'Viewed' : 'Sent'
}

export const statusOf = (state: InvoiceState): StoredStatus => statusFrom({ ...state, ...amountsOf(state) })

/** What a client may set: the fields (PUT is partial, as the original's), and the lines as a whole. */
export type InvoiceInput = Partial<InvoiceFields>

type Facts = { orgId: string; actor: Actor; at: string }
export type InvoiceCommand =
  | ({ type: 'CreateInvoice'; invoiceId: string; input: InvoiceInput; lines: readonly LineItem[]; duplicatedFrom?: string; today: string } & Facts)
  | ({ type: 'UpdateInvoice'; input: InvoiceInput; lines?: readonly LineItem[] } & Facts)
  | ({ type: 'SendInvoice' } & Facts)
  | ({ type: 'CancelInvoice' } & Facts)
  /** An opening of the public link (no member acts: the link is the credential). */
  | { type: 'RecordInvoiceView'; orgId: string; at: string }
  | LineItemCommand
  | PaymentCommand
  | IssueCreditNote
  | NoteCommand

export const mayAccessInvoice = (state: Pick<InvoiceState, 'createdBy' | 'fields'>, actor: Actor): boolean => mayAccess('Invoice', { createdBy: state.createdBy, assignedTo: state.fields.assigned_to }, actor)

/** 404 for another organization's (or no) invoice, 403 for a member who is neither its creator nor an assignee. */
export function accessible(state: InvoiceState, command: Facts): void {
  if (!state.exists || state.orgId !== command.orgId) throw new NotFoundError('Invoice not found')
  if (!mayAccessInvoice(state, command.actor)) throw new ForbiddenError('Only an admin, the creator or an assignee may act on this invoice')
}

/** 400 once the invoice is paid or cancelled: a settled invoice is not edited. */
export function assertEditable(state: InvoiceState): void {
  const status = statusOf(state)
  if (status === 'Paid' || status === 'Cancelled') throw new ValidationError(`A ${status.toLowerCase()} invoice cannot be edited.`)
}

/** 400 once issued: what is owed is fixed; a correction is a credit note, not an edit. */
export function assertMoneyOpen(state: InvoiceState, field: string): void {
  if (state.issued) throw new ValidationError({ [field]: ['The invoice has been issued: its lines and amounts can no longer change.'] })
}

function checkFields(fields: InvoiceFields): void {
  const errors: Record<string, string[]> = {}
  if (!fields.invoice_title.trim()) errors.invoice_title = ['This field is required.']
  if (!fields.account) errors.account_id = ['This field is required.']
  if (!fields.contact) errors.contact_id = ['This field is required.']
  if (fields.discount_type === 'PERCENTAGE' && cents(fields.discount_value) > 10_000n) errors.discount_value = ['Expected a percentage from 0 to 100.']
  if (fields.due_date && fields.due_date < fields.issue_date) errors.due_date = ['The due date cannot be before the issue date.']
  if (Object.keys(errors).length) throw new ValidationError(errors)
}

const defined = <T extends object>(input: T): Partial<T> => Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) as Partial<T>

function decideCreate(command: Extract<InvoiceCommand, { type: 'CreateInvoice' }>, state: InvoiceState): InvoiceEvent[] {
  if (state.exists) return []
  const given = { ...emptyInvoice(command.today), ...defined(command.input) }
  const fields = { ...given, due_date: dueDateOf(given) }
  checkFields(fields)
  checkLines(command.lines)
  return [{ type: 'InvoiceCreated', data: { invoice_id: command.invoiceId, org_id: command.orgId, ...fields, line_items: [...command.lines], duplicated_from: command.duplicatedFrom ?? null, created_by: command.actor.profileId, at: command.at } }]
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

function decideUpdate(command: Extract<InvoiceCommand, { type: 'UpdateInvoice' }>, state: InvoiceState): InvoiceEvent[] {
  assertEditable(state)
  const requested = defined(command.input)
  const dateless = { ...state.fields, ...requested }
  // New terms or a new issue date move a due date the terms gave, unless one is given.
  const termsMoved = requested.due_date === undefined && (requested.payment_terms !== undefined || requested.issue_date !== undefined)
  const next = { ...dateless, due_date: termsMoved ? dueDateOf({ ...dateless, due_date: null }) : dateless.due_date }
  checkFields(next)
  const changes: FieldChanges = {}
  for (const key of Object.keys(next) as (keyof InvoiceFields)[]) if (!same(state.fields[key], next[key])) (changes as Record<string, unknown>)[key] = { from: state.fields[key], to: next[key] }
  const moneyField = MONEY_FIELDS.find((field) => field in changes)
  if (moneyField) assertMoneyOpen(state, moneyField)
  const by = command.actor.profileId
  const events: InvoiceEvent[] = Object.keys(changes).length ? [{ type: 'InvoiceUpdated', data: { changes, by, at: command.at } }] : []
  if (command.lines && !same(command.lines.map(withoutId), state.lines.map(withoutId))) {
    assertMoneyOpen(state, 'line_items')
    checkLines(command.lines)
    events.push({ type: 'InvoiceLinesChanged', data: { line_items: [...command.lines], by, at: command.at } })
  }
  return events
}

const withoutId = ({ id: _id, ...item }: LineItem): LineItemInput => item

function decideSend(command: Extract<InvoiceCommand, { type: 'SendInvoice' }>, state: InvoiceState): InvoiceEvent[] {
  const status = statusOf(state)
  if (status === 'Paid' || status === 'Cancelled') throw new ValidationError(`Cannot send a ${status.toLowerCase()} invoice`)
  const by = command.actor.profileId
  if (state.issued) return [{ type: 'InvoiceResent', data: { by, at: command.at } }]
  // The invariants an issue must hold (EN 16931 BR-16: at least one line; money fixed from here on).
  if (!state.lines.length) throw new ValidationError({ line_items: ['An invoice needs at least one line before it is sent.'] })
  checkFields(state.fields)
  return [{ type: 'InvoiceIssued', data: { total_amount: amountsOf(state).total_amount, by, at: command.at } }]
}

function decideCancel(command: Extract<InvoiceCommand, { type: 'CancelInvoice' }>, state: InvoiceState): InvoiceEvent[] {
  const status = statusOf(state)
  if (status === 'Cancelled') throw new ValidationError('Invoice is already cancelled')
  if (status === 'Paid') throw new ValidationError('Cannot cancel a paid invoice')
  return [{ type: 'InvoiceCancelled', data: { by: command.actor.profileId, at: command.at } }]
}

export function decideInvoice(command: InvoiceCommand, state: InvoiceState): InvoiceEvent[] {
  if (command.type === 'CreateInvoice') return decideCreate(command, state)
  if (command.type === 'RecordInvoiceView') {
    if (!state.exists || state.orgId !== command.orgId) throw new NotFoundError('Invoice not found')
    // Only the first view of a sent invoice moves it: a later one, or one of a paid invoice, records nothing.
    return statusOf(state) === 'Sent' ? [{ type: 'InvoiceViewed', data: { at: command.at } }] : []
  }
  accessible(state, command)
  if (isNoteCommand(command)) return decideNote('Invoice', state.notes, command, true)
  switch (command.type) {
    case 'UpdateInvoice':
      return decideUpdate(command, state)
    case 'SendInvoice':
      return decideSend(command, state)
    case 'CancelInvoice':
      return decideCancel(command, state)
    case 'AddLineItem':
    case 'ChangeLineItem':
    case 'RemoveLineItem':
      return decideLineItem(command, state)
    case 'RecordPayment':
    case 'ReversePayment':
      return decidePayment(command, state)
    case 'IssueCreditNote':
      return decideCreditNote(command, { ...state, amountDue: amountsOf(state).amount_due }, state.fields.currency)
  }
}

export const invoiceDecider: Decider<InvoiceCommand, InvoiceState, InvoiceEvent> = { initialState: initialInvoiceState, evolve: evolveInvoice, decide: decideInvoice }

export const invoiceStreams = streamCategory('invoice')
export const invoiceStream = invoiceStreams.stream
