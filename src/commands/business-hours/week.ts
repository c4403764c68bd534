import { z } from 'zod'
import { WEEKDAYS, minutesOfTime } from './calendar.ts'
import type { BusinessCalendar, Weekday, Window } from './calendar.ts'

/**
 * A business calendar as its events store it: wall-clock times "HH:MM" ("24:00" closes at
 * midnight), each weekday a list of shifts (several make a split shift; none, a closed day).
 */
export type Shift = { open: string; close: string }
export type Week = Record<Weekday, Shift[]>
export type StoredHoliday = { date: string; start_time: string | null; end_time: string | null }
export type CalendarDefinition = { timezone: string; week: Week; holidays: readonly StoredHoliday[] }

// The stored shapes, for the event catalogue and for rows read back from jsonb.
const StoredTime = z.string().regex(/^\d{2}:\d{2}$/).describe('HH:MM on the wall clock of the calendar\'s zone; 24:00 is the end of the day')
const Shifts = z.array(z.strictObject({ open: StoredTime, close: StoredTime }))
export const WeekData = z.strictObject({ monday: Shifts, tuesday: Shifts, wednesday: Shifts, thursday: Shifts, friday: Shifts, saturday: Shifts, sunday: Shifts }).describe('Each weekday\'s shifts, in order (several: a split shift; none: closed)')
export const HolidaySpan = { date: z.iso.date(), start_time: StoredTime.nullable(), end_time: StoredTime.nullable() }
export const DefinitionData = z.object({ timezone: z.string(), week: WeekData, holidays: z.array(z.object(HolidaySpan)) })

/** At most this many shifts a day: more is a mistake, not a rota. */
export const MAX_SHIFTS = 6

const nine: Shift = { open: '09:00', close: '17:00' }
/** The calendar every organization has before an admin edits it (version 0): the original's, Monday to Friday 9 to 5 in UTC. Frozen: stored versions rely on it. */
export const DEFAULT_CALENDAR: Readonly<{ name: string; timezone: string; week: Week }> = { name: 'Default', timezone: 'UTC', week: { monday: [nine], tuesday: [nine], wednesday: [nine], thursday: [nine], friday: [nine], saturday: [], sunday: [] } }

const minutes = (time: string): number => minutesOfTime(time) ?? Number.NaN
const windowOf = (shift: Shift): Window => ({ open: minutes(shift.open), close: minutes(shift.close) })

/** The calendar the SLA clock measures with. */
export function calendarOf(definition: CalendarDefinition): BusinessCalendar {
  const week = Object.fromEntries(WEEKDAYS.map((day) => [day, definition.week[day].map(windowOf)])) as Record<Weekday, Window[]>
  const holidays = definition.holidays.map((h) => (h.start_time && h.end_time ? { date: h.date, start: minutes(h.start_time), end: minutes(h.end_time) } : { date: h.date }))
  return { timeZone: definition.timezone, week, holidays }
}

/** What is wrong with a day's shifts, or undefined: each closes after it opens, in order, none overlapping. */
export function shiftsProblem(shifts: readonly Shift[]): string | undefined {
  if (shifts.length > MAX_SHIFTS) return `Expected at most ${MAX_SHIFTS} shifts a day.`
  let previousClose = -1
  for (const { open, close } of shifts.map(windowOf)) {
    if (!(open >= 0 && close > open)) return 'Close time must be after open time.'
    if (open < previousClose) return 'Shifts must be in order and must not overlap.'
    previousClose = close
  }
  return undefined
}

export const sameShifts = (a: readonly Shift[], b: readonly Shift[]): boolean => a.length === b.length && a.every((s, i) => minutes(s.open) === minutes(b[i]!.open) && minutes(s.close) === minutes(b[i]!.close))

/** A day as the original's two flat fields: its first opening and its last closing (null, null when closed). */
export function daySpan(shifts: readonly Shift[]): { open: string | null; close: string | null } {
  return { open: shifts[0]?.open ?? null, close: shifts.at(-1)?.close ?? null }
}

export type FlatDay = { open?: string | null; close?: string | null }

/**
 * A day after an edit through the original's two flat fields (a field left out keeps its value):
 * both null closes the day; a span opens it as one shift, except that the span the day already
 * has keeps its split shifts (a client that sends back what it read changes nothing). Answers
 * the field and message of what is wrong instead, in the original's words.
 */
export function dayFromSpan(current: readonly Shift[], edit: FlatDay, day: Weekday): Shift[] | { field: string; message: string } {
  const span = daySpan(current)
  const open = edit.open === undefined ? span.open : edit.open
  const close = edit.close === undefined ? span.close : edit.close
  if ((open === null) !== (close === null)) return { field: `${day}_open`, message: 'Open and close must be both set or both null.' }
  if (open === null || close === null) return []
  if (!(minutes(close) > minutes(open))) return { field: `${day}_close`, message: 'Close time must be after open time.' }
  if (span.open !== null && span.close !== null && minutes(open) === minutes(span.open) && minutes(close) === minutes(span.close)) return [...current]
  return [{ open, close }]
}
