import { slaStatus } from '../business-hours/sla-clock.ts'
import type { CalendarOf, SlaEvent, SlaStatus } from '../business-hours/sla-clock.ts'
import { PAUSING_STATUS } from './fields.ts'
import type { CaseFields, CasePriority } from './fields.ts'

/**
 * A case's two SLA instances (first response and resolution) as events on the case's stream, read
 * by the one SLA clock (business-hours/sla-clock.ts `slaStatus`): the case's answer, the list's
 * `sla_breached` filter (through the deadlines the projector stores) and escalations all take their
 * figures from it.
 *
 * - Activated when the case opens, with the policy's target (the priority defaults, the original's
 *   cases/workflow.py) and the version of the organization's business calendar then in force.
 * - Paused while the case is Pending (waiting on the customer), resumed when it leaves it; the pause
 *   is measured in the same calendar.
 * - Fulfilled: first response by the first public comment of a member, resolution by closing.
 * - Retargeted when the priority changes: the new priority's target from then on, time used stays used.
 * - A reopened case (leaving Closed) starts a new resolution instance, in the calendar version of
 *   the one closing fulfilled: the original cleared `resolved_at` and measured again from creation,
 *   which made every reopened case breached at once.
 */
export const FIRST_RESPONSE_HOURS: Readonly<Record<CasePriority, number>> = { Low: 24, Normal: 8, High: 4, Urgent: 1 }
export const RESOLUTION_HOURS: Readonly<Record<CasePriority, number>> = { Low: 72, Normal: 48, High: 24, Urgent: 4 }

export type SlaTargets = { sla_first_response_hours: number; sla_resolution_hours: number }
export const slaTargetsOf = (priority: CasePriority): SlaTargets => ({ sla_first_response_hours: FIRST_RESPONSE_HOURS[priority], sla_resolution_hours: RESOLUTION_HOURS[priority] })

export const SLA_KINDS = ['first_response', 'resolution'] as const
export type SlaKind = (typeof SLA_KINDS)[number]
/** The one policy there is for now: the original's defaults by priority. */
export const PRIORITY_POLICY = 'priority_defaults'

const targetMinutes = (kind: SlaKind, priority: CasePriority): number => (kind === 'first_response' ? FIRST_RESPONSE_HOURS : RESOLUTION_HOURS)[priority] * 60

type Target = { target_minutes: number; policy: typeof PRIORITY_POLICY; priority: CasePriority }
// Events: the storage contract (never change a type name or data shape).
export type CaseSlaEvent =
  | { type: 'CaseSlaActivated'; data: { sla: SlaKind; calendar_version: number; at: string } & Target }
  | { type: 'CaseSlaPaused'; data: { sla: SlaKind; at: string } }
  | { type: 'CaseSlaResumed'; data: { sla: SlaKind; at: string } }
  | { type: 'CaseSlaFulfilled'; data: { sla: SlaKind; at: string } }
  | { type: 'CaseSlaRetargeted'; data: { sla: SlaKind; at: string } & Target }

export const SLA_EVENT_TYPES = ['CaseSlaActivated', 'CaseSlaPaused', 'CaseSlaResumed', 'CaseSlaFulfilled', 'CaseSlaRetargeted'] as const satisfies readonly CaseSlaEvent['type'][]
export const isSlaEvent = (event: { type: string }): event is CaseSlaEvent => (SLA_EVENT_TYPES as readonly string[]).includes(event.type)

/** Each instance's events as the clock reads them (its current instance: an activation starts a new one). */
export type SlaClocks = Record<SlaKind, SlaEvent[]>
export const noSlaClocks = (): SlaClocks => ({ first_response: [], resolution: [] })

function clockEventOf(event: CaseSlaEvent): SlaEvent {
  const { at } = event.data
  switch (event.type) {
    case 'CaseSlaActivated':
      return { type: 'activated', at, targetMinutes: event.data.target_minutes, calendarVersion: event.data.calendar_version }
    case 'CaseSlaRetargeted':
      return { type: 'retargeted', at, targetMinutes: event.data.target_minutes }
    case 'CaseSlaPaused':
      return { type: 'paused', at }
    case 'CaseSlaResumed':
      return { type: 'resumed', at }
    case 'CaseSlaFulfilled':
      return { type: 'fulfilled', at }
  }
}

export function evolveSlaClocks(clocks: SlaClocks, event: CaseSlaEvent): SlaClocks {
  const { sla } = event.data
  const next = clockEventOf(event)
  return { ...clocks, [sla]: next.type === 'activated' ? [next] : [...clocks[sla], next] }
}

