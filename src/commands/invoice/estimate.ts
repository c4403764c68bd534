import { ForbiddenError, NotFoundError, ValidationError } from '../../errors.ts'
import { mayAccess } from '../../visibility/policy.ts'
import type { Actor } from '../caller.ts'
import type { Decider } from '../decider.ts'
import { streamCategory } from '../streams.ts'
import type { LineItem } from './fields.ts'
import { checkLines } from './lines.ts'
import { cents } from './money.ts'
import type { DiscountType } from './money.ts'

/**
 * An estimate (a quote; the original's Estimate), one stream per estimate: a draft, sent, then
 * accepted or declined by the client (the public link's events), or expired when its expiry date
 * has passed (read from the clock, never stored). It converts to an invoice in one decision, at
 * most once, and only when sent, viewed or accepted and not expired (the original converted
 * declined and expired ones too). Once accepted, declined or converted, it no longer changes.
 * Who: as for invoices (the original's has_object_access is one rule for both): an admin, the
 * creator or an assignee.
 */
export const ESTIMATE_STATUSES = ['Draft', 'Sent', 'Viewed', 'Accepted', 'Declined', 'Expired'] as const
export type EstimateStatus = (typeof ESTIMATE_STATUSES)[number]

export type EstimateFields = {
  title: string
  account: string | null
  contact: string | null
  opportunity: string | null
  client_name: string
  client_email: string
  client_phone: string
  client_address_line: string
  client_city: string
  client_state: string
  client_postcode: string
  client_country: string
  currency: string
  discount_type: DiscountType | null
  discount_value: string
  tax_rate: string
  issue_date: string
  expiry_date: string | null
  public_link_enabled: boolean
  notes: string
  terms: string
  assigned_to: string[]
  teams: string[]
}

export const emptyEstimate = (issueDate: string): EstimateFields => ({
  title: '', account: null, contact: null, opportunity: null, client_name: '', client_email: '', client_phone: '',
  client_address_line: '', client_city: '', client_state: '', client_postcode: '', client_country: '',
  currency: 'USD', discount_type: null, discount_value: '0.00', tax_rate: '0.00', issue_date: issueDate, expiry_date: null,
  public_link_enabled: true, notes: '', terms: '', assigned_to: [], teams: [],
})

export type EstimateChanges = { [K in keyof EstimateFields]?: { from: EstimateFields[K]; to: EstimateFields[K] } }
/** Who answered on the client's side, as the public link records it. */
export type Respondent = { name: string; email: string; ip: string | null; user_agent: string }

export type EstimateEvent =
  | { type: 'EstimateCreated'; data: EstimateFields & { estimate_id: string; org_id: string; line_items: LineItem[]; created_by: string | null; at: string } }
  | { type: 'EstimateUpdated'; data: { changes: EstimateChanges; by: string | null; at: string } }
  | { type: 'EstimateLinesChanged'; data: { line_items: LineItem[]; by: string | null; at: string } }
  | { type: 'EstimateSent'; data: { by: string | null; at: string } }
  /** The client first opened the estimate through its public link. */
  | { type: 'EstimateViewed'; data: { at: string } }
  | { type: 'EstimateAccepted'; data: Respondent & { at: string } }
  | { type: 'EstimateDeclined'; data: Respondent & { at: string } }
  | { type: 'EstimateConverted'; data: { invoice_id: string; by: string | null; at: string } }
  | { type: 'EstimateDeleted'; data: { by: string | null; at: string } }

export type EstimateState = {
  exists: boolean
  orgId: string | null
  createdBy: string | null
  deleted: boolean
  fields: EstimateFields
  lines: LineItem[]
  sent: boolean
  viewed: boolean
  answer: 'Accepted' | 'Declined' | null
  convertedTo: string | null
}

const initialState = (): EstimateState => ({ exists: false, orgId: null, createdBy: null, deleted: false, fields: emptyEstimate('1970-01-01'), lines: [], sent: false, viewed: false, answer: null, convertedTo: null })

