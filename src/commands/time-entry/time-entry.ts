import { ConflictError, DomainError, NotFoundError, ValidationError } from '../../errors.ts'
import type { Decider } from '../decider.ts'
import { streamCategory } from '../streams.ts'

/**
 * An agent's time on cases (the original's TimeEntry, backend/cases/time_views.py): timers started
 * and stopped, and entries logged by hand. One stream per agent, `timesheet-<profile id>`, holds all
 * of their entries, so "one running timer per agent" is a rule of one decision, not a race between
 * streams (the original needed a partial unique index for it). Minutes are whole: the floor of the
 * time between start and end, never negative. Invoicing bills entries (TimeEntryBilled, in the
 * same append as the invoice that bills them): a billed entry is never billed again, and no longer
 * changes or goes away, so the invoice and the time it bills always agree.
 */

export type TimeEntryFields = { description: string; billable: boolean; hourly_rate: string | null; currency: string }
type Owner = { time_entry_id: string; org_id: string; case_id: string; profile_id: string }
type Stamp = { by: string | null; at: string }

// Events: the storage contract.
export type TimeEntryEvent =
  | { type: 'TimerStarted'; data: Owner & TimeEntryFields & { started_at: string } & Stamp }
  | { type: 'TimeLogged'; data: Owner & TimeEntryFields & { started_at: string; ended_at: string; duration_minutes: number } & Stamp }
  | { type: 'TimerStopped'; data: { time_entry_id: string; ended_at: string; duration_minutes: number; auto_stopped?: true } & Stamp }
  | { type: 'TimeEntryUpdated'; data: { time_entry_id: string; changes: TimeEntryChanges; duration_minutes: number } & Stamp }
  | { type: 'TimeEntryDeleted'; data: { time_entry_id: string } & Stamp }
  /** The entry is billed by the draft invoice `invoice_id`, whose InvoiceCreated is in the same append. */
  | { type: 'TimeEntryBilled'; data: { time_entry_id: string; invoice_id: string } & Stamp }

export type TimeEntryChanges = Partial<TimeEntryFields & { started_at: string; ended_at: string }>

// Fold.
type Entry = { caseId: string; startedAt: string; endedAt: string | null; fields: TimeEntryFields; deleted: boolean; billedBy: string | null }
export type TimesheetState = { orgId: string | null; entries: ReadonlyMap<string, Entry>; running: string | null }

export const initialTimesheetState = (): TimesheetState => ({ orgId: null, entries: new Map(), running: null })

const withEntry = (state: TimesheetState, id: string, entry: Entry): ReadonlyMap<string, Entry> => new Map(state.entries).set(id, entry)

export function evolveTimesheet(state: TimesheetState, event: TimeEntryEvent): TimesheetState {
  const id = event.data.time_entry_id
  const entry = state.entries.get(id)
  const stillRunning = (ended: boolean) => (state.running === id && ended ? null : state.running)
  switch (event.type) {
    case 'TimerStarted':
    case 'TimeLogged': {
      const { org_id, case_id, started_at, description, billable, hourly_rate, currency } = event.data
      const endedAt = event.type === 'TimeLogged' ? event.data.ended_at : null
      return { orgId: org_id, entries: withEntry(state, id, { caseId: case_id, startedAt: started_at, endedAt, fields: { description, billable, hourly_rate, currency }, deleted: false, billedBy: null }), running: endedAt === null ? id : state.running }
    }
    case 'TimerStopped':
      return entry ? { ...state, entries: withEntry(state, id, { ...entry, endedAt: event.data.ended_at }), running: stillRunning(true) } : state
    case 'TimeEntryUpdated': {
      if (!entry) return state
      const { started_at, ended_at, ...fields } = event.data.changes
      const next = { ...entry, startedAt: started_at ?? entry.startedAt, endedAt: ended_at ?? entry.endedAt, fields: { ...entry.fields, ...fields } }
      return { ...state, entries: withEntry(state, id, next), running: stillRunning(ended_at !== undefined) }
    }
    case 'TimeEntryDeleted':
      return entry ? { ...state, entries: withEntry(state, id, { ...entry, deleted: true }), running: stillRunning(true) } : state
    case 'TimeEntryBilled':
      return entry ? { ...state, entries: withEntry(state, id, { ...entry, billedBy: event.data.invoice_id }) } : state
  }
}

