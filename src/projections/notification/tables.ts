/**
 * Each member's notifications (issue 19), the original's Notification: what a person must act on.
 * Read off the log: a record assigned to them (a new assignee of an account, contact, lead or deal,
 * not the one who assigned it), a comment whose `@name`s named them (resolved when it was written,
 * in the event), and what the scheduled processes raised on their notification stream (a task due,
 * a deal turned red). Their own stream's events mark notifications read or deleted.
 *
 * A notification read off another stream has an id derived from the event and the recipient, so
 * applying the event twice inserts nothing and a rebuild gives the same ids the members act on. The
 * record's name and page are read when listed (record-kinds.ts).
 */
export type NotificationRow = {
  id: string
  org_id: string
  recipient_id: string
  verb: string
  actor_id: string | null
  entity_type: string
  entity_id: string
  data: Record<string, unknown>
  read_at: Date | null
  is_deleted: boolean
  created_at: Date
  /** The event that made it: what the live stream sends it under. */
  position_commit: string
  position_prepare: string
}

/** Who each record is assigned to, as far as this read model has seen: a change notifies only the new assignees. */
export type NotificationAssigneesRow = { entity_id: string; org_id: string; assigned_to: string[] }

export type NotificationTables = { notifications: NotificationRow; notification_assignees: NotificationAssigneesRow }

// This module's tables join the one Database type (db/database.ts).
declare module '../../db/database.ts' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging: the tables are the members
  interface Database extends NotificationTables {}
}
