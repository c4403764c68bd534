import { randomUUID } from 'node:crypto'
import type { Deps } from '../../deps.ts'
import type { Position } from '../../eventstore/event-store.ts'
import type { Caller } from '../caller.ts'
import { commandSession } from '../command-session.ts'
import { checkOrgRefs, requireAdmin } from '../case-approval/org-refs.ts'
import { routingRuleDecider, routingRuleStreams } from './routing-rule.ts'
import type { RoutingRuleCommand, RoutingRuleFields } from './routing-rule.ts'

type RoutingDeps = Pick<Deps, 'db' | 'store' | 'clock'>

async function run(deps: RoutingDeps, caller: Caller, id: string, command: RoutingRuleCommand): Promise<Position | null> {
  const session = commandSession(deps.store, caller)
  await session.run(routingRuleDecider, routingRuleStreams.stream(id), command)
  return session.position()
}

const refs = (deps: RoutingDeps, caller: Caller, fields: Partial<RoutingRuleFields>) =>
  checkOrgRefs(deps.db, caller.orgId, { ...(fields.target_assignees && { target_assignee_ids: { profiles: fields.target_assignees } }), target_team_id: { team: fields.target_team } })

/** Creates a routing rule (admins); its people and team must be of the organization. */
export async function createRoutingRule(deps: RoutingDeps, caller: Caller, fields: RoutingRuleFields): Promise<{ id: string; position: Position | null }> {
  requireAdmin(caller)
  await refs(deps, caller, fields)
  const id = randomUUID()
  return { id, position: await run(deps, caller, id, { type: 'CreateRoutingRule', ruleId: id, orgId: caller.orgId, fields, actor: caller, at: deps.clock().toISOString() }) }
}

/** Changes a routing rule's named fields (admins). */
export async function changeRoutingRule(deps: RoutingDeps, caller: Caller, id: string, changes: Partial<RoutingRuleFields>): Promise<Position | null> {
  requireAdmin(caller)
  await refs(deps, caller, changes)
  return run(deps, caller, id, { type: 'ChangeRoutingRule', orgId: caller.orgId, changes, actor: caller, at: deps.clock().toISOString() })
}

/** Deletes a routing rule for good (admins); the cases it routed keep their assignees. */
export function deleteRoutingRule(deps: RoutingDeps, caller: Caller, id: string): Promise<Position | null> {
  requireAdmin(caller)
  return run(deps, caller, id, { type: 'DeleteRoutingRule', orgId: caller.orgId, actor: caller, at: deps.clock().toISOString() })
}