/** Whole minutes from start to end, never negative. */
export const minutesBetween = (startedAt: string, endedAt: string): number => Math.max(0, Math.floor((Date.parse(endedAt) - Date.parse(startedAt)) / 60_000))

// Decisions. The entry's owner, case and organization, checked by the use case, arrive in the command.
export type TimeEntryCommand =
  | { type: 'StartTimer'; entry: Owner; fields: TimeEntryFields; by: string | null; at: string }
  | { type: 'LogTime'; entry: Owner; fields: TimeEntryFields; startedAt: string; endedAt: string; by: string | null; at: string }
  | { type: 'StopTimer'; orgId: string; entryId: string; by: string | null; at: string; auto?: true }
  | { type: 'ChangeTimeEntry'; orgId: string; entryId: string; changes: TimeEntryChanges; by: string | null; at: string }
  | { type: 'DeleteTimeEntry'; orgId: string; entryId: string; by: string | null; at: string }
  /** Bills entries to a new invoice, as the use case read them (`billed`: their minutes, rate and currency, which the invoice's lines were made of). */
  | { type: 'BillTimeEntries'; orgId: string; invoiceId: string; billed: readonly BilledEntry[]; by: string | null; at: string }

export type BilledEntry = { id: string; minutes: number; hourlyRate: string | null; currency: string }

/** The agent already has a timer running: 409, naming it, so a client can offer to stop it (as the original answers). */
export class TimerRunningError extends DomainError {
  constructor(entryId: string, caseId: string) {
    super(409, { detail: 'You already have a running timer.', running_entry_id: entryId, running_case_id: caseId })
  }
}

function live(state: TimesheetState, orgId: string, id: string): Entry {
  const entry = state.entries.get(id)
  if (!entry || entry.deleted || state.orgId !== orgId) throw new NotFoundError()
  return entry
}

/** A billed entry is the invoice's record of that time: it no longer changes (400). */
function unbilled(entry: Entry): Entry {
  if (entry.billedBy !== null) throw new ValidationError('This time entry has been invoiced and can no longer change.')
  return entry
}

/** "0100.5" and "100.50" are one rate (the read model answers numeric's form, the event keeps the one sent). */
const canonical = (decimal: string): string => {
  const [whole, fraction = ''] = decimal.split('.')
  return `${BigInt(whole!)}.${fraction.padEnd(2, '0')}`
}

/** 400 naming the first entry that cannot be billed; 409 when one changed since the invoice's lines were made of it. */
function billable(state: TimesheetState, orgId: string, billed: BilledEntry): void {
  const entry = live(state, orgId, billed.id)
  if (entry.billedBy !== null) throw new ValidationError(`Time entry ${billed.id} has already been invoiced.`)
  if (entry.endedAt === null) throw new ValidationError(`Time entry ${billed.id} is still running and cannot be invoiced.`)
  if (!entry.fields.billable) throw new ValidationError(`Time entry ${billed.id} is not marked billable.`)
  const sameRate = entry.fields.hourly_rate === null || billed.hourlyRate === null ? entry.fields.hourly_rate === billed.hourlyRate : canonical(entry.fields.hourly_rate) === canonical(billed.hourlyRate)
  const same = minutesBetween(entry.startedAt, entry.endedAt) === billed.minutes && sameRate && entry.fields.currency === billed.currency
  if (!same) throw new ConflictError(`Time entry ${billed.id} changed while it was being invoiced; retry.`)
}

function inOrder(startedAt: string, endedAt: string | null): void {
  if (endedAt !== null && Date.parse(endedAt) < Date.parse(startedAt)) throw new ValidationError({ ended_at: ['ended_at must be on or after started_at.'] })
}

