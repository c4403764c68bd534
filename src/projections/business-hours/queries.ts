import { defaultCalendarId } from '../../commands/business-hours/business-calendar.ts'
import type { BusinessCalendar } from '../../commands/business-hours/calendar.ts'
import type { CalendarOf } from '../../commands/business-hours/sla-clock.ts'
import { DEFAULT_CALENDAR, DefinitionData, WeekData, calendarOf } from '../../commands/business-hours/week.ts'
import type { Week } from '../../commands/business-hours/week.ts'
import type { Db } from '../../db/database.ts'
import type { BusinessHolidayRow } from './tables.ts'

export type { BusinessHolidayRow } from './tables.ts'

/** An organization's business calendar as it stands: the default (version 0, never edited, no dates) until an admin first edits it. */
export type BusinessCalendarView = { id: string; org_id: string; name: string; timezone: string; week: Week; version: number; holidays: BusinessHolidayRow[] }

const defaultView = (orgId: string): BusinessCalendarView => ({ id: defaultCalendarId(orgId), org_id: orgId, ...DEFAULT_CALENDAR, version: 0, holidays: [] })

/** The organization's (one, default) calendar with its holidays by date. */
export async function businessCalendarOf(db: Db, orgId: string): Promise<BusinessCalendarView> {
  const row = await db.selectFrom('business_calendars').select(['id', 'org_id', 'name', 'timezone', 'week', 'version']).where('org_id', '=', orgId).executeTakeFirst()
  if (!row) return defaultView(orgId)
  const holidays = await db.selectFrom('business_holidays').selectAll().where('calendar_id', '=', row.id).orderBy('date').execute()
  return { ...row, week: WeekData.parse(row.week), holidays }
}

/** A holiday of the organization's calendar `calendarId`, or undefined: another organization's reads as missing. */
export function businessHolidayOf(db: Db, orgId: string, calendarId: string, holidayId: string): Promise<BusinessHolidayRow | undefined> {
  return db.selectFrom('business_holidays').selectAll().where('org_id', '=', orgId).where('calendar_id', '=', calendarId).where('id', '=', holidayId).executeTakeFirst()
}

/** The calendar an SLA instance started now measures in: the organization's current version. */
export async function currentBusinessCalendar(db: Db, orgId: string): Promise<{ calendarId: string; version: number; calendar: BusinessCalendar }> {
  const view = await businessCalendarOf(db, orgId)
  const holidays = view.holidays.map(({ date, start_time, end_time }) => ({ date, start_time, end_time }))
  return { calendarId: view.id, version: view.version, calendar: calendarOf({ timezone: view.timezone, week: view.week, holidays }) }
}

/**
 * The calendars of the organization's versions, for the SLA clock (`slaStatus(events, calendars, asOf)`).
 * Version 0 of a calendar never edited is the default; a version the read model has not applied
 * yet reads as the latest one before it.
 */
export async function businessCalendarVersions(db: Db, orgId: string): Promise<CalendarOf> {
  const rows = await db.selectFrom('business_calendar_versions').select(['version', 'definition']).where('org_id', '=', orgId).orderBy('version').execute()
  // Latest first, so the first at or below a version is the one in force.
  const versions = rows.map((row) => ({ version: row.version, calendar: calendarOf(DefinitionData.parse(row.definition)) })).reverse()
  const fallback = calendarOf({ timezone: DEFAULT_CALENDAR.timezone, week: DEFAULT_CALENDAR.week, holidays: [] })
  return (version) => versions.find((v) => v.version <= version)?.calendar ?? fallback
}
