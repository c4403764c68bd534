import type { CalendarDefinition, Week } from '../../commands/business-hours/week.ts'

/** The organizations' calendars as they stand now (one row each, from their first edit; before it, the default of version 0). */
export type BusinessCalendarRow = { id: string; org_id: string; name: string; timezone: string; week: Week; version: number; created_at: Date; updated_at: Date }

/** Their holidays as they stand now. `date` is the ISO local date (text); times are "HH:MM", both null for a whole day. */
export type BusinessHolidayRow = { id: string; calendar_id: string; org_id: string; date: string; name: string; start_time: string | null; end_time: string | null; created_at: Date }

/** Every version of every calendar (zone, shifts and holidays as they were): what SLA instances measure in. */
export type BusinessCalendarVersionRow = { calendar_id: string; org_id: string; version: number; definition: CalendarDefinition; at: Date }

export type BusinessHoursTables = { business_calendars: BusinessCalendarRow; business_holidays: BusinessHolidayRow; business_calendar_versions: BusinessCalendarVersionRow }

// This module's tables join the one Database type (db/database.ts).
declare module '../../db/database.ts' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging: the tables are the members
  interface Database extends BusinessHoursTables {}
}
