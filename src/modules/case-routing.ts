import { z } from 'zod'
import { CONDITION_OPS } from '../commands/case-routing/conditions.ts'
import { STRATEGIES } from '../commands/case-routing/routing-rule.ts'
import type { RoutingRuleEvent } from '../commands/case-routing/routing-rule.ts'
import { By, Id, Ids, at, eventsOf, noPersonalData } from '../events/event-schemas.ts'
import { caseRoutingProjector } from '../projections/case-routing/routing-rules.ts'
import type { ModuleManifest } from './manifest.ts'

const Scalar = z.union([z.string(), z.number(), z.boolean(), z.null()])
const rule = {
  name: z.string(),
  priority_order: z.number().int(),
  is_active: z.boolean(),
  conditions: z.array(z.strictObject({ field: z.string(), op: z.enum(CONDITION_OPS), value: z.union([Scalar, z.array(Scalar)]) })),
  strategy: z.enum(STRATEGIES),
  stop_processing: z.boolean(),
  target_assignees: Ids,
  target_team: Id.nullable(),
}

/** Routing of new cases: each rule's definition and every case it routed (routing_rule-<id>), its round-robin cursor the fold of them. */
export const caseRoutingModule: ModuleManifest = {
  name: 'case-routing',
  // Rules name members and teams by id; a condition's value is the organization's criterion (a priority, a domain), not a person's data.
  events: noPersonalData(eventsOf<RoutingRuleEvent>()({
    RoutingRuleCreated: { stream: 'routing_rule', description: 'An admin wrote a routing rule: the conditions a new case must meet (all of them), and whom it gives it to (strategy, people, team), in the order of `priority_order`.', data: z.strictObject({ rule_id: Id, org_id: Id, ...rule, created_by: By, ...at }) },
    RoutingRuleUpdated: { stream: 'routing_rule', description: "A routing rule's fields changed: only those, with their new values.", data: z.strictObject({ ...z.object(rule).partial().shape, by: By, ...at }) },
    RoutingRuleDeleted: { stream: 'routing_rule', description: 'A routing rule was deleted.', data: z.strictObject({ by: By, ...at }) },
    CaseRouted: { stream: 'routing_rule', description: "The rule matched a new case and picked its assignee (or team), or none (`reason`: empty_pool, missing_team); `next_index`: the round-robin cursor after the pick (null for the other strategies). Appended with the case's assignment.", data: z.strictObject({ case_id: Id, strategy: z.enum(STRATEGIES), assigned_to: Id.nullable(), team: Id.nullable(), reason: z.enum(['', 'empty_pool', 'missing_team']), next_index: z.number().int().min(0).nullable(), ...at }) },
  })),
  routes: async (deps) => {
    const { caseRoutingRoutes } = await import('../http/case-routing/routing-rules.ts')
    return [caseRoutingRoutes(deps)]
  },
  projectors: [caseRoutingProjector],
  idKinds: [[/^\/api\/cases\/routing-rules\/\{id\}/, 'routingRule']],
}
