import type { Deps } from '../../deps.ts'
import type { Position } from '../../eventstore/event-store.ts'
import type { Caller } from '../caller.ts'
import { commandSession } from '../command-session.ts'
import { checkOrgRefs, requireAdmin } from '../case-approval/org-refs.ts'
import type { CasePriority } from '../case/fields.ts'
import { escalationPolicyDecider, escalationPolicyId, escalationPolicyStreams } from './escalation-policy.ts'
import type { EscalationPolicyCommand, EscalationPolicyFields } from './escalation-policy.ts'

type PolicyDeps = Pick<Deps, 'db' | 'store' | 'clock'>

async function run(deps: PolicyDeps, caller: Caller, id: string, command: EscalationPolicyCommand): Promise<Position | null> {
  const session = commandSession(deps.store, caller)
  await session.run(escalationPolicyDecider, escalationPolicyStreams.stream(id), command)
  return session.position()
}

const refs = (deps: PolicyDeps, caller: Caller, fields: Partial<EscalationPolicyFields>) =>
  checkOrgRefs(deps.db, caller.orgId, { first_response_target_id: { profiles: fields.first_response_target ? [fields.first_response_target] : [] }, resolution_target_id: { profiles: fields.resolution_target ? [fields.resolution_target] : [] }, notify_team_id: { team: fields.notify_team } })

/** Creates the policy of a priority (admins); 400 when the priority has one. */
export async function createEscalationPolicy(deps: PolicyDeps, caller: Caller, priority: CasePriority, fields: EscalationPolicyFields): Promise<{ id: string; position: Position | null }> {
  requireAdmin(caller)
  await refs(deps, caller, fields)
  const id = escalationPolicyId(caller.orgId, priority)
  return { id, position: await run(deps, caller, id, { type: 'CreateEscalationPolicy', orgId: caller.orgId, priority, fields, actor: caller, at: deps.clock().toISOString() }) }
}

/** Changes a policy's named fields (admins); its priority stays. */
export async function changeEscalationPolicy(deps: PolicyDeps, caller: Caller, id: string, changes: Partial<EscalationPolicyFields>): Promise<Position | null> {
  requireAdmin(caller)
  await refs(deps, caller, changes)
  return run(deps, caller, id, { type: 'ChangeEscalationPolicy', orgId: caller.orgId, changes, actor: caller, at: deps.clock().toISOString() })
}

/** Deletes a policy (admins): its priority then escalates to nobody. */
export function deleteEscalationPolicy(deps: PolicyDeps, caller: Caller, id: string): Promise<Position | null> {
  requireAdmin(caller)
  return run(deps, caller, id, { type: 'DeleteEscalationPolicy', orgId: caller.orgId, actor: caller, at: deps.clock().toISOString() })
}
