import { ValidationError } from '../../errors.ts'
import type { Decider } from '../decider.ts'
import { streamCategory } from '../streams.ts'
import { adminOnly, changedFields, liveIn } from '../case-approval/settings-record.ts'
import type { SettingsActor } from '../case-approval/settings-record.ts'
import { conditionsHold } from './conditions.ts'
import type { Condition, RoutedCase } from './conditions.ts'

/**
 * A routing rule (the original's RoutingRule): which new cases it takes (its conditions) and whom
 * it gives them to (its strategy): `direct` the first of its people, `round_robin` each in turn,
 * `least_busy` the one with the fewest open cases, `by_team` its team. Its stream also holds every
 * case it routed, so the round-robin cursor is state of the log: replaying the stream gives the same
 * cursor, and two cases created at once are decided one after the other, never both for the same
 * agent. People are picked among the rule's active members, ordered by id.
 */
export const STRATEGIES = ['round_robin', 'least_busy', 'direct', 'by_team'] as const
export type Strategy = (typeof STRATEGIES)[number]

export type RoutingRuleFields = {
  name: string
  priority_order: number
  is_active: boolean
  conditions: Condition[]
  strategy: Strategy
  stop_processing: boolean
  target_assignees: string[]
  target_team: string | null
}

/** Why a rule that matched assigned nobody. */
export type RoutingMiss = '' | 'empty_pool' | 'missing_team'

// Events: the storage contract.
export type RoutingRuleEvent =
  | { type: 'RoutingRuleCreated'; data: RoutingRuleFields & { rule_id: string; org_id: string; created_by: string | null; at: string } }
  | { type: 'RoutingRuleUpdated'; data: Partial<RoutingRuleFields> & { by: string | null; at: string } }
  | { type: 'RoutingRuleDeleted'; data: { by: string | null; at: string } }
  /** `next_index`: the round-robin cursor after this pick (null for the other strategies). */
  | { type: 'CaseRouted'; data: { case_id: string; strategy: Strategy; assigned_to: string | null; team: string | null; reason: RoutingMiss; next_index: number | null; at: string } }

export type RoutingRuleState = { exists: boolean; deleted: boolean; orgId: string | null; fields: RoutingRuleFields | null; cursor: number }
const initialState = (): RoutingRuleState => ({ exists: false, deleted: false, orgId: null, fields: null, cursor: 0 })

function evolve(state: RoutingRuleState, event: RoutingRuleEvent): RoutingRuleState {
  switch (event.type) {
    case 'RoutingRuleCreated': {
      const { rule_id: _id, org_id, created_by: _by, at: _at, ...fields } = event.data
      return { ...initialState(), exists: true, orgId: org_id, fields }
    }
    case 'RoutingRuleUpdated': {
      const { by: _by, at: _at, ...changes } = event.data
      return { ...state, fields: { ...state.fields!, ...changes } }
    }
    case 'RoutingRuleDeleted':
      return { ...state, deleted: true }
    case 'CaseRouted':
      return event.data.next_index === null ? state : { ...state, cursor: event.data.next_index }
  }
}

/**
 * Route a case: `case` what the conditions read; `activePeople` which of the rule's people are
 * active members; `openCases` each one's open cases (least_busy). Facts looked up by the use case.
 */
export type RouteCase = { type: 'RouteCase'; orgId: string; caseId: string; case: RoutedCase; activePeople: readonly string[]; openCases: Readonly<Record<string, number>>; at: string }

export type RoutingRuleCommand =
  | { type: 'CreateRoutingRule'; ruleId: string; orgId: string; fields: RoutingRuleFields; actor: SettingsActor; at: string }
  | { type: 'ChangeRoutingRule'; orgId: string; changes: Partial<RoutingRuleFields>; actor: SettingsActor; at: string }
  | { type: 'DeleteRoutingRule'; orgId: string; actor: SettingsActor; at: string }
  | RouteCase

/** The original's serializer rules: a team for by_team; people for the others, on creation. */
function checkTargets(fields: RoutingRuleFields, creating: boolean): void {
  if (!fields.name.trim()) throw new ValidationError({ name: ['This field may not be blank.'] })
  if (fields.strategy === 'by_team' && !fields.target_team) throw new ValidationError({ target_team_id: ['by_team strategy requires target_team_id.'] })
  if (creating && fields.strategy !== 'by_team' && !fields.target_assignees.length) throw new ValidationError({ target_assignee_ids: [`${fields.strategy} strategy requires at least one target assignee.`] })
}

/** The rule's pick for a case it matches, and the cursor after it. */
function pick(fields: RoutingRuleFields, cursor: number, command: RouteCase): { assigned_to: string | null; team: string | null; reason: RoutingMiss; next_index: number | null } {
  if (fields.strategy === 'by_team') return { assigned_to: null, team: fields.target_team, reason: fields.target_team ? '' : 'missing_team', next_index: null }
  const pool = fields.target_assignees.filter((id) => command.activePeople.includes(id)).sort()
  if (!pool.length) return { assigned_to: null, team: null, reason: 'empty_pool', next_index: null }
  if (fields.strategy === 'direct') return { assigned_to: pool[0]!, team: null, reason: '', next_index: null }
  if (fields.strategy === 'least_busy') {
    const load = (id: string) => command.openCases[id] ?? 0
    return { assigned_to: [...pool].sort((a, b) => load(a) - load(b) || (a < b ? -1 : 1))[0]!, team: null, reason: '', next_index: null }
  }
  const index = cursor % pool.length
  return { assigned_to: pool[index]!, team: null, reason: '', next_index: (index + 1) % pool.length }
}

function decide(command: RoutingRuleCommand, state: RoutingRuleState): RoutingRuleEvent[] {
  const { at } = command
  if (command.type === 'RouteCase') {
    // A rule gone, off or not matching routes nothing: the walk goes on to the next one.
    const fields = state.fields
    if (!state.exists || state.deleted || state.orgId !== command.orgId || !fields?.is_active || !conditionsHold(fields.conditions, command.case)) return []
    return [{ type: 'CaseRouted', data: { case_id: command.caseId, strategy: fields.strategy, ...pick(fields, state.cursor, command), at } }]
  }
  adminOnly(command.actor)
  const by = command.actor.profileId
  if (command.type === 'CreateRoutingRule') {
    if (state.exists) return []
    checkTargets(command.fields, true)
    return [{ type: 'RoutingRuleCreated', data: { rule_id: command.ruleId, org_id: command.orgId, ...command.fields, created_by: by, at } }]
  }
  if (command.type === 'DeleteRoutingRule') return state.deleted && state.orgId === command.orgId ? [] : (liveIn(state, command.orgId, 'Routing rule not found'), [{ type: 'RoutingRuleDeleted', data: { by, at } }])
  liveIn(state, command.orgId, 'Routing rule not found')
  const changes = changedFields(state.fields!, command.changes)
  checkTargets({ ...state.fields!, ...changes }, false)
  return Object.keys(changes).length ? [{ type: 'RoutingRuleUpdated', data: { ...changes, by, at } }] : []
}

export const routingRuleDecider: Decider<RoutingRuleCommand, RoutingRuleState, RoutingRuleEvent> = { initialState, evolve, decide }
export const routingRuleStreams = streamCategory('routing_rule')