function changed(entry: Entry, requested: TimeEntryChanges): TimeEntryChanges {
  const current: Required<TimeEntryChanges> = { ...entry.fields, started_at: entry.startedAt, ended_at: entry.endedAt ?? '' }
  const same = (key: keyof TimeEntryChanges, value: unknown) => (key === 'started_at' || key === 'ended_at' ? Date.parse(String(value)) === Date.parse(current[key]) : current[key] === value)
  return Object.fromEntries(Object.entries(requested).filter(([key, value]) => value !== undefined && !same(key as keyof TimeEntryChanges, value))) as TimeEntryChanges
}

export function decideTimesheet(command: TimeEntryCommand, state: TimesheetState): TimeEntryEvent[] {
  const stamp = { by: command.by, at: command.at }
  switch (command.type) {
    case 'StartTimer': {
      if (state.entries.has(command.entry.time_entry_id)) return []
      const running = state.running === null ? undefined : state.entries.get(state.running)
      if (state.running !== null && running) throw new TimerRunningError(state.running, running.caseId)
      return [{ type: 'TimerStarted', data: { ...command.entry, ...command.fields, started_at: command.at, ...stamp } }]
    }
    case 'LogTime':
      if (state.entries.has(command.entry.time_entry_id)) return []
      inOrder(command.startedAt, command.endedAt)
      return [{ type: 'TimeLogged', data: { ...command.entry, ...command.fields, started_at: command.startedAt, ended_at: command.endedAt, duration_minutes: minutesBetween(command.startedAt, command.endedAt), ...stamp } }]
    case 'StopTimer': {
      // The auto-stop process finds timers in a read model that may lag: one stopped or deleted meanwhile is left alone.
      const current = state.entries.get(command.entryId)
      if (command.auto && (!current || current.deleted || current.endedAt !== null)) return []
      const entry = live(state, command.orgId, command.entryId)
      if (entry.endedAt !== null) throw new ValidationError('Timer is already stopped.')
      // A clock behind the start (another server's) stops it where it began, never before.
      const endedAt = Date.parse(command.at) < Date.parse(entry.startedAt) ? entry.startedAt : command.at
      return [{ type: 'TimerStopped', data: { time_entry_id: command.entryId, ended_at: endedAt, duration_minutes: minutesBetween(entry.startedAt, endedAt), ...(command.auto && { auto_stopped: true as const }), ...stamp } }]
    }
    case 'ChangeTimeEntry': {
      const entry = unbilled(live(state, command.orgId, command.entryId))
      const changes = changed(entry, command.changes)
      if (!Object.keys(changes).length) return []
      const startedAt = changes.started_at ?? entry.startedAt
      const endedAt = changes.ended_at ?? entry.endedAt
      inOrder(startedAt, endedAt)
      return [{ type: 'TimeEntryUpdated', data: { time_entry_id: command.entryId, changes, duration_minutes: endedAt === null ? 0 : minutesBetween(startedAt, endedAt), ...stamp } }]
    }
    case 'DeleteTimeEntry': {
      const entry = state.entries.get(command.entryId)
      if (entry?.deleted && state.orgId === command.orgId) return []
      unbilled(live(state, command.orgId, command.entryId))
      return [{ type: 'TimeEntryDeleted', data: { time_entry_id: command.entryId, ...stamp } }]
    }
    case 'BillTimeEntries': {
      // Billed already by this very invoice: a retried decision, nothing new.
      if (command.billed.every((b) => state.entries.get(b.id)?.billedBy === command.invoiceId)) return []
      for (const entry of command.billed) billable(state, command.orgId, entry)
      return command.billed.map((entry) => ({ type: 'TimeEntryBilled', data: { time_entry_id: entry.id, invoice_id: command.invoiceId, ...stamp } }))
    }
  }
}

export const timesheetDecider: Decider<TimeEntryCommand, TimesheetState, TimeEntryEvent> = { initialState: initialTimesheetState, evolve: evolveTimesheet, decide: decideTimesheet }

/** An agent's timesheet stream: `timesheet-<profile id>`. */
export const timesheetStreams = streamCategory('timesheet')
export const timesheetStream = timesheetStreams.stream
