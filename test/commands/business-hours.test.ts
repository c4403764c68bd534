import t from 'tap'
import { businessCalendarDecider, defaultCalendarId } from '../../src/commands/business-hours/business-calendar.ts'
import type { BusinessCalendarEvent, CalendarChanges } from '../../src/commands/business-hours/business-calendar.ts'
import { DEFAULT_CALENDAR } from '../../src/commands/business-hours/week.ts'
import type { Week } from '../../src/commands/business-hours/week.ts'
import { NotFoundError, ValidationError } from '../../src/errors.ts'
import { spec } from '../helpers/given-when-then.ts'

const org = '00000000-0000-4000-8000-00000000000a'
const otherOrg = '00000000-0000-4000-8000-00000000000b'
const calendarId = defaultCalendarId(org)
const at = '2026-11-22T09:00:00.000Z'
const on = { calendarId, orgId: org, actorId: 'p1', at }
const created: BusinessCalendarEvent = { type: 'BusinessCalendarCreated', data: { calendar_id: calendarId, org_id: org, ...DEFAULT_CALENDAR, version: 0, created_by: 'p1', at } }
const weekWith = (changes: Partial<Week>): Week => ({ ...DEFAULT_CALENDAR.week, ...changes })
const split = [{ open: '08:00', close: '12:00' }, { open: '13:00', close: '17:00' }]
const christmas = { holiday_id: 'h1', date: '2026-12-25', name: 'Christmas', start_time: null, end_time: null }

t.test('business calendar: the first edit records the default (version 0), then the edit (version 1)', async (t) => {
  const calendar = spec(t, businessCalendarDecider)
  calendar.given([]).when({ type: 'ChangeBusinessCalendar', changes: { timezone: 'Europe/Berlin' }, ...on }).then([created, { type: 'BusinessCalendarChanged', data: { version: 1, timezone: 'Europe/Berlin', at } }])
  calendar.given([]).when({ type: 'ChangeBusinessCalendar', changes: { name: 'Default', timezone: 'UTC', spans: { monday: { open: '09:00', close: '17:00' } } }, ...on }).then([], 'editing the default into itself writes nothing')
  calendar.given([]).when({ type: 'AddBusinessHoliday', holiday: christmas, ...on }).then([created, { type: 'BusinessHolidayAdded', data: { version: 1, ...christmas, at } }])
  calendar.given([]).when({ type: 'ChangeBusinessCalendar', changes: { name: 'X' }, ...on, orgId: otherOrg }).thenRejects(NotFoundError)
  calendar.given([created]).when({ type: 'ChangeBusinessCalendar', changes: { name: 'X' }, ...on, calendarId: defaultCalendarId(otherOrg), orgId: otherOrg }).thenRejects(NotFoundError)
  calendar.given([]).when({ type: 'RemoveBusinessHoliday', holidayId: 'h1', ...on }).thenRejects(NotFoundError)
})

t.test('business calendar: hours through the flat fields and through shifts', async (t) => {
  const calendar = spec(t, businessCalendarDecider)
  const change = (changes: CalendarChanges) => ({ type: 'ChangeBusinessCalendar' as const, changes, ...on })
  const changed = (version: number, data: object): BusinessCalendarEvent => ({ type: 'BusinessCalendarChanged', data: { version, ...data, at } })
  calendar.given([created]).when(change({ spans: { monday: { open: '08:00', close: '18:00' } } })).then([changed(1, { week: weekWith({ monday: [{ open: '08:00', close: '18:00' }] }) })])
  calendar.given([created]).when(change({ spans: { saturday: { open: '10:00', close: '14:00' }, friday: { open: null, close: null } } })).then([changed(1, { week: weekWith({ saturday: [{ open: '10:00', close: '14:00' }], friday: [] }) })])
  calendar.given([created]).when(change({ spans: { monday: { close: '12:00' } } })).then([changed(1, { week: weekWith({ monday: [{ open: '09:00', close: '12:00' }] }) })], 'a field left out keeps its value')
  calendar.given([created]).when(change({ spans: { saturday: { close: '12:00' } } })).thenRejects(ValidationError, { errors: { saturday_open: ['Open and close must be both set or both null.'] } })
  calendar.given([created]).when(change({ spans: { monday: { open: '17:00', close: '09:00' } } })).thenRejects(ValidationError, { errors: { monday_close: ['Close time must be after open time.'] } })
  calendar.given([created]).when(change({ shifts: { monday: split } })).then([changed(1, { week: weekWith({ monday: split }) })], 'a split shift')
  const withSplit = [created, changed(1, { week: weekWith({ monday: split }) })]
  calendar.given(withSplit).when(change({ spans: { monday: { open: '08:00', close: '17:00' } } })).then([], 'sending back the span read keeps the split shifts')
  calendar.given(withSplit).when(change({ spans: { monday: { open: '07:00', close: '17:00' } } })).then([changed(2, { week: weekWith({ monday: [{ open: '07:00', close: '17:00' }] }) })], 'a new span is one shift')
  calendar.given([created]).when(change({ shifts: { monday: [{ open: '08:00', close: '12:00' }, { open: '11:00', close: '17:00' }] } })).thenRejects(ValidationError, { errors: { 'shifts.monday': ['Shifts must be in order and must not overlap.'] } })
  calendar.given([created]).when(change({ shifts: { sunday: [{ open: '00:00', close: '24:00' }] }, spans: { sunday: { open: null, close: null } } })).then([changed(1, { week: weekWith({ sunday: [{ open: '00:00', close: '24:00' }] }) })], "shifts win over the same day's flat fields")
})

t.test('business calendar: holidays, idempotent on the date; each edit is the next version', async (t) => {
  const calendar = spec(t, businessCalendarDecider)
  const added: BusinessCalendarEvent = { type: 'BusinessHolidayAdded', data: { version: 1, ...christmas, at } }
  const eve = { holiday_id: 'h2', date: '2026-12-24', name: 'Christmas Eve', start_time: '12:00', end_time: '24:00' }
  calendar.given([created, added]).when({ type: 'AddBusinessHoliday', holiday: { ...christmas, holiday_id: 'h9', name: 'Xmas' }, ...on }).then([], 'a date already on the calendar adds nothing')
  calendar.given([created, added]).when({ type: 'AddBusinessHoliday', holiday: eve, ...on }).then([{ type: 'BusinessHolidayAdded', data: { version: 2, ...eve, at } }], 'part of a day')
  calendar.given([created, added]).when({ type: 'AddBusinessHoliday', holiday: { ...eve, end_time: null }, ...on }).thenRejects(ValidationError)
  calendar.given([created, added]).when({ type: 'AddBusinessHoliday', holiday: { ...eve, start_time: '13:00', end_time: '12:00' }, ...on }).thenRejects(ValidationError)
  calendar.given([created, added]).when({ type: 'RemoveBusinessHoliday', holidayId: 'h1', ...on }).then([{ type: 'BusinessHolidayRemoved', data: { version: 2, holiday_id: 'h1', at } }])
  calendar.given([created, added, { type: 'BusinessHolidayRemoved', data: { version: 2, holiday_id: 'h1', at } }]).when({ type: 'RemoveBusinessHoliday', holidayId: 'h1', ...on }).thenRejects(NotFoundError)
  calendar.given([created, added]).when({ type: 'ChangeBusinessCalendar', changes: { name: 'Support' }, ...on }).then([{ type: 'BusinessCalendarChanged', data: { version: 2, name: 'Support', at } }])
})
