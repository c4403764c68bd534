import type { CalendarOf } from '../business-hours/sla-clock.ts'
import type { EscalationAction } from '../case-escalation/escalation-policy.ts'
import { nameBasedId } from '../name-based-id.ts'
import { OPEN_STATUSES } from './fields.ts'
import type { CasePriority, CaseStatus } from './fields.ts'
import { SLA_KINDS, slaView } from './sla.ts'
import type { SlaClocks, SlaKind } from './sla.ts'

/**
 * Escalations (the original's cases/tasks.py scan_for_breached_cases): an open case whose SLA clock
 * says an instance is breached is escalated, at most three times, sixty minutes apart at least.
 * Each escalation is a level of the case (1, 2, 3) with an id derived from the case and the level,
 * judged against the case's own events and the clock, so a second run or a second process decides
 * nothing again. What an escalation does is its priority's active policy's (_dispatch_breach): for
 * each breached instance the policy names a target for, notify the target and the policy's team,
 * reassign the case to the target (the assignees become the target alone), or both. Where the
 * original counts no escalation (no active policy, or no target for what is breached), this one
 * still records it, acting on nobody: the case's escalation count and SLA history say it was breached.
 */
export const MAX_ESCALATIONS = 3
export const ESCALATION_GAP_MS = 60 * 60_000

/** What a policy did for one breached SLA instance: its action and target. */
export type EscalationStep = { sla: SlaKind; action: EscalationAction; target: string }

/**
 * `actions` and `notify` (the members told, the notifications' recipients) only when a policy acted:
 * older events and escalations without a policy have neither. A reassignment is the CaseUpdated that follows.
 */
export type CaseEscalated = { type: 'CaseEscalated'; data: { escalation_id: string; level: number; breached: SlaKind[]; actions?: EscalationStep[]; notify?: string[]; at: string } }

/** An active escalation policy as the decider reads it: per SLA instance it names a target for, the action and target; its notify team's members. */
export type PolicyFacts = { [K in SlaKind]: { action: EscalationAction; target: string } | null } & { team: string[] }

/**
 * `calendars`: the organization's business calendar versions, the clock's input; `policies`: its
 * active escalation policies by priority; `active`: which of the people they name are active
 * members now (all looked up by the caller).
 */
export type EscalateCase = { type: 'EscalateCase'; orgId: string; calendars: CalendarOf; policies: Partial<Record<CasePriority, PolicyFacts>>; active: string[]; at: string }

export type Escalations = { count: number; lastAt: string | null }
export const noEscalations = (): Escalations => ({ count: 0, lastAt: null })
export const evolveEscalations = (state: Escalations, event: CaseEscalated): Escalations => ({ count: event.data.level, lastAt: event.data.at })

export const escalationId = (caseId: string, level: number): string => nameBasedId(`case-escalation:${caseId}:${level}`)

type Escalatable = { id: string | null; fields: { status: CaseStatus; priority: CasePriority }; sla: SlaClocks; escalations: Escalations }

/** An escalation, and whom its policy reassigns the case to (null: nobody). */
export type Escalation = { escalated: CaseEscalated; reassignTo: string | null }

const notifies = (action: EscalationAction) => action !== 'reassign'
const reassigns = (action: EscalationAction) => action !== 'notify'

/**
 * The next escalation of an open case breached now, or none: past the cap, within the gap, or not
 * breached. The original would reassign to a deactivated target, and record a deactivated target as
 * notified (its mail task then skipped them): here only active members are told or assigned. Both
 * instances reassigning, the resolution's target is the one assigned, as the original's second `set`.
 */
export function decideEscalation(command: EscalateCase, state: Escalatable): Escalation | null {
  const { count, lastAt } = state.escalations
  if (!OPEN_STATUSES.includes(state.fields.status) || count >= MAX_ESCALATIONS) return null
  if (lastAt !== null && Date.parse(command.at) - Date.parse(lastAt) < ESCALATION_GAP_MS) return null
  const view = slaView(state.sla, command.calendars, new Date(command.at))
  const breached = SLA_KINDS.filter((sla) => (sla === 'first_response' ? view.is_sla_first_response_breached : view.is_sla_resolution_breached))
  if (!breached.length) return null
  const level = count + 1
  const policy = command.policies[state.fields.priority]
  const actions = breached.flatMap((sla): EscalationStep[] => {
    const rule = policy?.[sla]
    return rule ? [{ sla, ...rule }] : []
  })
  const active = new Set(command.active)
  const told = actions.filter((step) => notifies(step.action)).flatMap((step) => [step.target, ...(policy?.team ?? [])])
  const notify = [...new Set(told)].filter((id) => active.has(id))
  const reassignTo = actions.filter((step) => reassigns(step.action) && active.has(step.target)).at(-1)?.target ?? null
  const acted = actions.length ? { actions, notify } : {}
  return { escalated: { type: 'CaseEscalated', data: { escalation_id: escalationId(state.id ?? '', level), level, breached, ...acted, at: command.at } }, reassignTo }
}
