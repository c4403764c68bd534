import { z } from 'zod'
import type { Db } from '../../db/database.ts'
import type { NotificationView } from '../../projections/notification/notifications.ts'
import { EntityErased, ProfileRef, erasedMarkAs, profileRefs } from '../kernel/relations.ts'

/** A notification as the original answers it (list, and each frame of the live stream). */
export const Notification = z.object({
  id: z.uuid(),
  verb: z.string().describe('What happened, `<kind>.<what>`: `lead.assigned`, `opportunity.mentioned`, `opportunity.rotten`, `task.due_today`, `task.overdue`, `case.sla_breached` …'),
  actor: ProfileRef.nullable().describe('Who caused it; null for what time caused (due tasks, red deals)'),
  entity_type: z.string().describe('The kind of record: Account, Contact, Lead, Opportunity, Task'),
  entity_id: z.uuid(),
  entity_name: z.string().describe("The record's current name; blank once it is gone"),
  entity_erased: EntityErased,
  data: z.record(z.string(), z.unknown()).describe('Per verb: `comment_excerpt` for mentions, `due_date` for tasks, `days_in_stage` for red deals, `level`, `breached` and `actions` for breached cases'),
  link: z.string().describe("The record's page in the web app, e.g. `/leads/<id>`"),
  read_at: z.string().nullable(),
  created_at: z.string(),
})

export async function notificationBodies(db: Db, orgId: string, rows: readonly NotificationView[]): Promise<z.infer<typeof Notification>[]> {
  const actorIds = [...new Set(rows.flatMap((row) => row.actor_id ?? []))]
  const actors = new Map((await profileRefs(db, orgId, actorIds)).map((ref) => [ref.id, ref]))
  return rows.map((row) => ({
    id: row.id,
    verb: row.verb,
    actor: (row.actor_id && actors.get(row.actor_id)) || null,
    entity_type: row.entity_type,
    entity_id: row.entity_id,
    entity_name: row.entity_name ?? '',
    ...erasedMarkAs('entity_erased', row.entity_erased),
    data: row.data,
    link: row.link,
    read_at: row.read_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
  }))
}
