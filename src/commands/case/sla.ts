import type { CasePriority } from './fields.ts'

/**
 * The SLA targets of a case and, for now, its deadlines. The targets are the original's defaults
 * by priority (cases/workflow.py), fixed on the case when it is created (CaseCreated records them).
 *
 * THE SEAM: `slaDeadlines` is where the SLA clock plugs in. Today it counts plain wall-clock hours
 * from creation and pushes the deadline by the time spent paused (Pending), as the original's
 * `_sla_deadline` does with a 24/7 calendar. The business-hours clock (the organization's calendar,
 * holidays, DST) replaces this one function; every reader (the case's answer, the list's
 * `sla_breached` filter through `breachedSql`'s same rule) takes deadlines from here.
 */
export const FIRST_RESPONSE_HOURS: Readonly<Record<CasePriority, number>> = { Low: 24, Normal: 8, High: 4, Urgent: 1 }
export const RESOLUTION_HOURS: Readonly<Record<CasePriority, number>> = { Low: 72, Normal: 48, High: 24, Urgent: 4 }

export type SlaTargets = { sla_first_response_hours: number; sla_resolution_hours: number }
export const slaTargetsOf = (priority: CasePriority): SlaTargets => ({ sla_first_response_hours: FIRST_RESPONSE_HOURS[priority], sla_resolution_hours: RESOLUTION_HOURS[priority] })

/** What the clock reads of a case: when it opened, its targets, its pauses (finished seconds and a running one), when it was answered and resolved. */
export type SlaFacts = SlaTargets & { created_at: Date; sla_paused_seconds: number; sla_paused_at: Date | null; first_response_at: Date | null; resolved_at: Date | null }
export type SlaView = { first_response_sla_deadline: Date; resolution_sla_deadline: Date; is_sla_first_response_breached: boolean; is_sla_resolution_breached: boolean }

const HOUR_MS = 3_600_000

/** The deadlines and breach flags at `now` (plain hours plus paused time: the clock's seam, see above). */
export function slaDeadlines(facts: SlaFacts, now: Date): SlaView {
  const running = facts.sla_paused_at ? Math.max(0, now.getTime() - facts.sla_paused_at.getTime()) : 0
  const paused = facts.sla_paused_seconds * 1000 + running
  const deadline = (hours: number) => new Date(facts.created_at.getTime() + hours * HOUR_MS + paused)
  const first = deadline(facts.sla_first_response_hours)
  const resolution = deadline(facts.sla_resolution_hours)
  return {
    first_response_sla_deadline: first,
    resolution_sla_deadline: resolution,
    is_sla_first_response_breached: facts.first_response_at === null && now > first,
    is_sla_resolution_breached: facts.resolved_at === null && now > resolution,
  }
}
