import { NotFoundError } from '../../errors.ts'
import type { CaseStatus } from '../case/fields.ts'
import type { ReopenFacts } from '../case/inbound.ts'
import type { Decider } from '../decider.ts'
import { nameBasedId } from '../name-based-id.ts'
import { streamCategory } from '../streams.ts'

/**
 * The organization's reopen policy (the original's ReopenPolicy, one per organization): whether a
 * customer's reply reopens a Closed case, within how many days of its closing, into which status,
 * and whether its assignees are told. Until an admin sets it, the original's defaults hold.
 */
/** The original's serializer: only statuses in which somebody still owes the customer something. */
export const REOPEN_TO_STATUSES = ['New', 'Assigned', 'Pending'] as const satisfies readonly CaseStatus[]
export type ReopenToStatus = (typeof REOPEN_TO_STATUSES)[number]
export type ReopenPolicy = ReopenFacts & { reopen_to_status: ReopenToStatus; notify_assigned: boolean }
export const REOPEN_DEFAULTS: ReopenPolicy = { is_enabled: true, reopen_window_days: 7, reopen_to_status: 'Pending', notify_assigned: true }

// Events: the storage contract (never change a type name or data shape).
export type ReopenPolicyEvent = { type: 'CaseReopenPolicySet'; data: ReopenPolicy & { org_id: string; by: string | null; at: string } }

type State = { orgId: string | null; policy: ReopenPolicy }
export type ReopenPolicyCommand = { type: 'SetReopenPolicy'; orgId: string; changes: Partial<ReopenPolicy>; actorId: string | null; at: string }

export const reopenPolicyId = (orgId: string): string => nameBasedId(`case-reopen-policy:${orgId}`)

function decide(command: ReopenPolicyCommand, state: State): ReopenPolicyEvent[] {
  if (state.orgId !== null && state.orgId !== command.orgId) throw new NotFoundError()
  const next = { ...state.policy, ...Object.fromEntries(Object.entries(command.changes).filter(([, value]) => value !== undefined)) }
  const same = (Object.keys(next) as (keyof ReopenPolicy)[]).every((key) => next[key] === state.policy[key])
  // The first save is recorded even when it repeats the defaults: the policy is then the admin's choice.
  return same && state.orgId !== null ? [] : [{ type: 'CaseReopenPolicySet', data: { ...next, org_id: command.orgId, by: command.actorId, at: command.at } }]
}

export const reopenPolicyDecider: Decider<ReopenPolicyCommand, State, ReopenPolicyEvent> = {
  initialState: () => ({ orgId: null, policy: REOPEN_DEFAULTS }),
  evolve: (_state, event) => {
    const { org_id, by: _by, at: _at, ...policy } = event.data
    return { orgId: org_id, policy }
  },
  decide,
}

export const reopenPolicyStreams = streamCategory('case_reopen_policy')
