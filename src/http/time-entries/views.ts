import { z } from 'zod'
import type { Db } from '../../db/database.ts'
import { membersByIds } from '../../identity/users.ts'
import type { TimeEntryRow } from '../../projections/time-entry/time-entries.ts'
import { ProfileRef, profileRefOf } from '../kernel/relations.ts'

/** A time entry as the original's TimeEntrySerializer answers it; the timesheet expands `case` and adds the running time. */
export const TimeEntry = z.object({
  id: z.uuid(),
  case: z.uuid(),
  profile: ProfileRef.nullable().describe('The agent whose time it is'),
  started_at: z.string(),
  ended_at: z.string().nullable().describe('Null while the timer runs'),
  duration_minutes: z.number().int().describe('Whole minutes; 0 while running'),
  description: z.string(),
  billable: z.boolean(),
  hourly_rate: z.string().nullable().describe('A decimal: the rate when logged'),
  currency: z.string(),
  invoice: z.null().describe('The invoice that billed it: none until invoicing bills time'),
  billed: z.boolean(),
  auto_stopped: z.boolean(),
  is_running: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
})
export type TimeEntryView = z.infer<typeof TimeEntry>

export const TimesheetEntry = TimeEntry.extend({
  case: z.object({ id: z.uuid(), name: z.string() }),
  live_duration_minutes: z.number().int().optional().describe('A running timer: whole minutes so far'),
})

/** Entries as the API answers them: the agent as a profile object. */
export async function timeEntryViews(db: Db, orgId: string, rows: readonly TimeEntryRow[]): Promise<TimeEntryView[]> {
  const members = await membersByIds(db, orgId, [...new Set(rows.map((row) => row.profile_id))])
  const profile = new Map(members.map((member) => [member.id, profileRefOf(member)]))
  return rows.map((row) => ({
    id: row.id,
    case: row.case_id,
    profile: profile.get(row.profile_id) ?? null,
    started_at: row.started_at.toISOString(),
    ended_at: row.ended_at?.toISOString() ?? null,
    duration_minutes: row.duration_minutes,
    description: row.description,
    billable: row.billable,
    hourly_rate: row.hourly_rate,
    currency: row.currency,
    invoice: null,
    billed: row.billed,
    auto_stopped: row.auto_stopped,
    is_running: row.ended_at === null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  }))
}
