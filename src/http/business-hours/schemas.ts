import { z } from 'zod'
import { WEEKDAYS, minutesOfTime, wallTime } from '../../commands/business-hours/calendar.ts'
import type { Weekday } from '../../commands/business-hours/calendar.ts'
import type { Shift } from '../../commands/business-hours/week.ts'
import { MAX_SHIFTS, daySpan } from '../../commands/business-hours/week.ts'
import { isTimezone } from '../../identity/organizations.ts'
import type { BusinessCalendarView, BusinessHolidayRow } from '../../projections/business-hours/queries.ts'
import { blankable } from '../accounts/schemas.ts'

/**
 * The original's business-hours shapes (backend/business_hours/serializers.py): a calendar is its
 * name, zone and fourteen flat fields `<day>_open`/`<day>_close` ("HH:MM:SS", both null for a closed
 * day) with its holidays; ours adds each day's `shifts` (split shifts) and the `version`.
 */

type FlatKey = `${Weekday}_${'open' | 'close'}`
const flatKeys = WEEKDAYS.flatMap((day) => [`${day}_open`, `${day}_close`] as FlatKey[])
const byDay = <T extends z.ZodType>(schema: T) => z.object(Object.fromEntries(WEEKDAYS.map((day) => [day, schema])) as Record<Weekday, T>)
const byFlatKey = <T extends z.ZodType>(schema: T) => Object.fromEntries(flatKeys.map((key) => [key, schema])) as Record<FlatKey, T>

/** A wall-clock time in: "09:30", "9:30" or "09:30:00" (on the minute); "24:00" closes at midnight. Stored as "HH:MM". */
export const WallTime = z
  .string()
  .trim()
  .refine((value) => minutesOfTime(value) !== undefined, 'Expected a time on the minute, like 09:30 or 09:30:00 (24:00 closes at midnight).')
  .transform((value) => wallTime(minutesOfTime(value) ?? 0))

const ShiftIn = z.object({ open: WallTime, close: WallTime })
/** The original's answer shape of a time. */
const TimeOut = z.string().describe('HH:MM:SS')
const answerTime = (time: string | null): string | null => (time === null ? null : `${time}:00`)
const readOnly = z.unknown().optional().describe('Read-only: ignored')

export const CalendarBody = z.object({
  name: z.string().trim().min(1, 'This field may not be blank.').max(100).optional(),
  timezone: z.string().trim().refine(isTimezone, 'Not a valid IANA timezone.').optional().describe('An IANA zone, e.g. America/New_York'),
  ...byFlatKey(blankable(WallTime).describe("The day's first opening / last closing; both null closes the day, a new span makes it one shift, the span it has keeps its shifts")),
  shifts: byDay(z.array(ShiftIn).max(MAX_SHIFTS).optional())
    .optional()
    .describe("Split shifts: a day's shifts in order, not overlapping ([] closes it); win over that day's flat fields"),
  id: readOnly,
  is_default: readOnly,
  holidays: readOnly.describe('Read-only: holidays have their own routes'),
  version: readOnly,
})

export const HolidayBody = z.object({
  date: z.iso.date('Expected a date, YYYY-MM-DD.'),
  name: z.string().trim().min(1, 'This field may not be blank.').max(100),
  start_time: blankable(WallTime).describe('With end_time: only this part of the day is off (wall clock of the calendar\'s zone)'),
  end_time: blankable(WallTime),
  id: readOnly,
})

export const Holiday = z.object({
  id: z.uuid(),
  date: z.string().describe('YYYY-MM-DD, a local date of the calendar'),
  name: z.string(),
  start_time: TimeOut.nullable().describe('Null with end_time: the whole day'),
  end_time: TimeOut.nullable(),
})

export const Calendar = z.object({
  id: z.uuid(),
  name: z.string(),
  timezone: z.string(),
  is_default: z.boolean().describe('Always true: one calendar per organization'),
  ...byFlatKey(TimeOut.nullable()),
  shifts: byDay(z.array(z.object({ open: TimeOut, close: TimeOut }))),
  holidays: z.array(Holiday).describe('By date'),
  version: z.number().int().describe('0 until first edited; each edit of the hours, zone or holidays makes the next. SLA targets keep the version they started with'),
})

export const holidayBody = (row: BusinessHolidayRow): z.infer<typeof Holiday> => ({ id: row.id, date: row.date, name: row.name, start_time: answerTime(row.start_time), end_time: answerTime(row.end_time) })

const shiftsOut = (shifts: readonly Shift[]) => shifts.map((s) => ({ open: `${s.open}:00`, close: `${s.close}:00` }))

export function calendarBody(view: BusinessCalendarView): z.infer<typeof Calendar> {
  const flat = Object.fromEntries(
    WEEKDAYS.flatMap((day) => {
      const { open, close } = daySpan(view.week[day])
      return [[`${day}_open`, answerTime(open)], [`${day}_close`, answerTime(close)]]
    }),
  ) as Record<FlatKey, string | null>
  const shifts = Object.fromEntries(WEEKDAYS.map((day) => [day, shiftsOut(view.week[day])])) as Record<Weekday, ReturnType<typeof shiftsOut>>
  return { id: view.id, name: view.name, timezone: view.timezone, is_default: true, ...flat, shifts, holidays: view.holidays.map(holidayBody), version: view.version }
}

/** The body's edits of the days, as the decider takes them. */
export function dayEdits(body: z.infer<typeof CalendarBody>): { spans: Partial<Record<Weekday, { open?: string | null; close?: string | null }>>; shifts: Partial<Record<Weekday, Shift[]>> } {
  const spans: Partial<Record<Weekday, { open?: string | null; close?: string | null }>> = {}
  for (const day of WEEKDAYS) {
    const [open, close] = [body[`${day}_open`], body[`${day}_close`]]
    if (open !== undefined || close !== undefined) spans[day] = { open, close }
  }
  const shifts = Object.fromEntries(WEEKDAYS.flatMap((day) => (body.shifts?.[day] ? [[day, body.shifts[day]]] : []))) as Partial<Record<Weekday, Shift[]>>
  return { spans, shifts }
}
