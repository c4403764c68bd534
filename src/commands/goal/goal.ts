import { NotFoundError, ValidationError } from '../../errors.ts'
import type { Decider } from '../decider.ts'
import { streamCategory } from '../streams.ts'

/**
 * A sales goal (the original's SalesGoal): a target that one profile, one team or the whole
 * organization should reach between two dates (both inclusive): a won amount in one currency
 * (REVENUE) or a number of won deals (DEALS_CLOSED). One stream per goal; deleting removes it for
 * good. Its progress is not kept here: the goals read model computes it from the won deals
 * (projections/goal/goals.ts).
 */

export const GOAL_TYPES = ['REVENUE', 'DEALS_CLOSED'] as const
export type GoalType = (typeof GOAL_TYPES)[number]
export const PERIOD_TYPES = ['MONTHLY', 'QUARTERLY', 'YEARLY', 'CUSTOM'] as const
export type PeriodType = (typeof PERIOD_TYPES)[number]

/** Who a goal belongs to: one profile, one team (its current members), or the organization (every won deal). */
export const OWNER_TYPES = ['profile', 'team', 'org'] as const
export type OwnerType = (typeof OWNER_TYPES)[number]

/**
 * What a goal is. Dates are YYYY-MM-DD; the target (answered as target_value) is a canonical decimal
 * string with 2 places ("1500.00"): an amount in `currency` for REVENUE, a number of deals for
 * DEALS_CLOSED. `owner_id` is null exactly when the owner is the organization.
 */
export type GoalFields = {
  name: string
  goal_type: GoalType
  owner_type: OwnerType
  owner_id: string | null
  period_type: PeriodType
  period_start: string
  period_end: string
  target_amount: string
  currency: string
  is_active: boolean
}

// Events: the storage contract (never change a type name or data shape). GoalChanged carries only the fields that changed, with their new values.
// GoalSet v2 (src/events/versions.ts) added goal_type, period_type and is_active, and owner_type 'org'.
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
  /** The whole goal as it should be (a partial PUT is merged onto the current goal by the caller). */
  | { type: 'ChangeGoal'; orgId: string; fields: GoalFields; at: string }
  | { type: 'DeleteGoal'; orgId: string; at: string }

const AMOUNT = /^\d{1,13}(\.\d{1,2})?$/

/** A decimal with at most 2 places as its canonical string ("1500" → "1500.00"), or null when malformed. */
export function canonicalAmount(value: string): string | null {
  if (!AMOUNT.test(value)) return null
  const [whole, fraction = ''] = value.split('.')
  return `${BigInt(whole!)}.${fraction.padEnd(2, '0')}`
}

/** The rules every write checks (the HTTP layer checks them first, with the API's field names): 400 naming each field. */
export function checkGoal(fields: GoalFields): GoalFields {
  const errors: Record<string, string[]> = {}
  const target = canonicalAmount(fields.target_amount)
  if (target === null || /^0+\.00$/.test(target)) errors.target_value = ['Target value must be greater than 0.']
  if (fields.period_start >= fields.period_end) errors.period_end = ['Period end must be after period start.']
  if (!OWNER_TYPES.includes(fields.owner_type) || (fields.owner_type === 'org') !== (fields.owner_id === null)) errors.assigned_to = ['Expected a profile, a team, or neither (the whole organization).']
  if (!GOAL_TYPES.includes(fields.goal_type)) errors.goal_type = [`Expected one of ${GOAL_TYPES.join(', ')}.`]
  if (!PERIOD_TYPES.includes(fields.period_type)) errors.period_type = [`Expected one of ${PERIOD_TYPES.join(', ')}.`]
  if (Object.keys(errors).length) throw new ValidationError(errors)
  return { ...fields, target_amount: target! }
}

export type GoalStatus = 'completed' | 'on_track' | 'at_risk' | 'behind'

/**
 * Where a goal stands against the calendar (the original's rule): completed at 100%; otherwise the
 * expected pace is the share of the period elapsed by `today` (0 before it starts, 100 from its last
 * day): on_track at or above the pace (or before the period), at_risk from 80% of it, else behind.
 */
export function goalStatus(progressPercent: number, period: { start: string; end: string }, today: string): GoalStatus {
  if (progressPercent >= 100) return 'completed'
  const day = (date: string) => Date.parse(`${date}T00:00:00Z`) / 86_400_000
  const pace = today < period.start ? 0 : today >= period.end ? 100 : ((day(today) - day(period.start)) / (day(period.end) - day(period.start) || 1)) * 100
  if (pace === 0 || progressPercent >= pace) return 'on_track'
  return progressPercent >= pace * 0.8 ? 'at_risk' : 'behind'
}

function existing(state: GoalState, orgId: string): asserts state is GoalState & { fields: GoalFields } {
  if (!state.exists || state.orgId !== orgId || state.deleted || !state.fields) throw new NotFoundError('Goal not found.')
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
