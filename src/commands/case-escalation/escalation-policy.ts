import { ValidationError } from '../../errors.ts'
import type { Decider } from '../decider.ts'
import { nameBasedId } from '../name-based-id.ts'
import { streamCategory } from '../streams.ts'
import { adminOnly, changedFields, liveIn } from '../case-approval/settings-record.ts'
import type { SettingsActor } from '../case-approval/settings-record.ts'
import type { CasePriority } from '../case/fields.ts'

/**
 * Escalation policies (the original's EscalationPolicy): per priority, what an escalation of a
 * breached case does for each SLA instance, first response and resolution: notify its target (and
 * the team), reassign the case to the target, or both. At most one policy per priority: its stream
 * id is derived from the organization and the priority, so a second creation meets the first on
 * its own stream (400), and a deleted policy's priority may be given a new one.
 */
export const ESCALATION_ACTIONS = ['notify', 'reassign', 'notify_and_reassign'] as const
export type EscalationAction = (typeof ESCALATION_ACTIONS)[number]

export type EscalationPolicyFields = {
  first_response_action: EscalationAction
  resolution_action: EscalationAction
  first_response_target: string | null
  resolution_target: string | null
  notify_team: string | null
  is_active: boolean
}

// Events: the storage contract.
export type EscalationPolicyEvent =
  | { type: 'EscalationPolicyCreated'; data: EscalationPolicyFields & { policy_id: string; org_id: string; priority: CasePriority; created_by: string | null; at: string } }
  | { type: 'EscalationPolicyUpdated'; data: Partial<EscalationPolicyFields> & { by: string | null; at: string } }
  | { type: 'EscalationPolicyDeleted'; data: { by: string | null; at: string } }

export type EscalationPolicyState = { exists: boolean; deleted: boolean; orgId: string | null; fields: EscalationPolicyFields | null }
const initialState = (): EscalationPolicyState => ({ exists: false, deleted: false, orgId: null, fields: null })

function evolve(state: EscalationPolicyState, event: EscalationPolicyEvent): EscalationPolicyState {
  switch (event.type) {
    case 'EscalationPolicyCreated': {
      const { policy_id: _id, org_id, priority: _p, created_by: _by, at: _at, ...fields } = event.data
      return { exists: true, deleted: false, orgId: org_id, fields }
    }
    case 'EscalationPolicyUpdated': {
      const { by: _by, at: _at, ...changes } = event.data
      return { ...state, fields: { ...state.fields!, ...changes } }
    }
    case 'EscalationPolicyDeleted':
      return { ...state, deleted: true }
  }
}

export type EscalationPolicyCommand =
  | { type: 'CreateEscalationPolicy'; orgId: string; priority: CasePriority; fields: EscalationPolicyFields; actor: SettingsActor; at: string }
  | { type: 'ChangeEscalationPolicy'; orgId: string; changes: Partial<EscalationPolicyFields>; actor: SettingsActor; at: string }
  | { type: 'DeleteEscalationPolicy'; orgId: string; actor: SettingsActor; at: string }

/** The one policy id a priority of an organization has. */
export const escalationPolicyId = (orgId: string, priority: CasePriority): string => nameBasedId(`escalation-policy:${orgId}:${priority}`)

function decide(command: EscalationPolicyCommand, state: EscalationPolicyState): EscalationPolicyEvent[] {
  adminOnly(command.actor)
  const by = command.actor.profileId
  switch (command.type) {
    case 'CreateEscalationPolicy':
      if (state.exists && !state.deleted) throw new ValidationError({ priority: [`Policy already exists for priority ${command.priority}.`] })
      return [{ type: 'EscalationPolicyCreated', data: { policy_id: escalationPolicyId(command.orgId, command.priority), org_id: command.orgId, priority: command.priority, ...command.fields, created_by: by, at: command.at } }]
    case 'ChangeEscalationPolicy': {
      liveIn(state, command.orgId, 'Escalation policy not found')
      const changes = changedFields(state.fields!, command.changes)
      return Object.keys(changes).length ? [{ type: 'EscalationPolicyUpdated', data: { ...changes, by, at: command.at } }] : []
    }
    case 'DeleteEscalationPolicy':
      liveIn(state, command.orgId, 'Escalation policy not found')
      return [{ type: 'EscalationPolicyDeleted', data: { by, at: command.at } }]
  }
}

export const escalationPolicyDecider: Decider<EscalationPolicyCommand, EscalationPolicyState, EscalationPolicyEvent> = { initialState, evolve, decide }
export const escalationPolicyStreams = streamCategory('escalation_policy')