function evolve(state: EstimateState, event: EstimateEvent): EstimateState {
  switch (event.type) {
    case 'EstimateCreated': {
      const { estimate_id: _id, org_id, line_items, created_by, at: _at, ...fields } = event.data
      return { ...initialState(), exists: true, orgId: org_id, createdBy: created_by, fields, lines: line_items }
    }
    case 'EstimateUpdated':
      return { ...state, fields: { ...state.fields, ...Object.fromEntries(Object.entries(event.data.changes).map(([key, change]) => [key, change.to])) } }
    case 'EstimateLinesChanged':
      return { ...state, lines: event.data.line_items }
    case 'EstimateSent':
      return { ...state, sent: true }
    case 'EstimateViewed':
      return { ...state, viewed: true }
    case 'EstimateAccepted':
      return { ...state, answer: 'Accepted' }
    case 'EstimateDeclined':
      return { ...state, answer: 'Declined' }
    case 'EstimateConverted':
      return { ...state, convertedTo: event.data.invoice_id, answer: 'Accepted' }
    case 'EstimateDeleted':
      return { ...state, deleted: true }
  }
}

/** The status on `today` (YYYY-MM-DD): Expired is a sent estimate, not answered, past its expiry date. */
export function estimateStatus(state: Pick<EstimateState, 'sent' | 'viewed' | 'answer' | 'fields'>, today: string): EstimateStatus {
  if (state.answer) return state.answer
  if (!state.sent) return 'Draft'
  if (state.fields.expiry_date !== null && state.fields.expiry_date < today) return 'Expired'
  return state.viewed ? 'Viewed' : 'Sent'
}

/** Waiting on the client's answer: sent or viewed, not expired. */
const awaiting = (status: EstimateStatus) => status === 'Sent' || status === 'Viewed'

type Facts = { orgId: string; actor: Actor; at: string; today: string }
export type EstimateCommand =
  | ({ type: 'CreateEstimate'; estimateId: string; input: Partial<EstimateFields>; lines: readonly LineItem[] } & Facts)
  | ({ type: 'UpdateEstimate'; input: Partial<EstimateFields>; lines?: readonly LineItem[] } & Facts)
  | ({ type: 'SendEstimate' } & Facts)
  | ({ type: 'AnswerEstimate'; answer: 'Accepted' | 'Declined'; respondent: Respondent } & Omit<Facts, 'actor'>)
  | ({ type: 'RecordEstimateView' } & Omit<Facts, 'actor'>)
  | ({ type: 'ConvertEstimate'; invoiceId: string } & Facts)
  | ({ type: 'DeleteEstimate' } & Omit<Facts, 'today'>)

export const mayAccessEstimate = (state: Pick<EstimateState, 'createdBy' | 'fields'>, actor: Actor): boolean => mayAccess('Invoice', { createdBy: state.createdBy, assignedTo: state.fields.assigned_to }, actor)

function accessible(state: EstimateState, command: { orgId: string; actor?: Actor }): void {
  if (!state.exists || state.deleted || state.orgId !== command.orgId) throw new NotFoundError('Estimate not found')
  if (command.actor && !mayAccessEstimate(state, command.actor)) throw new ForbiddenError('Only an admin, the creator or an assignee may act on this estimate')
}

function checkFields(fields: EstimateFields): void {
  const errors: Record<string, string[]> = {}
  if (!fields.title.trim()) errors.title = ['This field is required.']
  if (!fields.account) errors.account_id = ['This field is required.']
  if (!fields.contact) errors.contact_id = ['This field is required.']
  if (fields.discount_type === 'PERCENTAGE' && cents(fields.discount_value) > 10_000n) errors.discount_value = ['Expected a percentage from 0 to 100.']
  if (fields.expiry_date && fields.expiry_date < fields.issue_date) errors.expiry_date = ['The expiry date cannot be before the issue date.']
  if (Object.keys(errors).length) throw new ValidationError(errors)
}

const defined = <T extends object>(input: T): Partial<T> => Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) as Partial<T>
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)
const withoutIds = (lines: readonly LineItem[]) => lines.map(({ id: _id, ...line }) => line)

