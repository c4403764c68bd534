import { z } from 'zod'
import { ValidationError } from '../../errors.ts'

/** A calendar day, YYYY-MM-DD, that exists. */
export const DayParam = z.iso.date('Expected a date as YYYY-MM-DD.')

const MAX_DAYS = 366
const DAY_MS = 86_400_000
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10)

/** Today in the time zone (YYYY-MM-DD). */
export const todayIn = (timezone: string, now: Date): string => new Intl.DateTimeFormat('en-CA', { timeZone: timezone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(now)

/**
 * The days a timesheet covers: `start`..`end` when both are given, else the ISO week (Monday to
 * Sunday) of today in the organization's time zone, as the original defaults. Refused: an end
 * before the start, and more than a year of days.
 */
export function timesheetDays(range: { start?: string; end?: string }, timezone: string, now: Date): string[] {
  let start = range.start
  let end = range.end
  if (!start || !end) {
    const today = Date.parse(todayIn(timezone, now))
    const monday = today - ((new Date(today).getUTCDay() + 6) % 7) * DAY_MS
    start = dayOf(monday)
    end = dayOf(monday + 6 * DAY_MS)
  }
  const from = Date.parse(start)
  const to = Date.parse(end)
  if (Number.isNaN(from) || Number.isNaN(to)) throw new ValidationError({ start: ['Expected dates as YYYY-MM-DD.'] })
  if (to < from) throw new ValidationError({ end: ['end must be on or after start.'] })
  if ((to - from) / DAY_MS >= MAX_DAYS) throw new ValidationError({ end: [`Expected at most ${MAX_DAYS} days from start.`] })
  return Array.from({ length: (to - from) / DAY_MS + 1 }, (_, i) => dayOf(from + i * DAY_MS))
}
