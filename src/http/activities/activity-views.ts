import { z } from 'zod'
import { ACTION_DISPLAY, ACTIVITY_ACTIONS } from '../../projections/activity/dashboard-activity.ts'
import type { ActivityAction, ActivityView } from '../../projections/activity/dashboard-activity.ts'
import type { RecordKinds } from '../../projections/record/record-kinds.ts'
import { humanizedTime } from '../dashboard/dashboard-views.ts'
import { EntityErased, erasedMarkAs } from '../kernel/relations.ts'

/** One entry of the activity feed, as the original's dashboard activity (GET /api/activities/ and the dashboard's `activities`). */
export const activitySchema = (kinds: RecordKinds) => z.object({
  id: z.uuid().describe('The id of the event the row comes from'),
  user: z.object({ id: z.uuid().describe('Profile id'), email: z.string(), name: z.string().describe('First and last name, or the email while both are blank'), profile_pic: z.string().nullable().describe('Always null: profiles have no picture') }).nullable().describe('Who acted; null for system work'),
  action: z.enum(ACTIVITY_ACTIONS),
  action_display: z.string(),
  entity_type: z.enum(kinds.types),
  entity_id: z.uuid(),
  entity_name: z.string().nullable().describe("The record's current name; null once the record is gone"),
  entity_erased: EntityErased,
  description: z.string(),
  link: z.string().describe("The record's page in the web app (`/accounts/<id>`, `/contacts/<id>`, `/leads/<id>`, `/pipeline/<id>`, `/tasks/<id>`)"),
  timestamp: z.string().describe('ISO 8601'),
  humanized_time: z.string().describe('How long ago, in words ("5 minutes ago")'),
  activity_type: z.enum(ACTIVITY_ACTIONS.map((a) => a.toLowerCase()) as [Lowercase<ActivityAction>]).describe('`action` in lower case (the key the original\'s phone app reads)'),
  created_at: z.string().describe('Same as `timestamp` (the phone app\'s name)'),
  created_by: z.object({ user__email: z.string() }).nullable().describe("The actor's email as the phone app reads it; null for system work"),
})

export const activityBody = (row: ActivityView, now: Date): z.infer<ReturnType<typeof activitySchema>> => ({
  id: row.event_id,
  user: row.actor_id && row.actor_email ? { id: row.actor_id, email: row.actor_email, name: row.actor_name ?? row.actor_email, profile_pic: null } : null,
  action: row.action,
  action_display: ACTION_DISPLAY[row.action],
  entity_type: row.entity_type,
  entity_id: row.entity_id,
  entity_name: row.entity_name,
  ...erasedMarkAs('entity_erased', row.entity_erased),
  description: row.description,
  link: row.link,
  timestamp: row.at.toISOString(),
  humanized_time: humanizedTime(row.at, now),
  activity_type: row.action.toLowerCase() as Lowercase<ActivityAction>,
  created_at: row.at.toISOString(),
  created_by: row.actor_id && row.actor_email ? { user__email: row.actor_email } : null,
})