function decideUpdate(command: Extract<EstimateCommand, { type: 'UpdateEstimate' }>, state: EstimateState): EstimateEvent[] {
  if (state.answer) throw new ValidationError(`An ${state.convertedTo ? 'estimate converted to an invoice' : `${state.answer.toLowerCase()} estimate`} cannot be edited.`)
  const next = { ...state.fields, ...defined(command.input) }
  checkFields(next)
  const changes: EstimateChanges = {}
  for (const key of Object.keys(next) as (keyof EstimateFields)[]) if (!same(state.fields[key], next[key])) (changes as Record<string, unknown>)[key] = { from: state.fields[key], to: next[key] }
  const by = command.actor.profileId
  const events: EstimateEvent[] = Object.keys(changes).length ? [{ type: 'EstimateUpdated', data: { changes, by, at: command.at } }] : []
  if (command.lines && !same(withoutIds(command.lines), withoutIds(state.lines))) {
    checkLines(command.lines)
    events.push({ type: 'EstimateLinesChanged', data: { line_items: [...command.lines], by, at: command.at } })
  }
  return events
}

/** Sent or viewed (and not expired) or accepted (within its validity, so for good), not converted yet: what may become an invoice. */
function assertConvertible(state: EstimateState, today: string): void {
  if (state.convertedTo) throw new ValidationError('Estimate already converted to invoice')
  const status = estimateStatus(state, today)
  if (!awaiting(status) && status !== 'Accepted') throw new ValidationError(`${/^[AE]/.test(status) ? 'An' : 'A'} ${status.toLowerCase()} estimate cannot be converted to an invoice.`)
}

function decide(command: EstimateCommand, state: EstimateState): EstimateEvent[] {
  if (command.type === 'CreateEstimate') {
    if (state.exists) return []
    const fields = { ...emptyEstimate(command.today), ...defined(command.input) }
    checkFields(fields)
    checkLines(command.lines)
    return [{ type: 'EstimateCreated', data: { estimate_id: command.estimateId, org_id: command.orgId, ...fields, line_items: [...command.lines], created_by: command.actor.profileId, at: command.at } }]
  }
  if (command.type === 'DeleteEstimate' && state.exists && state.deleted && state.orgId === command.orgId) return []
  accessible(state, command)
  const by = 'actor' in command ? command.actor.profileId : null
  switch (command.type) {
    case 'UpdateEstimate':
      return decideUpdate(command, state)
    case 'SendEstimate': {
      const status = estimateStatus(state, command.today)
      if (status !== 'Draft' && !awaiting(status)) throw new ValidationError(`Cannot send a ${status.toLowerCase()} estimate`)
      if (!state.lines.length) throw new ValidationError({ line_items: ['An estimate needs at least one line before it is sent.'] })
      return [{ type: 'EstimateSent', data: { by, at: command.at } }]
    }
    case 'AnswerEstimate': {
      if (state.answer === command.answer) return []
      if (!awaiting(estimateStatus(state, command.today))) throw new ValidationError(`This estimate can no longer be ${command.answer.toLowerCase()}.`)
      return [{ type: command.answer === 'Accepted' ? 'EstimateAccepted' : 'EstimateDeclined', data: { ...command.respondent, at: command.at } }]
    }
    case 'ConvertEstimate':
      if (state.convertedTo === command.invoiceId) return []
      assertConvertible(state, command.today)
      return [{ type: 'EstimateConverted', data: { invoice_id: command.invoiceId, by, at: command.at } }]
    case 'RecordEstimateView':
      return estimateStatus(state, command.today) === 'Sent' ? [{ type: 'EstimateViewed', data: { at: command.at } }] : []
    case 'DeleteEstimate':
      return [{ type: 'EstimateDeleted', data: { by, at: command.at } }]
  }
}

export const estimateDecider: Decider<EstimateCommand, EstimateState, EstimateEvent> = { initialState, evolve, decide }

export const estimateStreams = streamCategory('estimate')
export const estimateStream = estimateStreams.stream
