import { addBusinessMs, businessMsBetween } from './calendar.ts'
import type { BusinessCalendar } from './calendar.ts'
import { MINUTE_MS } from './zone-time.ts'

/**
 * One SLA clock (issue 32): a pure function of an SLA instance's events, the calendar versions
 * they name and the instant asked about. The deadline, the breach badge, escalations and every
 * analytics figure read it, so they cannot disagree, and a figure recomputed later from the log
 * as of an instant equals what was shown at that instant.
 *
 * - Time is measured in the instance's business calendar, at the version it was activated (or
 *   retargeted) with: editing the calendar later changes only new instances.
 * - A pause is measured in the same calendar as the target, so a pause over a weekend costs
 *   nothing and uses nothing.
 * - Time already used stays used: a retarget changes the target (and the calendar, when it names
 *   one) from its instant on, and a breach that happened stays a breach.
 * - Breached: the clock was still running after the instant the target was reached. Fulfilled
 *   at that very instant is met; paused at it and resumed later breaches at the resumption.
 */

export type Instant = Date | string

export type SlaEvent =
  | { type: 'activated'; at: Instant; targetMinutes: number; calendarVersion: number; policyVersion?: number | null }
  | { type: 'paused'; at: Instant }
  | { type: 'resumed'; at: Instant }
  | { type: 'fulfilled'; at: Instant }
  /** A new target (and calendar version, when given) from this instant on; time used so far stays used. */
  | { type: 'retargeted'; at: Instant; targetMinutes: number; calendarVersion?: number; policyVersion?: number | null }
  /** A breach recorded by the escalation process: a consequence of the clock, not an input to it (it is ignored). */
  | { type: 'breached'; at: Instant }

export type SlaState = 'inactive' | 'running' | 'paused' | 'fulfilled'

export type SlaStatus = {
  state: SlaState
  targetMinutes: number | null
  calendarVersion: number | null
  policyVersion: number | null
  startedAt: Date | null
  fulfilledAt: Date | null
  /** Business time the clock ran (not paused), exactly, and in whole minutes (rounded down). */
  usedMs: number
  usedMinutes: number
  /** Business time it stood paused. */
  pausedMs: number
  pausedMinutes: number
  /** Target less used minutes: negative once overdue; null while inactive. */
  remainingMinutes: number | null
  /**
   * When the target is (or was) reached: fixed while running; while paused, when it would be if
   * the clock resumed at the instant asked about; for a fulfilled instance, as it stood when fulfilled.
   */
  deadline: Date | null
  breachedAt: Date | null
}

/** The calendar of a version the instance names (the caller looks the versions up beforehand). */
export type CalendarOf = (version: number) => BusinessCalendar

type Clock = {
  state: SlaState
  targetMs: number
  calendarVersion: number
  policyVersion: number | null
  startedAt: number
  since: number
  usedMs: number
  pausedMs: number
  /** When the current target was reached, once it has been. */
  reachedAt: number | null
  breachedAt: number | null
  fulfilledAt: number | null
}

const timeOf = (at: Instant): number => (typeof at === 'string' ? Date.parse(at) : at.getTime())

/** Accounts the stretch [clock.since, until) to used or paused time, noting when the target was reached and breached. */
function advance(clock: Clock, calendar: BusinessCalendar, until: number): void {
  const worked = businessMsBetween(calendar, new Date(clock.since), new Date(until))
  if (clock.state === 'paused') {
    clock.pausedMs += worked
  } else if (clock.state === 'running') {
    const left = clock.targetMs - clock.usedMs
    const reached = left <= 0 ? clock.since : addBusinessMs(calendar, new Date(clock.since), left).getTime()
    if (reached <= until) clock.reachedAt ??= reached
    if (reached < until) clock.breachedAt ??= reached
    clock.usedMs += worked
  }
  clock.since = until
}

function retarget(clock: Clock, at: number, targetMinutes: number): void {
  clock.targetMs = targetMinutes * MINUTE_MS
  clock.reachedAt = clock.targetMs <= clock.usedMs ? at : null
}

