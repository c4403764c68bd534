import { z } from 'zod'
import { ESCALATION_ACTIONS } from '../commands/case-escalation/escalation-policy.ts'
import type { EscalationPolicyEvent } from '../commands/case-escalation/escalation-policy.ts'
import { CASE_PRIORITIES } from '../commands/case/fields.ts'
import { By, Id, at, eventsOf, noPersonalData } from '../events/event-schemas.ts'
import { escalationPoliciesProjector } from '../projections/case-escalation/escalation-policies.ts'
import type { ModuleManifest } from './manifest.ts'

const policy = {
  first_response_action: z.enum(ESCALATION_ACTIONS),
  resolution_action: z.enum(ESCALATION_ACTIONS),
  first_response_target: Id.nullable(),
  resolution_target: Id.nullable(),
  notify_team: Id.nullable(),
  is_active: z.boolean(),
}

/** Escalation policies of breached cases, one per priority (escalation_policy-<id derived from the organization and the priority>). */
export const caseEscalationModule: ModuleManifest = {
  name: 'case-escalation',
  // A policy names members and a team by id.
  events: noPersonalData(eventsOf<EscalationPolicyEvent>()({
    EscalationPolicyCreated: { stream: 'escalation_policy', description: "An admin wrote the escalation policy of a priority: per SLA instance (first response, resolution), its action (notify, reassign, notify_and_reassign) and target, and a team to notify.", data: z.strictObject({ policy_id: Id, org_id: Id, priority: z.enum(CASE_PRIORITIES), ...policy, created_by: By, ...at }) },
    EscalationPolicyUpdated: { stream: 'escalation_policy', description: "An escalation policy's fields changed: only those, with their new values.", data: z.strictObject({ ...z.object(policy).partial().shape, by: By, ...at }) },
    EscalationPolicyDeleted: { stream: 'escalation_policy', description: 'An escalation policy was deleted: its priority escalates to nobody (a later policy for it reuses the stream).', data: z.strictObject({ by: By, ...at }) },
  })),
  routes: async (deps) => {
    const { caseEscalationRoutes } = await import('../http/case-escalation/escalation-policies.ts')
    return [caseEscalationRoutes(deps)]
  },
  projectors: [escalationPoliciesProjector],
  idKinds: [[/^\/api\/cases\/escalation-policies\/\{id\}/, 'escalationPolicy']],
}
