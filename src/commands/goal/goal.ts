import { NotFoundError, ValidationError } from '../../errors.ts'
import type { Decider } from '../decider.ts'
import { streamCategory } from '../streams.ts'

/**
 * A sales goal: a target amount in one currency that one profile or one team should win between
 * two dates (both inclusive). One stream per goal; deleting removes it for good. Its progress is
 * not kept here: the goals read model sums the won deals (projections/goals.ts).
 */

/** What a goal is. Dates are YYYY-MM-DD; the target is a canonical decimal string with 2 places ("1500.00"). */
export type GoalFields = {
  name: string
  owner_type: OwnerType
  owner_id: string
  period_start: string
  period_end: string
  target_amount: string
  currency: string
}

/** Who a goal belongs to: one profile, or one team (its current members). */
export const OWNER_TYPES = ['profile', 'team'] as const
export type OwnerType = (typeof OWNER_TYPES)[number]

// Events: the storage contract (never change a type name or data shape). GoalChanged carries only the fields that changed, with their new values.
export type GoalEvent =
  | { type: 'GoalSet'; data: GoalFields & { goal_id: string; org_id: string; created_by: string | null; at: string } }
  | { type: 'GoalChanged'; data: { changes: Partial<GoalFields>; at: string } }
  | { type: 'GoalDeleted'; data: { at: string } }

// Fold.
export type GoalState = { exists: boolean; orgId: string | null; deleted: boolean; fields: GoalFields | null }

export const initialGoalState = (): GoalState => ({ exists: false, orgId: null, deleted: false, fields: null })

export function evolveGoal(state: GoalState, event: GoalEvent): GoalState {
  switch (event.type) {
    case 'GoalSet': {
      const { goal_id: _id, org_id, created_by: _by, at: _at, ...fields } = event.data
      return { exists: true, orgId: org_id, deleted: false, fields }
    }
    case 'GoalChanged':
      return { ...state, fields: state.fields && { ...state.fields, ...event.data.changes } }
    case 'GoalDeleted':
      return { ...state, deleted: true }
  }
}

// Decisions. Time, ids, the caller and the already-checked owner (a profile or team of the org) arrive in the command.
export type GoalCommand =
  | { type: 'SetGoal'; goalId: string; orgId: string; fields: GoalFields; actorId: string | null; at: string }
  /** PUT: the whole goal as it should be. */
  | { type: 'ChangeGoal'; orgId: string; fields: GoalFields; at: string }
  | { type: 'DeleteGoal'; orgId: string; at: string }

const AMOUNT = /^\d{1,13}(\.\d{1,2})?$/

/** A decimal with at most 2 places as its canonical string ("1500" → "1500.00"), or null when malformed. */
export function canonicalAmount(value: string): string | null {
  if (!AMOUNT.test(value)) return null
  const [whole, fraction = ''] = value.split('.')
  return `${BigInt(whole!)}.${fraction.padEnd(2, '0')}`
}

/** The rules every write checks (the HTTP schema checks them first, with the same field names): 400 naming each field. */
export function checkGoal(fields: GoalFields): GoalFields {
  const errors: Record<string, string[]> = {}
  const target = canonicalAmount(fields.target_amount)
  if (target === null || /^0+\.00$/.test(target)) errors.target_amount = ['Expected a decimal above 0 with at most 13 digits before and 2 after the point.']
  if (fields.period_start > fields.period_end) errors.period_end = ['Expected a date on or after period_start.']
  if (!OWNER_TYPES.includes(fields.owner_type)) errors.owner_type = ['Expected profile or team.']
  if (Object.keys(errors).length) throw new ValidationError(errors)
  return { ...fields, target_amount: target! }
}

function existing(state: GoalState, orgId: string): asserts state is GoalState & { fields: GoalFields } {
  if (!state.exists || state.orgId !== orgId || state.deleted || !state.fields) throw new NotFoundError('Goal not found')
}

/** Deleting a deleted goal of the organization again is a no-op; another org's goal is missing. */
function decideDelete(command: Extract<GoalCommand, { type: 'DeleteGoal' }>, state: GoalState): GoalEvent[] {
  const alreadyGone = state.exists && state.orgId === command.orgId && state.deleted
  if (alreadyGone) return []
  existing(state, command.orgId)
  return [{ type: 'GoalDeleted', data: { at: command.at } }]
}

export function decideGoal(command: GoalCommand, state: GoalState): GoalEvent[] {
  switch (command.type) {
    case 'SetGoal': {
      if (state.exists) return []
      const fields = checkGoal(command.fields)
      return [{ type: 'GoalSet', data: { goal_id: command.goalId, org_id: command.orgId, ...fields, created_by: command.actorId, at: command.at } }]
    }
    case 'ChangeGoal': {
      existing(state, command.orgId)
      const next = checkGoal(command.fields)
      const keys = (Object.keys(next) as (keyof GoalFields)[]).filter((key) => next[key] !== state.fields[key])
      if (!keys.length) return []
      return [{ type: 'GoalChanged', data: { changes: Object.fromEntries(keys.map((key) => [key, next[key]])), at: command.at } }]
    }
    case 'DeleteGoal':
      return decideDelete(command, state)
  }
}

export const goalDecider: Decider<GoalCommand, GoalState, GoalEvent> = { initialState: initialGoalState, evolve: evolveGoal, decide: decideGoal }

export const goalStreams = streamCategory('goal')
