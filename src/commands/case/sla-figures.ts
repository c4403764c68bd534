import { slaStatus } from '../business-hours/sla-clock.ts'
import type { CalendarOf, SlaEvent, SlaState } from '../business-hours/sla-clock.ts'

/**
 * What every analytics figure (FRT, MTTR, SLA attainment, backlog, per agent) reads of one SLA
 * instance: the one clock (`slaStatus`) on its events, in the calendar versions they name, as of an
 * instant. The analytics read model stores it as of each instance's latest event; since a running
 * deadline is fixed until the next event, SQL judges a breach at any later `now` by the same rule
 * as `isBreachedBy` below, so a figure recomputed from the log equals what the dashboard answered.
 */
export type SlaFigure = {
  state: SlaState
  targetMinutes: number | null
  /** Business time the clock ran, pauses not counted: once fulfilled, the time to first response or to resolution. */
  usedMs: number
  fulfilledAt: Date | null
  /** While running only: when the target is reached (fixed until the next event). */
  deadline: Date | null
  /** When it went past its target while still open, fulfilled late included; null when it has not (yet). */
  breachedAt: Date | null
}

export function slaFigure(events: readonly SlaEvent[], calendarOf: CalendarOf, asOf: Date): SlaFigure {
  const status = slaStatus(events, calendarOf, asOf)
  return {
    state: status.state,
    targetMinutes: status.targetMinutes,
    usedMs: status.usedMs,
    fulfilledAt: status.fulfilledAt,
    deadline: status.state === 'running' ? status.deadline : null,
    breachedAt: status.breachedAt,
  }
}

/** Breached at `now` (≥ the figure's instant): a breach on record, or a running deadline passed. */
export const isBreachedBy = (figure: Pick<SlaFigure, 'breachedAt' | 'deadline'>, now: Date): boolean =>
  figure.breachedAt !== null || (figure.deadline !== null && figure.deadline.getTime() < now.getTime())

/** Decided: met (fulfilled in time) or missed (breached); an instance still in time is neither. */
export const metAt = (figure: Pick<SlaFigure, 'state' | 'breachedAt'>): boolean => figure.state === 'fulfilled' && figure.breachedAt === null
