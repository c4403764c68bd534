import fc from 'fast-check'
import t from 'tap'
import { WEEKDAYS, addBusinessMinutes, businessMinutesBetween } from '../../src/commands/business-hours/calendar.ts'
import type { BusinessCalendar, Holiday, Weekday, Window } from '../../src/commands/business-hours/calendar.ts'
import { DEFAULT_SLA_HOURS, slaStatus } from '../../src/commands/business-hours/sla-clock.ts'
import type { SlaEvent } from '../../src/commands/business-hours/sla-clock.ts'

/**
 * The SLA clock (issue 32): the business calendar against a naive minute-by-minute reference that
 * reads each minute's wall clock through Intl (split shifts, whole and part-day holidays, time zones,
 * daylight saving in New York, Berlin, Lord Howe's half hour and Santiago's midnight changes), and
 * the clock's used, paused and breach figures against a minute-by-minute simulation of its events.
 * Runs are kept small: the reference formats every minute of every range.
 */

const MIN = 60_000
const DAY = 86_400_000
const RUNS = Number(process.env.SLA_RUNS ?? 30)

// --- The naive reference: one minute at a time, its wall clock read by a formatter of its own.
const formats = new Map<string, Intl.DateTimeFormat>()
function wallClock(zone: string, t: number): { date: string; weekday: Weekday; minute: number } {
  let format = formats.get(zone)
  if (!format) formats.set(zone, (format = new Intl.DateTimeFormat('en-GB', { timeZone: zone, weekday: 'long', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' })))
  const p = Object.fromEntries(format.formatToParts(t).map((part) => [part.type, part.value]))
  return { date: `${p.year}-${p.month}-${p.day}`, weekday: p.weekday!.toLowerCase() as Weekday, minute: Number(p.hour) * 60 + Number(p.minute) }
}
function isBusinessMinute(calendar: BusinessCalendar, t: number): boolean {
  if (WEEKDAYS.every((day) => calendar.week[day].length === 0)) return true
  const { date, weekday, minute } = wallClock(calendar.timeZone, t)
  const open = calendar.week[weekday].some((w) => w.open <= minute && minute < w.close)
  return open && !calendar.holidays.some((h) => h.date === date && (h.start ?? 0) <= minute && minute < (h.end ?? 1440))
}
function naiveMinutesBetween(calendar: BusinessCalendar, a: number, b: number): number {
  let n = 0
  for (let t = a; t < b; t += MIN) if (isBusinessMinute(calendar, t)) n++
  return n
}
function naiveAddMinutes(calendar: BusinessCalendar, from: number, minutes: number): number {
  if (minutes === 0) return from
  for (let t = from, n = 0; ; t += MIN) if (isBusinessMinute(calendar, t) && ++n === minutes) return t + MIN
}

// --- Calendars in a zone, over a range that covers one of its 2026 clock changes half of the time.
const PLACES: [zone: string, change: string][] = [
  ['America/New_York', '2026-03-08T07:00:00Z'],
  ['America/New_York', '2026-11-01T06:00:00Z'],
  ['Europe/Berlin', '2026-03-29T01:00:00Z'],
  ['Europe/Berlin', '2026-10-25T01:00:00Z'],
  ['Australia/Lord_Howe', '2026-04-04T15:00:00Z'], // back half an hour
  ['Australia/Lord_Howe', '2026-10-03T15:30:00Z'],
  ['America/Santiago', '2026-04-05T03:00:00Z'], // at midnight
  ['America/Santiago', '2026-09-06T04:00:00Z'],
  ['Pacific/Chatham', '2026-04-04T14:00:00Z'], // at 03:45, +13:45
  ['Asia/Kolkata', '2026-12-24T12:00:00Z'],
  ['UTC', '2026-12-24T12:00:00Z'],
]
const cut = fc.oneof(fc.integer({ min: 0, max: 1440 }), fc.constantFrom(0, 60, 90, 120, 150, 165, 180, 225, 1440))
/** Up to three shifts: sorted distinct cuts, paired. */
const shifts: fc.Arbitrary<Window[]> = fc.uniqueArray(cut, { maxLength: 6 }).map((cuts) => {
  const sorted = [...cuts].sort((x, y) => x - y)
  return Array.from({ length: Math.floor(sorted.length / 2) }, (_, i) => ({ open: sorted[2 * i]!, close: sorted[2 * i + 1]! }))
})
const week = fc.tuple(...WEEKDAYS.map(() => shifts)).map((days) => Object.fromEntries(WEEKDAYS.map((day, i) => [day, days[i]!])) as Record<Weekday, Window[]>)
const around = fc.record({ place: fc.constantFrom(...PLACES), before: fc.integer({ min: 0, max: 2 * 1440 }), span: fc.integer({ min: 0, max: 2 * 1440 }) })
const holidays = (from: number): fc.Arbitrary<Holiday[]> =>
  fc.array(
    fc.record({ day: fc.integer({ min: -1, max: 3 }), part: fc.option(fc.tuple(cut, cut).filter(([s, e]) => s !== e)) }).map(({ day, part }) => {
      const date = new Date(from + day * DAY).toISOString().slice(0, 10)
      return part ? { date, start: Math.min(...part), end: Math.max(...part) } : { date }
    }),
    { maxLength: 3 },
  )
const world = around.chain(({ place: [zone, change], before, span }) => {
  const a = Date.parse(change) - before * MIN
  return fc.record({ a: fc.constant(a), b: fc.constant(a + span * MIN), calendar: fc.record({ timeZone: fc.constant(zone), week, holidays: holidays(a) }) })
})

t.test('the calendar against the minute-by-minute reference', async (t) => {
  fc.assert(
    fc.property(world, ({ a, b, calendar }) => businessMinutesBetween(calendar, new Date(a), new Date(b)) === naiveMinutesBetween(calendar, a, b)),
    { numRuns: RUNS },
  )
  t.pass('businessMinutesBetween counts the minutes the reference counts')
  fc.assert(
    fc.property(world, fc.double({ min: 0, max: 1, noNaN: true }), ({ a, b, calendar }, share) => {
      const minutes = Math.floor(share * naiveMinutesBetween(calendar, a, b))
      return addBusinessMinutes(calendar, new Date(a), minutes).getTime() === naiveAddMinutes(calendar, a, minutes)
    }),
    { numRuns: RUNS },
  )
  t.pass('addBusinessMinutes lands where the reference does: the earliest instant with that much business time behind it')
})

t.test('the calendar is consistent with itself (no reference: many runs)', async (t) => {
  fc.assert(
    fc.property(world, fc.integer({ min: 0, max: 3000 }), fc.integer({ min: 0, max: 2880 }), ({ a, b, calendar }, minutes, later) => {
      const [from, until, beyond] = [new Date(a), new Date(b), new Date(b + later * MIN)]
      const due = addBusinessMinutes(calendar, from, minutes)
      const additive = businessMinutesBetween(calendar, from, beyond) === businessMinutesBetween(calendar, from, until) + businessMinutesBetween(calendar, until, beyond)
      return businessMinutesBetween(calendar, from, due) === minutes && due.getTime() >= a && additive
    }),
    { numRuns: RUNS * 5 },
  )
  t.pass('between(a, add(a, n)) = n, and business time adds up over adjacent ranges')
})

const nineToFive = (zone: string, extra: Partial<BusinessCalendar> = {}): BusinessCalendar => {
  const day = [{ open: 9 * 60, close: 17 * 60 }]
  return { timeZone: zone, week: { monday: day, tuesday: day, wednesday: day, thursday: day, friday: day, saturday: [], sunday: [] }, holidays: [], ...extra }
}
const at = (iso: string) => new Date(iso)

t.test('worked examples', async (t) => {
  const nightShift = (zone: string, open: number, close: number): BusinessCalendar => ({ timeZone: zone, week: Object.fromEntries(WEEKDAYS.map((day) => [day, [{ open, close }]])) as Record<Weekday, Window[]>, holidays: [] })
  t.equal(businessMinutesBetween(nightShift('America/New_York', 60, 240), at('2026-03-08T00:00:00Z'), at('2026-03-09T00:00:00Z')), 120, 'New York, 8 March: 01:00–04:00 holds two hours (02:00–03:00 does not exist)')
  t.equal(businessMinutesBetween(nightShift('America/New_York', 0, 180), at('2026-11-01T00:00:00Z'), at('2026-11-02T00:00:00Z')), 240, 'New York, 1 November: 00:00–03:00 holds four hours (01:00–02:00 twice)')
  t.equal(businessMinutesBetween(nightShift('Europe/Berlin', 0, 1440), at('2026-03-28T23:00:00Z'), at('2026-03-29T22:00:00Z')), 23 * 60, 'Berlin, 29 March is 23 hours long')
  const split: BusinessCalendar = { ...nineToFive('Europe/Berlin'), week: { ...nineToFive('UTC').week, monday: [{ open: 8 * 60, close: 12 * 60 }, { open: 13 * 60, close: 17 * 60 }] } }
  t.same(addBusinessMinutes(split, at('2026-11-23T10:30:00Z'), 60), at('2026-11-23T12:30:00Z'), 'Monday 11:30 Berlin + 1 h skips the lunch break: 13:30 Berlin')
  const christmas = nineToFive('America/New_York', { holidays: [{ date: '2026-12-24', start: 12 * 60, end: 1440 }, { date: '2026-12-25' }] })
  t.same(addBusinessMinutes(christmas, at('2026-12-24T16:30:00Z'), 60), at('2026-12-28T14:30:00Z'), 'Thursday 11:30 New York + 1 h: the afternoon of the 24th and the 25th are off, the weekend closed → Monday 09:30')
  t.same(addBusinessMinutes(nineToFive('UTC'), at('2026-11-20T16:00:00Z'), 60), at('2026-11-20T17:00:00Z'), 'a target reached at closing time is due at closing time, not the next opening')
  const aroundTheClock: BusinessCalendar = { timeZone: 'Asia/Kolkata', week: nightShift('UTC', 0, 0).week, holidays: [{ date: '2026-11-22' }] }
  t.same(addBusinessMinutes(aroundTheClock, at('2026-11-21T20:00:00Z'), 600), at('2026-11-22T06:00:00Z'), 'no window on any day: around the clock, holidays too (the original\'s reading)')
  t.equal(businessMinutesBetween(nineToFive('UTC'), at('2026-11-20T16:59:30Z'), at('2026-11-20T17:30:00Z')), 0.5, 'exact: half a minute')
})

// --- The SLA clock against a minute-by-minute simulation of its events, over two calendar versions.
type Simulated = { used: number; paused: number; breachedAt: number | null; state: string }
function simulate(calendars: (version: number) => BusinessCalendar, events: readonly (SlaEvent & { at: Date })[], asOf: number): Simulated {
  let state = 'inactive'
  let [target, version, used, paused] = [0, 1, 0, 0]
  let breachedAt: number | null = null
  const apply = (e: SlaEvent) => {
    const live = state === 'running' || state === 'paused'
    if (e.type === 'activated' && state === 'inactive') [state, target, version] = ['running', e.targetMinutes, e.calendarVersion]
    else if (e.type === 'paused' && state === 'running') state = 'paused'
    else if (e.type === 'resumed' && state === 'paused') state = 'running'
    else if (e.type === 'fulfilled' && live) state = 'fulfilled'
    else if (e.type === 'retargeted' && live) [target, version] = [e.targetMinutes, e.calendarVersion ?? version]
  }
  let i = 0
  for (let t = events[0]!.at.getTime(); t < asOf; t += MIN) {
    for (; i < events.length && events[i]!.at.getTime() <= t; i++) apply(events[i]!)
    if (state === 'running' && used >= target) breachedAt ??= t
    if (isBusinessMinute(calendars(version), t)) {
      if (state === 'running') used++
      else if (state === 'paused') paused++
    }
  }
  for (; i < events.length && events[i]!.at.getTime() <= asOf; i++) apply(events[i]!)
  return { used, paused, breachedAt, state }
}

const lifecycle = fc.record({
  steps: fc.array(
    fc.record({ type: fc.constantFrom('paused', 'resumed', 'fulfilled', 'retargeted', 'paused', 'resumed'), gap: fc.integer({ min: 0, max: 600 }), target: fc.integer({ min: 0, max: 900 }), version: fc.option(fc.constantFrom(1, 2)) }),
    { maxLength: 6 },
  ),
  target: fc.integer({ min: 0, max: 900 }),
  asOfGap: fc.integer({ min: 0, max: 900 }),
  edited: week,
})

t.test('the SLA clock against the minute-by-minute simulation', async (t) => {
  fc.assert(
    fc.property(world, lifecycle, ({ a, calendar }, { steps, target, asOfGap, edited }) => {
      // Version 2: the same zone and holidays, other shifts (an admin's edit); retargets may move the instance to it and back.
      const second: BusinessCalendar = { ...calendar, week: edited }
      const calendars = (version: number) => (version === 2 ? second : calendar)
      let clock = a
      const events: (SlaEvent & { at: Date })[] = [{ type: 'activated', at: new Date(a), targetMinutes: target, calendarVersion: 1 }]
      for (const step of steps) {
        clock += step.gap * MIN
        const retarget = { type: 'retargeted' as const, at: new Date(clock), targetMinutes: step.target, ...(step.version !== null && { calendarVersion: step.version }) }
        events.push(step.type === 'retargeted' ? retarget : { type: step.type as 'paused', at: new Date(clock) })
      }
      const asOf = clock + asOfGap * MIN
      const status = slaStatus(events, calendars, new Date(asOf))
      const expected = simulate(calendars, events, asOf)
      const same = status.usedMs === expected.used * MIN && status.pausedMs === expected.paused * MIN && status.state === expected.state && (status.breachedAt?.getTime() ?? null) === expected.breachedAt
      // Not yet reached, running or paused: the deadline lies exactly the remaining business time ahead, in the calendar now in force.
      const left = status.targetMinutes! - status.usedMs / MIN
      const open = (status.state === 'running' || status.state === 'paused') && left > 0
      const deadlineAhead = !open || businessMinutesBetween(calendars(status.calendarVersion!), new Date(asOf), status.deadline!) === left
      if (!same || !deadlineAhead) t.comment(JSON.stringify({ status, expected }))
      return same && deadlineAhead
    }),
    { numRuns: RUNS },
  )
  t.pass('used and paused business minutes, the state and the breach instant agree with the simulation, across calendar versions; the deadline is the time left ahead')
})

t.test('the SLA clock: given its events, then its figures', async (t) => {
  const calendar = nineToFive('UTC')
  const calendars = (version: number) => (version === 2 ? nineToFive('UTC', { holidays: [{ date: '2026-11-24' }] }) : calendar)
  const activated: SlaEvent = { type: 'activated', at: '2026-11-23T09:00:00Z', targetMinutes: 8 * 60, calendarVersion: 1, policyVersion: 3 }
  const status = (events: SlaEvent[], asOf: string) => slaStatus(events, calendars, at(asOf))

  t.match(status([], '2026-11-23T10:00:00Z'), { state: 'inactive', deadline: null, remainingMinutes: null })
  t.match(status([activated], '2026-11-23T08:00:00Z'), { state: 'inactive' }, 'an event after the instant asked about is not yet known')
  t.match(status([activated], '2026-11-23T13:00:00Z'), { state: 'running', usedMinutes: 240, remainingMinutes: 240, deadline: at('2026-11-23T17:00:00Z'), breachedAt: null, policyVersion: 3, calendarVersion: 1 })
  t.match(status([activated], '2026-11-23T18:00:00Z'), { usedMinutes: 480, remainingMinutes: 0, deadline: at('2026-11-23T17:00:00Z'), breachedAt: at('2026-11-23T17:00:00Z') }, 'running past the deadline breaches at the deadline')

  const waiting: SlaEvent[] = [activated, { type: 'paused', at: '2026-11-23T13:00:00Z' }, { type: 'resumed', at: '2026-11-24T11:00:00Z' }]
  t.match(status(waiting.slice(0, 2), '2026-11-23T16:00:00Z'), { state: 'paused', usedMinutes: 240, pausedMinutes: 180, deadline: at('2026-11-24T12:00:00Z') }, 'paused: the deadline if it resumed now')
  t.match(status(waiting, '2026-11-24T12:00:00Z'), { state: 'running', usedMinutes: 300, pausedMinutes: 360, deadline: at('2026-11-24T15:00:00Z') }, 'a pause over the night costs only its business hours')
  t.match(status([...waiting, { type: 'fulfilled', at: '2026-11-24T15:00:00Z' }], '2026-11-30T00:00:00Z'), { state: 'fulfilled', usedMinutes: 480, breachedAt: null, fulfilledAt: at('2026-11-24T15:00:00Z'), deadline: at('2026-11-24T15:00:00Z') }, 'fulfilled at the deadline itself is met')
  t.match(status([...waiting, { type: 'fulfilled', at: '2026-11-24T15:01:00Z' }], '2026-11-30T00:00:00Z'), { breachedAt: at('2026-11-24T15:00:00Z') }, 'a minute later is a breach')

  const pausedAtDeadline: SlaEvent[] = [activated, { type: 'paused', at: '2026-11-23T17:00:00Z' }, { type: 'resumed', at: '2026-11-25T10:00:00Z' }]
  t.match(status(pausedAtDeadline.slice(0, 2), '2026-11-24T12:00:00Z'), { state: 'paused', breachedAt: null }, 'paused at the deadline: not (yet) breached')
  t.match(status(pausedAtDeadline, '2026-11-25T10:30:00Z'), { breachedAt: at('2026-11-25T10:00:00Z') }, 'resumed with nothing left: breached at the resumption')

  const retargeted: SlaEvent[] = [activated, { type: 'retargeted', at: '2026-11-23T17:00:00Z', targetMinutes: 16 * 60, calendarVersion: 2 }]
  t.match(status(retargeted, '2026-11-25T12:00:00Z'), { usedMinutes: 480 + 180, targetMinutes: 960, calendarVersion: 2, breachedAt: null, deadline: at('2026-11-25T17:00:00Z') }, 'retargeted at the deadline: time used stays used; the new calendar (the 24th off) counts from then on')
  t.match(status([activated, { type: 'retargeted', at: '2026-11-23T12:00:00Z', targetMinutes: 60 }], '2026-11-23T12:30:00Z'), { breachedAt: at('2026-11-23T12:00:00Z'), deadline: at('2026-11-23T12:00:00Z'), remainingMinutes: -150 }, 'a target cut below the time used breaches at once')
  t.match(status([activated, { type: 'breached', at: '2026-11-23T10:00:00Z' }], '2026-11-23T11:00:00Z'), { breachedAt: null }, 'a recorded breach is a consequence, not an input')
  t.match(status([{ ...activated, at: '2026-11-23T12:00:00Z' }, { type: 'paused', at: '2026-11-23T11:00:00Z' }], '2026-11-23T14:00:00Z'), { state: 'paused', usedMinutes: 0, pausedMinutes: 120 }, 'an event stamped before the previous one counts at its instant')
  t.same(DEFAULT_SLA_HOURS.Urgent, { firstResponse: 1, resolution: 4 })
})
