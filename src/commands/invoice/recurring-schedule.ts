/**
 * When a recurring invoice's periods fall (the original's RECURRING_FREQUENCIES). The n-th period
 * (0 for the first) is computed from the anchor, the start date: start plus n periods, the day
 * clamped to the month's end. It is never chained from the previous date, so a schedule never
 * drifts: Jan 31, Feb 28, Mar 31 (the original's `calculate_next_date` adds a month to the last
 * date and so goes Jan 31, Feb 28, Mar 28).
 */
export const RECURRING_FREQUENCIES = ['WEEKLY', 'BIWEEKLY', 'MONTHLY', 'QUARTERLY', 'SEMI_ANNUALLY', 'YEARLY', 'CUSTOM'] as const
export type RecurringFrequency = (typeof RECURRING_FREQUENCIES)[number]

const DAYS: Partial<Record<RecurringFrequency, number>> = { WEEKLY: 7, BIWEEKLY: 14 }
const MONTHS: Partial<Record<RecurringFrequency, number>> = { MONTHLY: 1, QUARTERLY: 3, SEMI_ANNUALLY: 6, YEARLY: 12 }

export type Cadence = { start_date: string; frequency: RecurringFrequency; custom_days: number | null }

const utc = (day: string) => new Date(`${day}T00:00:00Z`)
const dayOf = (date: Date) => date.toISOString().slice(0, 10)

/** The day `months` months after `day`, on the same day of the month or the month's last day. */
export function addMonthsClamped(day: string, months: number): string {
  const [year, month, date] = day.split('-').map(Number) as [number, number, number]
  const target = new Date(Date.UTC(year, month - 1 + months, 1))
  const lastDay = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate()
  target.setUTCDate(Math.min(date, lastDay))
  return dayOf(target)
}

/** The date (YYYY-MM-DD) of period `n` (0-based) of the cadence. CUSTOM without a number of days is refused when the schedule is written. */
export function periodDate(cadence: Cadence, n: number): string {
  const months = MONTHS[cadence.frequency]
  if (months !== undefined) return addMonthsClamped(cadence.start_date, months * n)
  const days = DAYS[cadence.frequency] ?? cadence.custom_days ?? 1
  const date = utc(cadence.start_date)
  date.setUTCDate(date.getUTCDate() + days * n)
  return dayOf(date)
}

/** The first period dated on or after `day` (at least `from`): where a resumed schedule picks up. */
export function firstPeriodFrom(cadence: Cadence, day: string, from: number): number {
  let n = from
  while (periodDate(cadence, n) < day) n++
  return n
}

/** The periods from `next` that are due on `today`: dated today or before, and not after the end date. */
export function duePeriods(cadence: Cadence & { end_date: string | null }, next: number, today: string): number[] {
  const due: number[] = []
  for (let n = next; periodDate(cadence, n) <= today && (cadence.end_date === null || periodDate(cadence, n) <= cadence.end_date); n++) due.push(n)
  return due
}
