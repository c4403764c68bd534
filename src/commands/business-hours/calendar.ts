import { DAY_MS, MINUTE_MS, offsetStretches } from './zone-time.ts'

/**
 * A business calendar: when the clock of a service target runs. Pure: no I/O, no clock reads.
 *
 * An instant is business time when the calendar's wall clock (its IANA zone, daylight saving
 * included) reads a time inside one of that weekday's windows, and no holiday of that local date
 * covers it. So on the night clocks go forward the skipped hour is not worked, and on the night
 * they go back a window over the repeated hour is worked twice, as the people on shift live it.
 * A calendar with no window on any day runs around the clock, through its holidays too: the
 * original's reading, which both clients state on their settings screens.
 */

export const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const
export type Weekday = (typeof WEEKDAYS)[number]

/** Minutes of the local day, open ≤ t < close, 0 ≤ open < close ≤ 1440. */
export type Window = { open: number; close: number }

/** A day off on a local date (YYYY-MM-DD): the whole day, or only [start, end) in minutes of that day. */
export type Holiday = { date: string; start?: number; end?: number }

export type BusinessCalendar = {
  /** An IANA zone, e.g. America/New_York. */
  timeZone: string
  /** Each weekday's windows (split shifts are several); none is a closed day. */
  week: Readonly<Record<Weekday, readonly Window[]>>
  holidays: readonly Holiday[]
}

type Compiled = { zone: string; aroundTheClock: boolean; byUtcDay: Window[][]; closedOn: Map<string, Window[]>; days: Map<number, Window[]> }

/** Sorted, overlaps and touching windows merged, empty ones dropped. */
function normalized(windows: readonly Window[]): Window[] {
  const sorted = windows.filter((w) => w.close > w.open).map((w) => ({ open: Math.max(0, w.open), close: Math.min(1440, w.close) })).sort((a, b) => a.open - b.open)
  const merged: Window[] = []
  for (const w of sorted) {
    const last = merged.at(-1)
    if (last && w.open <= last.close) last.close = Math.max(last.close, w.close)
    else merged.push({ ...w })
  }
  return merged
}

/** `windows` less the closed spans. */
function without(windows: readonly Window[], closed: readonly Window[]): Window[] {
  let open = [...windows]
  for (const c of closed) open = open.flatMap((w) => [{ open: w.open, close: Math.min(w.close, c.open) }, { open: Math.max(w.open, c.close), close: w.close }].filter((p) => p.close > p.open))
  return open
}

// Compiled once per calendar object (calendars are values: the same object never changes).
const compiledCalendars = new WeakMap<BusinessCalendar, Compiled>()

function compile(calendar: BusinessCalendar): Compiled {
  let compiled = compiledCalendars.get(calendar)
  if (compiled) return compiled
  // Date.getUTCDay order: Sunday first.
  const byUtcDay = [6, 0, 1, 2, 3, 4, 5].map((i) => normalized(calendar.week[WEEKDAYS[i]!]))
  const closedOn = new Map<string, Window[]>()
  for (const h of calendar.holidays) closedOn.set(h.date, normalized([...(closedOn.get(h.date) ?? []), { open: h.start ?? 0, close: h.end ?? 1440 }]))
  compiled = { zone: calendar.timeZone, aroundTheClock: byUtcDay.every((day) => day.length === 0), byUtcDay, closedOn, days: new Map() }
  compiledCalendars.set(calendar, compiled)
  return compiled
}

/** The windows of a local date, given as whole days since the epoch of its wall-clock time (kept: a calendar's days never change). */
function windowsOfLocalDay(c: Compiled, day: number): Window[] {
  let windows = c.days.get(day)
  if (!windows) {
    const weekly = c.byUtcDay[new Date(day * DAY_MS).getUTCDay()]!
    const closed = c.closedOn.get(new Date(day * DAY_MS).toISOString().slice(0, 10))
    windows = closed ? without(weekly, closed) : weekly
    c.days.set(day, windows)
  }
  return windows
}

// Far beyond any service target; only a calendar bug could walk this far.
const WALK_LIMIT_MS = 100 * 366 * DAY_MS

/** The business time from `from` on, as UTC [start, end) ms intervals in order (adjacent ones may touch). Endless. */
function* businessIntervals(c: Compiled, from: number): Generator<[number, number]> {
  for (const { start, end, offset } of offsetStretches(c.zone, from)) {
    if (start - from > WALK_LIMIT_MS) throw new RangeError(`Expected business time within 100 years of ${new Date(from).toISOString()}`)
    // Over this stretch the wall clock reads t + offset: find the windows in wall-clock time, then shift back.
    const [wallStart, wallEnd] = [start + offset, end + offset]
    for (let day = Math.floor(wallStart / DAY_MS); day * DAY_MS < wallEnd; day++) {
      for (const w of windowsOfLocalDay(c, day)) {
        const s = Math.max(wallStart, day * DAY_MS + w.open * MINUTE_MS)
        const e = Math.min(wallEnd, day * DAY_MS + w.close * MINUTE_MS)
        if (e > s) yield [s - offset, e - offset]
      }
    }
  }
}

/** Business time in [a, b), in ms; 0 when b is not after a. */
export function businessMsBetween(calendar: BusinessCalendar, a: Date, b: Date): number {
  const [from, until] = [a.getTime(), b.getTime()]
  if (until <= from) return 0
  const c = compile(calendar)
  if (c.aroundTheClock) return until - from
  let total = 0
  for (const [s, e] of businessIntervals(c, from)) {
    if (s >= until) break
    total += Math.min(e, until) - s
  }
  return total
}

/** The earliest instant at or after `from` by which `ms` of business time has passed (`from` itself for 0). */
export function addBusinessMs(calendar: BusinessCalendar, from: Date, ms: number): Date {
  const start = from.getTime()
  const c = compile(calendar)
  if (ms <= 0) return new Date(start)
  if (c.aroundTheClock) return new Date(start + ms)
  let left = ms
  for (const [s, e] of businessIntervals(c, start)) {
    if (left <= e - s) return new Date(s + left)
    left -= e - s
  }
  throw new Error('unreachable: business intervals are endless')
}

/** Business minutes in [a, b): exact, so a fraction when a or b falls inside a minute of business time. */
export const businessMinutesBetween = (calendar: BusinessCalendar, a: Date, b: Date): number => businessMsBetween(calendar, a, b) / MINUTE_MS

/** The earliest instant at or after `from` by which `minutes` of business time have passed. */
export const addBusinessMinutes = (calendar: BusinessCalendar, from: Date, minutes: number): Date => addBusinessMs(calendar, from, Math.round(minutes * MINUTE_MS))

/** "09:30", "9:30" or "09:30:00" → 570; "24:00" is the end of the day (1440). Undefined for anything else, or seconds other than 00. */
export function minutesOfTime(time: string): number | undefined {
  const match = /^(\d{1,2}):(\d{2})(?::(\d{2}))?$/.exec(time)
  if (!match) return undefined
  const [hours, minutes, seconds] = [Number(match[1]), Number(match[2]), Number(match[3] ?? 0)]
  if (seconds !== 0 || minutes > 59 || hours > 24 || (hours === 24 && minutes > 0)) return undefined
  return hours * 60 + minutes
}

/** 570 → "09:30", as calendars store times. */
export const wallTime = (minutes: number): string => `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`
