import { sql } from 'kysely'
import { businessCalendarStreams } from '../../commands/business-hours/business-calendar.ts'
import type { BusinessCalendarEvent } from '../../commands/business-hours/business-calendar.ts'
import type { CalendarDefinition, Week } from '../../commands/business-hours/week.ts'
import type { Db } from '../../db/database.ts'
import { domainEventOf } from '../../events/versions.ts'
import type { Projector } from '../kernel/projector.ts'

// jsonb columns take the JSON text (PostgreSQL parses it); kysely's row type keeps the parsed shape.
const jsonb = <T>(value: T): T => JSON.stringify(value) as unknown as T

/**
 * The business calendars read model: each organization's calendar and holidays as they stand, and
 * a snapshot of every version (zone, shifts, holidays) that SLA instances measure in. Events are
 * few (an admin's edits), so each is applied on its own.
 */
export const businessCalendarsProjector: Projector = {
  name: 'business_calendars',
  version: 1,
  eventTypes: ['BusinessCalendarCreated', 'BusinessCalendarChanged', 'BusinessHolidayAdded', 'BusinessHolidayRemoved'],
  tables: ['business_calendars', 'business_holidays', 'business_calendar_versions'],
  async createTables(db) {
    await db.schema
      .createTable('business_calendars')
      .addColumn('id', 'uuid', (c) => c.primaryKey())
      .addColumn('org_id', 'uuid', (c) => c.notNull().unique())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('timezone', 'text', (c) => c.notNull())
      .addColumn('week', 'jsonb', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
      .execute()
    await db.schema
      .createTable('business_holidays')
      .addColumn('id', 'uuid', (c) => c.primaryKey())
      .addColumn('calendar_id', 'uuid', (c) => c.notNull())
      .addColumn('org_id', 'uuid', (c) => c.notNull())
      .addColumn('date', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('start_time', 'text')
      .addColumn('end_time', 'text')
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .execute()
    await sql`CREATE INDEX business_holidays_calendar ON business_holidays (calendar_id, date)`.execute(db)
    await db.schema
      .createTable('business_calendar_versions')
      .addColumn('calendar_id', 'uuid', (c) => c.notNull())
      .addColumn('org_id', 'uuid', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('definition', 'jsonb', (c) => c.notNull())
      .addColumn('at', 'timestamptz', (c) => c.notNull())
      .addPrimaryKeyConstraint('business_calendar_versions_pk', ['calendar_id', 'version'])
      .execute()
  },
  // Each statement sets values (or inserts once), and a version's snapshot is written once: applying an event twice changes nothing.
  async apply(db, recorded) {
    const event = domainEventOf<BusinessCalendarEvent>(recorded)
    const id = businessCalendarStreams.idOf(recorded.streamName)
    const at = new Date(event.data.at)
    switch (event.type) {
      case 'BusinessCalendarCreated': {
        const { org_id, name, timezone, week, version } = event.data
        await db.insertInto('business_calendars').values({ id, org_id, name, timezone, week: jsonb(week), version, created_at: at, updated_at: at }).onConflict((oc) => oc.column('id').doNothing()).execute()
        break
      }
      case 'BusinessCalendarChanged': {
        const { version, name, timezone, week } = event.data
        await db
          .updateTable('business_calendars')
          .set({ version, updated_at: at, ...(name !== undefined && { name }), ...(timezone !== undefined && { timezone }), ...(week && { week: jsonb(week) }) })
          .where('id', '=', id)
          .execute()
        break
      }
      case 'BusinessHolidayAdded': {
        const { version, holiday_id, date, name, start_time, end_time } = event.data
        const calendar = await db.updateTable('business_calendars').set({ version, updated_at: at }).where('id', '=', id).returning('org_id').executeTakeFirst()
        if (calendar) await db.insertInto('business_holidays').values({ id: holiday_id, calendar_id: id, org_id: calendar.org_id, date, name, start_time, end_time, created_at: at }).onConflict((oc) => oc.column('id').doNothing()).execute()
        break
      }
      case 'BusinessHolidayRemoved':
        await db.updateTable('business_calendars').set({ version: event.data.version, updated_at: at }).where('id', '=', id).execute()
        await db.deleteFrom('business_holidays').where('id', '=', event.data.holiday_id).execute()
        break
    }
    await snapshot(db, id, event.data.version, at)
  },
}

/** The calendar as it stands after the event of `version`, kept as that version (once: a version never changes). */
async function snapshot(db: Db, calendarId: string, version: number, at: Date): Promise<void> {
  const calendar = await db.selectFrom('business_calendars').select(['org_id', 'timezone', 'week']).where('id', '=', calendarId).executeTakeFirst()
  if (!calendar) return
  const holidays = await db.selectFrom('business_holidays').select(['date', 'start_time', 'end_time']).where('calendar_id', '=', calendarId).orderBy('date').execute()
  const definition: CalendarDefinition = { timezone: calendar.timezone, week: calendar.week as Week, holidays }
  await db
    .insertInto('business_calendar_versions')
    .values({ calendar_id: calendarId, org_id: calendar.org_id, version, definition: jsonb(definition), at })
    .onConflict((oc) => oc.columns(['calendar_id', 'version']).doNothing())
    .execute()
}
