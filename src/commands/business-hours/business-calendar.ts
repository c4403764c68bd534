import { NotFoundError, ValidationError, errorsByField } from '../../errors.ts'
import type { Decider } from '../decider.ts'
import { nameBasedId } from '../name-based-id.ts'
import { streamCategory } from '../streams.ts'
import { WEEKDAYS } from './calendar.ts'
import type { Weekday } from './calendar.ts'
import { DEFAULT_CALENDAR, dayFromSpan, sameShifts, shiftsProblem } from './week.ts'
import type { FlatDay, Shift, StoredHoliday, Week } from './week.ts'

/**
 * An organization's business calendar (the original's one default calendar per organization): the
 * weekly shifts, time zone and holidays every SLA target is measured in. Versioned: the calendar is
 * version 0 (the original's default) until an admin first edits it, and each edit of the hours,
 * zone or holidays is one event carrying the next version, so an SLA instance keeps measuring in
 * the version it started with and the read model keeps every version.
 */

type At = { at: string }
export type HolidayData = StoredHoliday & { holiday_id: string; name: string }

// Events: the storage contract.
export type BusinessCalendarEvent =
  | { type: 'BusinessCalendarCreated'; data: { calendar_id: string; org_id: string; name: string; timezone: string; week: Week; version: number; created_by: string | null } & At }
  | { type: 'BusinessCalendarChanged'; data: { version: number; name?: string; timezone?: string; week?: Week } & At }
  | { type: 'BusinessHolidayAdded'; data: { version: number } & HolidayData & At }
  | { type: 'BusinessHolidayRemoved'; data: { version: number; holiday_id: string } & At }

// Fold. Before its first event the calendar is the default one, at version 0.
export type BusinessCalendarState = { exists: boolean; orgId: string | null; name: string; timezone: string; week: Week; holidays: ReadonlyMap<string, HolidayData>; version: number }

export const initialBusinessCalendar = (): BusinessCalendarState => ({ exists: false, orgId: null, ...DEFAULT_CALENDAR, holidays: new Map(), version: 0 })

export function evolveBusinessCalendar(state: BusinessCalendarState, event: BusinessCalendarEvent): BusinessCalendarState {
  switch (event.type) {
    case 'BusinessCalendarCreated': {
      const { org_id, name, timezone, week, version } = event.data
      return { ...state, exists: true, orgId: org_id, name, timezone, week, version }
    }
    case 'BusinessCalendarChanged': {
      const { version, name, timezone, week } = event.data
      return { ...state, version, name: name ?? state.name, timezone: timezone ?? state.timezone, week: week ?? state.week }
    }
    case 'BusinessHolidayAdded': {
      const { version, at: _at, ...holiday } = event.data
      return { ...state, version, holidays: new Map(state.holidays).set(holiday.holiday_id, holiday) }
    }
    case 'BusinessHolidayRemoved': {
      const holidays = new Map(state.holidays)
      holidays.delete(event.data.holiday_id)
      return { ...state, version: event.data.version, holidays }
    }
  }
}

// Decisions. The calendar id is the organization's (defaultCalendarId); time and new ids arrive in the command.
type OnCalendar = { calendarId: string; orgId: string; actorId: string | null; at: string }
/**
 * An edit of the calendar: days through the original's two flat fields (`spans`, see dayFromSpan)
 * and through their shifts (`shifts`, which win for a day given both).
 */
export type CalendarChanges = { name?: string; timezone?: string; spans?: Partial<Record<Weekday, FlatDay>>; shifts?: Partial<Record<Weekday, Shift[]>> }
export type BusinessCalendarCommand =
  | ({ type: 'ChangeBusinessCalendar'; changes: CalendarChanges } & OnCalendar)
  /** Idempotent on the date, as the original: a date already on the calendar adds nothing. */
  | ({ type: 'AddBusinessHoliday'; holiday: HolidayData } & OnCalendar)
  | ({ type: 'RemoveBusinessHoliday'; holidayId: string } & OnCalendar)

