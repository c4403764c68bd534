/**
 * The activity feed's table (dashboard-activity.ts). `action` holds the feed's own list, which
 * ActivityRow narrows it to (record-kinds.ts); `entity_type` a record kind a manifest declares.
 */
export type DashboardActivityTable = {
  event_id: string
  org_id: string
  actor_id: string | null
  action: string
  entity_type: string
  entity_id: string
  description: string
  at: Date
  /** The event's place in the log: the order of rows with the same `at`. */
  position_commit: string
  position_prepare: string
}

export type DashboardActivityTables = { dashboard_activity: DashboardActivityTable }

// This module's tables join the one Database type (db/database.ts).
declare module '../../db/database.ts' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging: the tables are the members
  interface Database extends DashboardActivityTables {}
}
