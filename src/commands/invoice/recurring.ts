import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../../errors.ts'
import { mayAccess } from '../../visibility/policy.ts'
import type { Actor } from '../caller.ts'
import type { Decider } from '../decider.ts'
import { nameBasedId } from '../name-based-id.ts'
import { streamCategory } from '../streams.ts'
import type { LineItem, PaymentTerms } from './fields.ts'
import { checkLines } from './lines.ts'
import type { DiscountType } from './money.ts'
import { cents } from './money.ts'
import { duePeriods, firstPeriodFrom, periodDate } from './recurring-schedule.ts'
import type { RecurringFrequency } from './recurring-schedule.ts'

/**
 * A recurring invoice (the original's RecurringInvoice), one stream per schedule: its fields and
 * lines, paused and resumed by `toggle/`, and each period it generated. Period n's draft invoice
 * has the id `recurringInvoiceId(schedule, n)`, and RecurringInvoiceGenerated for n is appended
 * with that invoice's InvoiceCreated, so two processes, a restart mid-run or a retry never make a
 * second one. Periods come from the start date (recurring-schedule.ts), never from the last one.
 * Who: an admin, the creator or an assignee (the rule of invoices).
 */
export type RecurringFields = {
  title: string
  account: string | null
  contact: string | null
  opportunity: string | null
  client_name: string
  client_email: string
  frequency: RecurringFrequency
  custom_days: number | null
  /** YYYY-MM-DD: the anchor every period is counted from. */
  start_date: string
  end_date: string | null
  payment_terms: PaymentTerms
  auto_send: boolean
  currency: string
  discount_type: DiscountType | null
  discount_value: string
  tax_rate: string
  notes: string
  terms: string
  assigned_to: string[]
  teams: string[]
}

export const emptyRecurring = (today: string): RecurringFields => ({
  title: '', account: null, contact: null, opportunity: null, client_name: '', client_email: '', frequency: 'MONTHLY', custom_days: null,
  start_date: today, end_date: null, payment_terms: 'NET_30', auto_send: false, currency: 'USD', discount_type: null, discount_value: '0.00',
  tax_rate: '0.00', notes: '', terms: '', assigned_to: [], teams: [],
})

export type RecurringChanges = { [K in keyof RecurringFields]?: { from: RecurringFields[K]; to: RecurringFields[K] } }

type By = { by: string | null; at: string }
export type RecurringEvent =
  /** `next_period`: the first period it generates (those dated before its creation day are not billed). */
  | { type: 'RecurringInvoiceCreated'; data: RecurringFields & { recurring_id: string; org_id: string; line_items: LineItem[]; next_period: number; created_by: string | null; at: string } }
  | { type: 'RecurringInvoiceUpdated'; data: { changes: RecurringChanges } & By }
  | { type: 'RecurringInvoiceLinesChanged'; data: { line_items: LineItem[] } & By }
  | { type: 'RecurringInvoicePaused'; data: By }
  /** `next_period`: the first period dated on or after the day it resumed (a pause skips what it covered). */
  | { type: 'RecurringInvoiceResumed'; data: { next_period: number } & By }
  | { type: 'RecurringInvoiceDeleted'; data: By }
  /** Period `period` (dated `period_date`) generated the draft `invoice_id`, whose InvoiceCreated is in the same append. */
  | { type: 'RecurringInvoiceGenerated'; data: { period: number; period_date: string; invoice_id: string; at: string } }
  /** One run generated several periods at once: they were missed (the process was down) and are caught up. */
  | { type: 'RecurringInvoiceCaughtUp'; data: { first_period: number; last_period: number; missed: number; at: string } }

export type RecurringState = {
  id: string
  exists: boolean
  deleted: boolean
  orgId: string | null
  createdBy: string | null
  fields: RecurringFields
  lines: LineItem[]
  active: boolean
  /** The next period to generate. */
  next: number
  generated: number
}

