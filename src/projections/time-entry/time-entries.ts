import { sql } from 'kysely'
import type { TimeEntryEvent } from '../../commands/time-entry/time-entry.ts'
import type { Db } from '../../db/database.ts'
import { insertRowsOnce } from '../../db/insert-rows.ts'
import { domainEventOf } from '../../events/versions.ts'
import type { Viewer } from '../../visibility/policy.ts'
import type { Projector } from '../kernel/projector.ts'
import type { TimeEntryRow } from './tables.ts'

export type { TimeEntryRow } from './tables.ts'

export const timeEntriesProjector: Projector = {
  name: 'time_entries',
  version: 1,
  eventTypes: ['TimerStarted', 'TimeLogged', 'TimerStopped', 'TimeEntryUpdated', 'TimeEntryDeleted', 'TimeEntryBilled'],
  tables: ['time_entries'],
  async createTables(db) {
    await db.schema
      .createTable('time_entries')
      .addColumn('id', 'uuid', (c) => c.primaryKey())
      .addColumn('org_id', 'uuid', (c) => c.notNull())
      .addColumn('case_id', 'uuid', (c) => c.notNull())
      .addColumn('profile_id', 'uuid', (c) => c.notNull())
      .addColumn('started_at', 'timestamptz', (c) => c.notNull())
      .addColumn('ended_at', 'timestamptz')
      .addColumn('duration_minutes', 'integer', (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull())
      .addColumn('billable', 'boolean', (c) => c.notNull())
      .addColumn('hourly_rate', sql`numeric(12, 2)`)
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('billed', 'boolean', (c) => c.notNull().defaultTo(false))
      .addColumn('auto_stopped', 'boolean', (c) => c.notNull().defaultTo(false))
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
      .execute()
  },
  async createIndexes(db) {
    await db.schema.createIndex('time_entries_case').on('time_entries').columns(['case_id', 'started_at']).execute()
    await db.schema.createIndex('time_entries_profile').on('time_entries').columns(['org_id', 'profile_id', 'started_at']).execute()
  },
  // Inserts once, sets values or deletes: applying an event twice changes nothing.
  async apply(db, recorded) {
    const event = domainEventOf<TimeEntryEvent>(recorded)
    const id = event.data.time_entry_id
    const entry = db.updateTable('time_entries').where('id', '=', id)
    switch (event.type) {
      case 'TimerStarted':
      case 'TimeLogged': {
        const { time_entry_id: _id, by: _by, at, ...fields } = event.data
        const ended = event.type === 'TimeLogged' ? { ended_at: event.data.ended_at, duration_minutes: event.data.duration_minutes } : { ended_at: null, duration_minutes: 0 }
        return insertRowsOnce(db, 'time_entries', 'id', [{ id, ...fields, ...ended, billed: false, auto_stopped: false, created_at: at, updated_at: at }])
      }
      case 'TimerStopped':
        await entry.set({ ended_at: new Date(event.data.ended_at), duration_minutes: event.data.duration_minutes, auto_stopped: event.data.auto_stopped ?? false, updated_at: new Date(event.data.at) }).execute()
        return
      case 'TimeEntryUpdated': {
        const { started_at, ended_at, ...fields } = event.data.changes
        await entry
          .set({ ...fields, ...(started_at && { started_at: new Date(started_at) }), ...(ended_at && { ended_at: new Date(ended_at) }), duration_minutes: event.data.duration_minutes, updated_at: new Date(event.data.at) })
          .execute()
        return
      }
      case 'TimeEntryBilled':
        await entry.set({ billed: true, updated_at: new Date(event.data.at) }).execute()
        return
      case 'TimeEntryDeleted':
        await db.deleteFrom('time_entries').where('id', '=', id).execute()
    }
  },
}

/** The entries the viewer sees: an admin the organization's, anyone else their own (the original's rule). */
function visibleEntries(db: Db, viewer: Viewer) {
  const query = db.selectFrom('time_entries').selectAll().where('org_id', '=', viewer.orgId)
  if (viewer.isAdmin) return query
  return viewer.profileId === null ? query.where(sql<boolean>`false`) : query.where('profile_id', '=', viewer.profileId)
}

/** An entry the viewer sees, or undefined: another organization's or another member's looks exactly like a missing one. */
export const timeEntryOf = (db: Db, viewer: Viewer, id: string): Promise<TimeEntryRow | undefined> => visibleEntries(db, viewer).where('id', '=', id).executeTakeFirst()

/** The viewer's entries on a case, latest start first. */
export const caseTimeEntries = (db: Db, viewer: Viewer, caseId: string): Promise<TimeEntryRow[]> => visibleEntries(db, viewer).where('case_id', '=', caseId).orderBy('started_at', 'desc').orderBy('id').execute()

/** Billable, stopped entries not billed yet, latest first; only those of `caseIds` when given (an account's cases): what invoicing will bill. */
export function unbilledTimeEntries(db: Db, viewer: Viewer, caseIds?: readonly string[]): Promise<TimeEntryRow[]> {
  if (caseIds && !caseIds.length) return Promise.resolve([])
  let query = visibleEntries(db, viewer).where('billable', '=', true).where('billed', '=', false).where('ended_at', 'is not', null)
  if (caseIds) query = query.where('case_id', 'in', caseIds)
  return query.orderBy('started_at', 'desc').orderBy('id').execute()
}

export type Days = { from: string; to: string; timezone: string }
export type TimeEntryOnDay = TimeEntryRow & { day: string }

/** Entries that started on the days `from`..`to` (inclusive) in the organization's time zone, each with its day, in order. */
function entriesOnDays(db: Db, orgId: string, days: Days) {
  const day = sql<string>`((started_at AT TIME ZONE ${days.timezone})::date)::text`
  return db
    .selectFrom('time_entries')
    .selectAll()
    .select(day.as('day'))
    .where('org_id', '=', orgId)
    .where(sql<boolean>`${day}::date BETWEEN ${days.from}::date AND ${days.to}::date`)
    .orderBy('started_at')
    .orderBy('id')
}

/** One agent's entries of those days, running ones included: their timesheet. */
export const timesheetEntries = (db: Db, orgId: string, profileId: string, days: Days): Promise<TimeEntryOnDay[]> => entriesOnDays(db, orgId, days).where('profile_id', '=', profileId).execute()

export type TimeReportFilter = { profileId?: string; caseIds?: readonly string[]; billable?: boolean }

/** The finished entries of those days the viewer sees, narrowed by agent, cases and billable: what the time report sums and exports. */
export function reportEntries(db: Db, viewer: Viewer, days: Days, filter: TimeReportFilter): Promise<TimeEntryOnDay[]> {
  if (filter.caseIds && !filter.caseIds.length) return Promise.resolve([])
  let query = entriesOnDays(db, viewer.orgId, days).where('ended_at', 'is not', null)
  if (!viewer.isAdmin) query = viewer.profileId === null ? query.where(sql<boolean>`false`) : query.where('profile_id', '=', viewer.profileId)
  if (filter.profileId) query = query.where('profile_id', '=', filter.profileId)
  if (filter.caseIds) query = query.where('case_id', 'in', filter.caseIds)
  if (filter.billable !== undefined) query = query.where('billable', '=', filter.billable)
  return query.execute()
}

export type TimeSummary = { total_minutes: number; billable_minutes: number; last_entry_at: Date | null; by_profile: { profile_id: string; minutes: number }[] }

/** A case's stopped time, everyone's: totals, the latest start, and minutes per agent (most first). */
export async function caseTimeSummary(db: Db, orgId: string, caseId: string): Promise<TimeSummary> {
  const stopped = db.selectFrom('time_entries').where('org_id', '=', orgId).where('case_id', '=', caseId).where('ended_at', 'is not', null)
  const [totals, byProfile] = await Promise.all([
    stopped
      .select([sql<string>`COALESCE(sum(duration_minutes), 0)`.as('total'), sql<string>`COALESCE(sum(duration_minutes) FILTER (WHERE billable), 0)`.as('billable'), sql<Date | null>`max(started_at)`.as('last')])
      .executeTakeFirstOrThrow(),
    stopped.select(['profile_id', sql<string>`sum(duration_minutes)`.as('minutes')]).groupBy('profile_id').orderBy(sql`sum(duration_minutes)`, 'desc').orderBy('profile_id').execute(),
  ])
  return { total_minutes: Number(totals.total), billable_minutes: Number(totals.billable), last_entry_at: totals.last, by_profile: byProfile.map((row) => ({ profile_id: row.profile_id, minutes: Number(row.minutes) })) }
}

/** Timers of every organization running since before `startedBefore`: what the auto-stop process stops. */
export const staleTimers = (db: Db, startedBefore: Date): Promise<Pick<TimeEntryRow, 'id' | 'org_id' | 'profile_id'>[]> =>
  db.selectFrom('time_entries').select(['id', 'org_id', 'profile_id']).where('ended_at', 'is', null).where('started_at', '<', startedBefore).orderBy('started_at').execute()
