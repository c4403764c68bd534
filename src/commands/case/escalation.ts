import type { CalendarOf } from '../business-hours/sla-clock.ts'
import { nameBasedId } from '../name-based-id.ts'
import { OPEN_STATUSES } from './fields.ts'
import type { CaseStatus } from './fields.ts'
import { SLA_KINDS, slaView } from './sla.ts'
import type { SlaClocks, SlaKind } from './sla.ts'

/**
 * Escalations (the original's cases/tasks.py scan_for_breached_cases): an open case whose SLA clock
 * says an instance is breached is escalated, at most three times, sixty minutes apart at least.
 * Each escalation is a level of the case (1, 2, 3) with an id derived from the case and the level,
 * judged against the case's own events and the clock, so a second run or a second process decides
 * nothing again. What an escalation then does (notify, reassign) belongs to the escalation policies,
 * which are not built yet: the original did nothing for an organization without one.
 */
export const MAX_ESCALATIONS = 3
export const ESCALATION_GAP_MS = 60 * 60_000

export type CaseEscalated = { type: 'CaseEscalated'; data: { escalation_id: string; level: number; breached: SlaKind[]; at: string } }

/** `calendars`: the organization's business calendar versions, the clock's input (looked up by the caller). */
export type EscalateCase = { type: 'EscalateCase'; orgId: string; calendars: CalendarOf; at: string }

export type Escalations = { count: number; lastAt: string | null }
export const noEscalations = (): Escalations => ({ count: 0, lastAt: null })
export const evolveEscalations = (state: Escalations, event: CaseEscalated): Escalations => ({ count: event.data.level, lastAt: event.data.at })

export const escalationId = (caseId: string, level: number): string => nameBasedId(`case-escalation:${caseId}:${level}`)

type Escalatable = { id: string | null; fields: { status: CaseStatus }; sla: SlaClocks; escalations: Escalations }

/** The next escalation of an open case breached now, or none: past the cap, within the gap, or not breached. */
export function decideEscalation(command: EscalateCase, state: Escalatable): CaseEscalated[] {
  const { count, lastAt } = state.escalations
  if (!OPEN_STATUSES.includes(state.fields.status) || count >= MAX_ESCALATIONS) return []
  if (lastAt !== null && Date.parse(command.at) - Date.parse(lastAt) < ESCALATION_GAP_MS) return []
  const view = slaView(state.sla, command.calendars, new Date(command.at))
  const breached = SLA_KINDS.filter((sla) => (sla === 'first_response' ? view.is_sla_first_response_breached : view.is_sla_resolution_breached))
  if (!breached.length) return []
  const level = count + 1
  return [{ type: 'CaseEscalated', data: { escalation_id: escalationId(state.id ?? '', level), level, breached, at: command.at } }]
}