const initialState = (): RecurringState => ({ id: '', exists: false, deleted: false, orgId: null, createdBy: null, fields: emptyRecurring('1970-01-01'), lines: [], active: true, next: 0, generated: 0 })

function evolve(state: RecurringState, event: RecurringEvent): RecurringState {
  switch (event.type) {
    case 'RecurringInvoiceCreated': {
      const { recurring_id, org_id, line_items, next_period, created_by, at: _at, ...fields } = event.data
      return { ...initialState(), id: recurring_id, exists: true, orgId: org_id, createdBy: created_by, fields, lines: line_items, next: next_period }
    }
    case 'RecurringInvoiceUpdated':
      return { ...state, fields: { ...state.fields, ...Object.fromEntries(Object.entries(event.data.changes).map(([key, change]) => [key, change.to])) } }
    case 'RecurringInvoiceLinesChanged':
      return { ...state, lines: event.data.line_items }
    case 'RecurringInvoicePaused':
      return { ...state, active: false }
    case 'RecurringInvoiceResumed':
      return { ...state, active: true, next: event.data.next_period }
    case 'RecurringInvoiceDeleted':
      return { ...state, deleted: true }
    case 'RecurringInvoiceGenerated':
      return { ...state, next: event.data.period + 1, generated: state.generated + 1 }
    case 'RecurringInvoiceCaughtUp':
      return state
  }
}

type Facts = { orgId: string; actor: Actor; at: string; today: string }
export type RecurringCommand =
  | ({ type: 'CreateRecurring'; recurringId: string; input: Partial<RecurringFields>; lines: readonly LineItem[] } & Facts)
  | ({ type: 'UpdateRecurring'; input: Partial<RecurringFields>; lines?: readonly LineItem[] } & Facts)
  | ({ type: 'ToggleRecurring' } & Facts)
  | ({ type: 'DeleteRecurring' } & Facts)
  /** The scheduled process: generate `periods`, what it read as due; refused when the stream says otherwise (its read model was behind). */
  | { type: 'GenerateDue'; orgId: string; periods: readonly number[]; today: string; at: string }

/** Period n's invoice id: the same schedule and period always give the same invoice. */
export const recurringInvoiceId = (recurringId: string, period: number): string => nameBasedId(`recurring-invoice:${recurringId}:${period}`)

export const mayAccessRecurring = (state: Pick<RecurringState, 'createdBy' | 'fields'>, actor: Actor): boolean => mayAccess('Invoice', { createdBy: state.createdBy, assignedTo: state.fields.assigned_to }, actor)

/** What the next run would generate on `today`: nothing while paused or deleted. */
export const dueOf = (state: RecurringState, today: string): number[] => (state.exists && state.active && !state.deleted ? duePeriods(state.fields, state.next, today) : [])

function checkFields(fields: RecurringFields): void {
  const errors: Record<string, string[]> = {}
  if (!fields.title.trim()) errors.title = ['This field is required.']
  if (!fields.account) errors.account_id = ['This field is required.']
  if (!fields.contact) errors.contact_id = ['This field is required.']
  if (fields.frequency === 'CUSTOM' && !fields.custom_days) errors.custom_days = ['A custom frequency needs an interval in days.']
  if (fields.end_date && fields.end_date < fields.start_date) errors.end_date = ['The end date cannot be before the start date.']
  if (fields.discount_type === 'PERCENTAGE' && cents(fields.discount_value) > 10_000n) errors.discount_value = ['Expected a percentage from 0 to 100.']
  if (Object.keys(errors).length) throw new ValidationError(errors)
}

const defined = <T extends object>(input: T): Partial<T> => Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) as Partial<T>
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

function accessible(state: RecurringState, command: Facts): void {
  if (!state.exists || state.deleted || state.orgId !== command.orgId) throw new NotFoundError('Recurring invoice not found')
  if (!mayAccessRecurring(state, command.actor)) throw new ForbiddenError('Only an admin, the creator or an assignee may act on this recurring invoice')
}

