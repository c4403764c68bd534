import { z } from 'zod'
import { GOAL_TYPES, OWNER_TYPES, PERIOD_TYPES } from '../commands/goal/goal.ts'
import type { GoalEvent } from '../commands/goal/goal.ts'
import { By, Day, Decimal, Id, at, eventsOf, noPersonalData } from '../events/event-schemas.ts'
import { goalsProjector } from '../projections/goal/goals.ts'
import type { ModuleManifest } from './manifest.ts'

// Goals (goal-<id>).
const goalShape = {
  name: z.string(),
  goal_type: z.enum(GOAL_TYPES),
  owner_type: z.enum(OWNER_TYPES),
  owner_id: Id.nullable(),
  period_type: z.enum(PERIOD_TYPES),
  period_start: Day,
  period_end: Day,
  target_amount: Decimal,
  currency: z.string(),
  is_active: z.boolean(),
}

/** Goals: sales targets of a member, a team or the organization. */
export const goalModule: ModuleManifest = {
  name: 'goal',
  events: noPersonalData(eventsOf<GoalEvent>()({
    // goal-<id>
    GoalSet: { stream: 'goal', description: 'A sales goal was set for a profile, a team or the organization (v2: with its goal type, period type and active flag).', data: z.strictObject({ goal_id: Id, org_id: Id, ...goalShape, created_by: By, ...at }) },
    GoalChanged: { stream: 'goal', description: 'A goal changed: the new values of the changed fields.', data: z.strictObject({ changes: z.strictObject(goalShape).partial(), ...at }) },
    GoalDeleted: { stream: 'goal', description: 'A goal was deleted.', data: z.strictObject(at) },
  })),
  routes: async (deps) => {
    const { goalRoutes } = await import('../http/goals/goals.ts')
    return [goalRoutes(deps)]
  },
  projectors: [goalsProjector],
  idKinds: [
    [/^\/api\/opportunities\/goals\/\{id\}/, 'goal'],
  ],
}
