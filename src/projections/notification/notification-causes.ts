import { sql } from 'kysely'
import type { Db } from '../../db/database.ts'

/**
 * What only the passing of time makes worth a notification, read from the tasks and deals read
 * models for the due-notifier process (processes/due-notifier.ts). Each cause names its record,
 * the people to tell and a `key` that changes when the cause is a new one (another due date,
 * another stint in a stage), so a notification is raised once per cause and person.
 */
export type TimeCause = {
  orgId: string
  verb: 'task.due_today' | 'task.overdue' | 'opportunity.rotten'
  entityType: 'Task' | 'Opportunity'
  entityId: string
  key: string
  recipients: string[]
  data: Record<string, string | number | null>
}

/** The people a record's reminder is for: its assignees, or its creator while it has none. */
const recipientsOf = (assignedTo: readonly string[], createdBy: string | null): string[] => (assignedTo.length ? [...new Set(assignedTo)] : createdBy ? [createdBy] : [])

/**
 * Open (not completed, not deleted) tasks due today or earlier in their organization's calendar
 * (its time zone): due today, or overdue.
 */
export async function dueTaskCauses(db: Db, now: Date): Promise<TimeCause[]> {
  const { rows } = await sql<{ id: string; org_id: string; due_date: string; today: string; assigned_to: string[]; created_by: string | null }>`
    SELECT t.id, t.org_id, t.due_date::text AS due_date, (${now}::timestamptz AT TIME ZONE o.timezone)::date::text AS today, t.assigned_to, t.created_by
    FROM tasks t JOIN organizations o ON o.id = t.org_id
    WHERE NOT t.is_deleted AND t.status <> 'Completed' AND t.due_date IS NOT NULL AND t.due_date <= (${now}::timestamptz AT TIME ZONE o.timezone)::date
    ORDER BY t.due_date, t.id`.execute(db)
  return rows.map((task) => {
    const verb = task.due_date === task.today ? 'task.due_today' : 'task.overdue'
    return { orgId: task.org_id, verb, entityType: 'Task', entityId: task.id, key: task.due_date, recipients: recipientsOf(task.assigned_to, task.created_by), data: { due_date: task.due_date } }
  })
}

/** Deals that turned red (§3.2: `stalls_at`, see opportunity/opportunity-rollups.ts, has passed), once per stint in a stage. */
export async function redDealCauses(db: Db, now: Date): Promise<TimeCause[]> {
  const { rows } = await sql<{ id: string; org_id: string; stage: string; stage_changed_at: Date; stalls_at: Date; assigned_to: string[]; created_by: string | null }>`
    SELECT id, org_id, stage, stage_changed_at, stalls_at, assigned_to, created_by FROM opportunities
    WHERE NOT is_deleted AND stalls_at IS NOT NULL AND stalls_at <= ${now}::timestamptz ORDER BY stalls_at, id`.execute(db)
  return rows.map((deal) => ({
    orgId: deal.org_id,
    verb: 'opportunity.rotten',
    entityType: 'Opportunity',
    entityId: deal.id,
    key: deal.stage_changed_at.toISOString(),
    recipients: recipientsOf(deal.assigned_to, deal.created_by),
    data: { stage: deal.stage, in_stage_since: deal.stage_changed_at.toISOString(), red_since: deal.stalls_at.toISOString() },
  }))
}