/** Applies one event at `at` (not before the previous one). Events that do not fit the state are ignored. */
function step(clock: Clock | null, event: SlaEvent, at: number, calendarOf: CalendarOf): Clock | null {
  if (event.type === 'breached') return clock
  if (!clock) {
    if (event.type !== 'activated') return null
    const started: Clock = { state: 'running', targetMs: 0, calendarVersion: event.calendarVersion, policyVersion: event.policyVersion ?? null, startedAt: at, since: at, usedMs: 0, pausedMs: 0, reachedAt: null, breachedAt: null, fulfilledAt: null }
    retarget(started, at, event.targetMinutes)
    return started
  }
  const fits = { activated: false, paused: clock.state === 'running', resumed: clock.state === 'paused', fulfilled: clock.state !== 'fulfilled', retargeted: clock.state !== 'fulfilled' }[event.type]
  if (!fits) return clock
  advance(clock, calendarOf(clock.calendarVersion), at)
  switch (event.type) {
    case 'paused':
      clock.state = 'paused'
      break
    case 'resumed':
      clock.state = 'running'
      break
    case 'fulfilled':
      clock.state = 'fulfilled'
      clock.fulfilledAt = at
      break
    case 'retargeted':
      clock.calendarVersion = event.calendarVersion ?? clock.calendarVersion
      clock.policyVersion = event.policyVersion === undefined ? clock.policyVersion : event.policyVersion
      retarget(clock, at, event.targetMinutes)
      break
  }
  return clock
}

const INACTIVE: SlaStatus = { state: 'inactive', targetMinutes: null, calendarVersion: null, policyVersion: null, startedAt: null, fulfilledAt: null, usedMs: 0, usedMinutes: 0, pausedMs: 0, pausedMinutes: 0, remainingMinutes: null, deadline: null, breachedAt: null }

/**
 * The instance as of `asOf`, from its events in the order they were recorded (events after `asOf`
 * are not yet known; an event stamped before the one preceding it counts at that one's instant).
 */
export function slaStatus(events: readonly SlaEvent[], calendarOf: CalendarOf, asOf: Date): SlaStatus {
  const now = asOf.getTime()
  let clock: Clock | null = null
  let last = -Infinity
  for (const event of events) {
    const at = Math.max(last, timeOf(event.at))
    if (!(at <= now)) continue
    last = at
    clock = step(clock, event, at, calendarOf)
  }
  if (!clock) return INACTIVE
  const calendar = calendarOf(clock.calendarVersion)
  if (clock.state !== 'fulfilled') advance(clock, calendar, Math.max(clock.since, now))
  const usedMinutes = Math.floor(clock.usedMs / MINUTE_MS)
  const targetMinutes = clock.targetMs / MINUTE_MS
  // A running clock whose target was met exactly (a pause or a retarget came at that instant) is
  // breached by any time from now on (advance): its deadline is now, not the instant it was met,
  // else a figure stored now would read as breached before the clock says so.
  const metExactly = clock.state === 'running' && clock.reachedAt !== null && clock.breachedAt === null
  const deadline = metExactly ? clock.since : (clock.reachedAt ?? addBusinessMs(calendar, new Date(clock.since), clock.targetMs - clock.usedMs).getTime())
  return {
    state: clock.state,
    targetMinutes,
    calendarVersion: clock.calendarVersion,
    policyVersion: clock.policyVersion,
    startedAt: new Date(clock.startedAt),
    fulfilledAt: clock.fulfilledAt === null ? null : new Date(clock.fulfilledAt),
    usedMs: clock.usedMs,
    usedMinutes,
    pausedMs: clock.pausedMs,
    pausedMinutes: Math.floor(clock.pausedMs / MINUTE_MS),
    remainingMinutes: targetMinutes - usedMinutes,
    deadline: new Date(deadline),
    breachedAt: clock.breachedAt === null ? null : new Date(clock.breachedAt),
  }
}

/** The original's default targets, in hours, by case priority (cases/workflow.py). */
export const DEFAULT_SLA_HOURS = {
  Low: { firstResponse: 24, resolution: 72 },
  Normal: { firstResponse: 8, resolution: 48 },
  High: { firstResponse: 4, resolution: 24 },
  Urgent: { firstResponse: 1, resolution: 4 },
} as const satisfies Record<string, { firstResponse: number; resolution: number }>

export type CasePriority = keyof typeof DEFAULT_SLA_HOURS
