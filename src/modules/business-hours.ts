import { z } from 'zod'
import type { BusinessCalendarEvent } from '../commands/business-hours/business-calendar.ts'
import { HolidaySpan, WeekData } from '../commands/business-hours/week.ts'
import { By, Id, at, eventsOf, noPersonalData } from '../events/event-schemas.ts'
import { businessCalendarsProjector } from '../projections/business-hours/business-calendars.ts'
import type { ModuleManifest } from './manifest.ts'

const version = z.number().int().min(0).describe('The calendar version this event makes (0: the default it started from)')

/** Business hours: each organization's calendar (shifts, time zone, holidays) that SLA targets are measured in, versioned. */
export const businessHoursModule: ModuleManifest = {
  name: 'business-hours',
  // business_calendar-<id>, the id derived from the organization's
  events: noPersonalData(eventsOf<BusinessCalendarEvent>()({
    BusinessCalendarCreated: {
      stream: 'business_calendar',
      description: "An organization's calendar was first edited: this records the default it started from (version 0), the edit follows in the same append.",
      data: z.strictObject({ calendar_id: Id, org_id: Id, name: z.string(), timezone: z.string(), week: WeekData, version, created_by: By, ...at }),
    },
    BusinessCalendarChanged: {
      stream: 'business_calendar',
      description: "A calendar's name, time zone or weekly shifts changed (only what changed; the week whole): a new version.",
      data: z.strictObject({ version, name: z.string().optional(), timezone: z.string().optional(), week: WeekData.optional(), ...at }),
    },
    BusinessHolidayAdded: {
      stream: 'business_calendar',
      description: 'A holiday was added to a calendar: a whole local day, or part of it (start and end time): a new version.',
      data: z.strictObject({ version, holiday_id: Id, name: z.string(), ...HolidaySpan, ...at }),
    },
    BusinessHolidayRemoved: { stream: 'business_calendar', description: 'A holiday was removed from a calendar: a new version.', data: z.strictObject({ version, holiday_id: Id, ...at }) },
  })),
  routes: async (deps) => {
    const { businessHoursRoutes } = await import('../http/business-hours/business-hours.ts')
    return [businessHoursRoutes(deps)]
  },
  projectors: [businessCalendarsProjector],
  idKinds: [[/^\/api\/business-hours\/calendar\/\{id\}/, 'businessCalendar']],
  idParams: { hid: 'businessHoliday' },
}