type Phase = 'inactive' | 'running' | 'paused' | 'fulfilled'
/** Where an instance stands, without its calendar: what the decisions need. */
function phaseOf(events: readonly SlaEvent[]): Phase {
  let phase: Phase = 'inactive'
  for (const { type } of events) {
    if (type === 'activated' || (type === 'resumed' && phase === 'paused')) phase = 'running'
    else if (type === 'paused' && phase === 'running') phase = 'paused'
    else if (type === 'fulfilled' && phase !== 'inactive') phase = 'fulfilled'
  }
  return phase
}
const live = (phase: Phase) => phase === 'running' || phase === 'paused'
function calendarVersionOf(events: readonly SlaEvent[]): number {
  let version = 0
  for (const e of events) if (e.type === 'activated' || e.type === 'retargeted') version = e.calendarVersion ?? version
  return version
}

type SlaFields = Pick<CaseFields, 'status' | 'priority'>
/**
 * The SLA events a case's change brings, from the case as it was (null: it opens now, in calendar
 * version `calendarVersion`) to the case as it is. Pausing follows the status (Pending pauses), so a
 * repeat decides nothing.
 */
export function slaEventsOf(clocks: SlaClocks, before: SlaFields | null, after: SlaFields, at: string, calendarVersion?: number): CaseSlaEvent[] {
  const events: CaseSlaEvent[] = []
  const phase: Record<SlaKind, Phase> = { first_response: phaseOf(clocks.first_response), resolution: phaseOf(clocks.resolution) }
  const target = (sla: SlaKind): Target => ({ target_minutes: targetMinutes(sla, after.priority), policy: PRIORITY_POLICY, priority: after.priority })
  const activate = (sla: SlaKind, version: number) => {
    events.push({ type: 'CaseSlaActivated', data: { sla, ...target(sla), calendar_version: version, at } })
    phase[sla] = 'running'
  }
  if (before === null) for (const sla of SLA_KINDS) activate(sla, calendarVersion ?? 0)
  else if (before.priority !== after.priority) for (const sla of SLA_KINDS) if (live(phase[sla])) events.push({ type: 'CaseSlaRetargeted', data: { sla, ...target(sla), at } })
  if (before?.status === 'Closed' && after.status !== 'Closed' && phase.resolution === 'fulfilled') activate('resolution', calendarVersionOf(clocks.resolution))
  if (after.status === 'Closed' && live(phase.resolution)) {
    events.push({ type: 'CaseSlaFulfilled', data: { sla: 'resolution', at } })
    phase.resolution = 'fulfilled'
  }
  const waiting = after.status === PAUSING_STATUS
  for (const sla of SLA_KINDS) {
    if (waiting && phase[sla] === 'running') events.push({ type: 'CaseSlaPaused', data: { sla, at } })
    if (!waiting && phase[sla] === 'paused') events.push({ type: 'CaseSlaResumed', data: { sla, at } })
  }
  return events
}

/** The first public answer fulfils the first-response instance while it is open. */
export const firstResponseFulfilled = (clocks: SlaClocks, at: string): CaseSlaEvent[] => (live(phaseOf(clocks.first_response)) ? [{ type: 'CaseSlaFulfilled', data: { sla: 'first_response', at } }] : [])

export type SlaView = { first_response_sla_deadline: Date | null; resolution_sla_deadline: Date | null; is_sla_first_response_breached: boolean; is_sla_resolution_breached: boolean }

/** Breached now: the instance is still open and ran past its target (a breach before a pause stays one while paused). */
export const isBreached = (status: SlaStatus): boolean => live(status.state) && status.breachedAt !== null

/** Both instances at `now` through the one clock; a case opened before SLA instances were recorded has none (null deadlines). */
export function slaView(clocks: SlaClocks, calendarOf: CalendarOf, now: Date): SlaView {
  const first = slaStatus(clocks.first_response, calendarOf, now)
  const resolution = slaStatus(clocks.resolution, calendarOf, now)
  return {
    first_response_sla_deadline: first.deadline,
    resolution_sla_deadline: resolution.deadline,
    is_sla_first_response_breached: isBreached(first),
    is_sla_resolution_breached: isBreached(resolution),
  }
}

/**
 * What the read model stores per instance so SQL can judge a breach at any `now`: the running
 * deadline (none while paused, fulfilled or inactive) and a breach already reached (kept while paused).
 * Breached at `now` ⇔ breached_at IS NOT NULL OR deadline < now: the clock's own rule.
 */
export function slaColumns(events: readonly SlaEvent[], calendarOf: CalendarOf, asOf: Date): { deadline: Date | null; breached_at: Date | null } {
  const status = slaStatus(events, calendarOf, asOf)
  return { deadline: status.state === 'running' ? status.deadline : null, breached_at: live(status.state) ? status.breachedAt : null }
}