function decideUpdate(command: Extract<RecurringCommand, { type: 'UpdateRecurring' }>, state: RecurringState): RecurringEvent[] {
  const next = { ...state.fields, ...defined(command.input) }
  checkFields(next)
  // Generated periods are history: the anchor and cadence they were counted from stay.
  if (state.generated > 0 && (['start_date', 'frequency', 'custom_days'] as const).some((key) => next[key] !== state.fields[key])) {
    throw new ValidationError({ start_date: ['This schedule has generated invoices: its start date and frequency can no longer change.'] })
  }
  const changes: RecurringChanges = {}
  for (const key of Object.keys(next) as (keyof RecurringFields)[]) if (!same(state.fields[key], next[key])) (changes as Record<string, unknown>)[key] = { from: state.fields[key], to: next[key] }
  const by = { by: command.actor.profileId, at: command.at }
  const events: RecurringEvent[] = Object.keys(changes).length ? [{ type: 'RecurringInvoiceUpdated', data: { changes, ...by } }] : []
  if (command.lines && !same(command.lines.map(({ id: _id, ...line }) => line), state.lines.map(({ id: _id, ...line }) => line))) {
    checkLines(command.lines)
    events.push({ type: 'RecurringInvoiceLinesChanged', data: { line_items: [...command.lines], ...by } })
  }
  return events
}

function decideGenerate(command: Extract<RecurringCommand, { type: 'GenerateDue' }>, state: RecurringState): RecurringEvent[] {
  if (!state.exists || state.orgId !== command.orgId) throw new NotFoundError('Recurring invoice not found')
  const due = dueOf(state, command.today)
  // Periods already generated (by another process, or before a restart) are done; the rest must be what is due.
  const wanted = command.periods.filter((n) => n >= state.next)
  if (!same(wanted, due.slice(0, wanted.length))) {
    throw new ConflictError('The recurring invoice changed since its periods were read; the next run generates them')
  }
  const events: RecurringEvent[] = wanted.map((period) => ({ type: 'RecurringInvoiceGenerated', data: { period, period_date: periodDate(state.fields, period), invoice_id: recurringInvoiceId(state.id, period), at: command.at } }))
  if (wanted.length > 1) events.push({ type: 'RecurringInvoiceCaughtUp', data: { first_period: wanted[0]!, last_period: wanted.at(-1)!, missed: wanted.length - 1, at: command.at } })
  return events
}

function decide(command: RecurringCommand, state: RecurringState): RecurringEvent[] {
  if (command.type === 'GenerateDue') return decideGenerate(command, state)
  if (command.type === 'CreateRecurring') {
    if (state.exists) return []
    const fields = { ...emptyRecurring(command.today), ...defined(command.input) }
    checkFields(fields)
    checkLines(command.lines)
    const next_period = firstPeriodFrom(fields, command.today, 0)
    return [{ type: 'RecurringInvoiceCreated', data: { recurring_id: command.recurringId, org_id: command.orgId, ...fields, line_items: [...command.lines], next_period, created_by: command.actor.profileId, at: command.at } }]
  }
  accessible(state, command)
  const by = { by: command.actor.profileId, at: command.at }
  switch (command.type) {
    case 'UpdateRecurring':
      return decideUpdate(command, state)
    case 'ToggleRecurring':
      return state.active ? [{ type: 'RecurringInvoicePaused', data: by }] : [{ type: 'RecurringInvoiceResumed', data: { next_period: firstPeriodFrom(state.fields, command.today, state.next), ...by } }]
    case 'DeleteRecurring':
      return [{ type: 'RecurringInvoiceDeleted', data: by }]
  }
}

export const recurringDecider: Decider<RecurringCommand, RecurringState, RecurringEvent> = { initialState, evolve, decide }

export const recurringStreams = streamCategory('recurring_invoice')
export const recurringStream = recurringStreams.stream