/** Another organization's calendar reads as missing. */
function ofOrganization(state: BusinessCalendarState, command: OnCalendar): void {
  if (command.calendarId !== defaultCalendarId(command.orgId) || (state.exists && state.orgId !== command.orgId)) throw new NotFoundError()
}

/** The first edit of a calendar also records the default it starts from, as version 0. */
function created(state: BusinessCalendarState, command: OnCalendar): BusinessCalendarEvent[] {
  if (state.exists) return []
  const { name, timezone, week } = DEFAULT_CALENDAR
  return [{ type: 'BusinessCalendarCreated', data: { calendar_id: command.calendarId, org_id: command.orgId, name, timezone, week, version: 0, created_by: command.actorId, at: command.at } }]
}

/** The week after the edit, or the original's field errors. */
function editedWeek(current: Week, { spans = {}, shifts = {} }: CalendarChanges): Week {
  const problems: [string, string][] = []
  const week = { ...current }
  for (const day of WEEKDAYS) {
    const given = shifts[day]
    const span = spans[day]
    if (given) {
      const problem = shiftsProblem(given)
      if (problem) problems.push([`shifts.${day}`, problem])
      else week[day] = given
    } else if (span) {
      const edited = dayFromSpan(current[day], span, day)
      if ('field' in edited) problems.push([edited.field, edited.message])
      else week[day] = edited
    }
  }
  if (problems.length) throw new ValidationError(errorsByField(problems))
  return week
}

function changesOf(state: BusinessCalendarState, changes: CalendarChanges): { name?: string; timezone?: string; week?: Week } {
  const { name, timezone } = changes
  const week = editedWeek(state.week, changes)
  return {
    ...(name !== undefined && name !== state.name && { name }),
    ...(timezone !== undefined && timezone !== state.timezone && { timezone }),
    ...(WEEKDAYS.some((day) => !sameShifts(week[day], state.week[day])) && { week }),
  }
}

export function decideBusinessCalendar(command: BusinessCalendarCommand, state: BusinessCalendarState): BusinessCalendarEvent[] {
  ofOrganization(state, command)
  const { at } = command
  const version = state.version + 1
  switch (command.type) {
    case 'ChangeBusinessCalendar': {
      const changes = changesOf(state, command.changes)
      if (!Object.keys(changes).length) return []
      return [...created(state, command), { type: 'BusinessCalendarChanged', data: { version, ...changes, at } }]
    }
    case 'AddBusinessHoliday': {
      const { holiday } = command
      if ([...state.holidays.values()].some((h) => h.date === holiday.date)) return []
      if ((holiday.start_time === null) !== (holiday.end_time === null) || shiftsProblem(holiday.start_time ? [{ open: holiday.start_time, close: holiday.end_time! }] : [])) {
        throw new ValidationError({ end_time: ['A part-day holiday needs a start and an end time, the end after the start.'] })
      }
      return [...created(state, command), { type: 'BusinessHolidayAdded', data: { version, ...holiday, at } }]
    }
    case 'RemoveBusinessHoliday':
      if (!state.holidays.has(command.holidayId)) throw new NotFoundError()
      return [{ type: 'BusinessHolidayRemoved', data: { version, holiday_id: command.holidayId, at } }]
  }
}

export const businessCalendarDecider: Decider<BusinessCalendarCommand, BusinessCalendarState, BusinessCalendarEvent> = { initialState: initialBusinessCalendar, evolve: evolveBusinessCalendar, decide: decideBusinessCalendar }

/** The organization's one default calendar has an id derived from the organization's: two first edits at once write the same stream, and no second default can exist. */
export const defaultCalendarId = (orgId: string): string => nameBasedId(`business-calendar:${orgId}`)

export const businessCalendarStreams = streamCategory('business_calendar')
