import t from 'tap'
import { TimerRunningError, minutesBetween, timesheetDecider } from '../../src/commands/time-entry/time-entry.ts'
import type { TimeEntryEvent } from '../../src/commands/time-entry/time-entry.ts'
import { NotFoundError, ValidationError } from '../../src/errors.ts'
import { spec } from '../helpers/given-when-then.ts'

const org = '00000000-0000-4000-8000-00000000000a'
const otherOrg = '00000000-0000-4000-8000-00000000000b'
const at = '2026-11-22T09:00:00.000Z'
const later = '2026-11-22T10:29:59.999Z'
const owner = (id: string, caseId = 'c1') => ({ time_entry_id: id, org_id: org, case_id: caseId, profile_id: 'ann' })
const fields = { description: '', billable: true, hourly_rate: '80.00', currency: 'USD' }
const started: TimeEntryEvent = { type: 'TimerStarted', data: { ...owner('e1'), ...fields, started_at: at, by: 'ann', at } }
const stopped: TimeEntryEvent = { type: 'TimerStopped', data: { time_entry_id: 'e1', ended_at: later, duration_minutes: 89, by: 'ann', at: later } }

t.test('timesheet decider: one running timer per agent', async (t) => {
  const sheet = spec(t, timesheetDecider)
  sheet.given([]).when({ type: 'StartTimer', entry: owner('e1'), fields, by: 'ann', at }).then([started])
  sheet.given([started]).when({ type: 'StartTimer', entry: owner('e1'), fields, by: 'ann', at }).then([], 'starting the same entry again is a no-op')
  sheet.given([started]).when({ type: 'StartTimer', entry: owner('e2', 'c2'), fields, by: 'ann', at }).thenRejects(TimerRunningError, { statusCode: 409, errors: { running_entry_id: 'e1', running_case_id: 'c1' } })
  sheet.given([started, stopped]).when({ type: 'StartTimer', entry: owner('e2', 'c2'), fields, by: 'ann', at: later }).then([{ type: 'TimerStarted', data: { ...owner('e2', 'c2'), ...fields, started_at: later, by: 'ann', at: later } }], 'after a stop, another may start')
  sheet.given([started, { type: 'TimeEntryDeleted', data: { time_entry_id: 'e1', by: 'ann', at } }]).when({ type: 'StartTimer', entry: owner('e2'), fields, by: 'ann', at }).then([{ type: 'TimerStarted', data: { ...owner('e2'), ...fields, started_at: at, by: 'ann', at } }], 'deleting the running entry stops it')
  const endedByEdit: TimeEntryEvent = { type: 'TimeEntryUpdated', data: { time_entry_id: 'e1', changes: { ended_at: later }, duration_minutes: 89, by: 'admin', at } }
  sheet.given([started]).when({ type: 'ChangeTimeEntry', orgId: org, entryId: 'e1', changes: { ended_at: later }, by: 'admin', at }).then([endedByEdit], 'an end set on a running timer stops it')
  sheet.given([started, endedByEdit]).when({ type: 'StartTimer', entry: owner('e2'), fields, by: 'ann', at }).then([{ type: 'TimerStarted', data: { ...owner('e2'), ...fields, started_at: at, by: 'ann', at } }])
})

t.test('timesheet decider: stop, log, change, delete', async (t) => {
  const sheet = spec(t, timesheetDecider)
  sheet.given([started]).when({ type: 'StopTimer', orgId: org, entryId: 'e1', by: 'ann', at: later }).then([stopped], 'whole minutes: 89:59.999 is 89')
  sheet.given([started, stopped]).when({ type: 'StopTimer', orgId: org, entryId: 'e1', by: 'ann', at: later }).thenRejects(ValidationError, { errors: 'Timer is already stopped.' })
  sheet.given([started]).when({ type: 'StopTimer', orgId: otherOrg, entryId: 'e1', by: 'ann', at: later }).thenRejects(NotFoundError)
  sheet.given([started]).when({ type: 'StopTimer', orgId: org, entryId: 'e9', by: 'ann', at: later }).thenRejects(NotFoundError)
  sheet.given([started]).when({ type: 'StopTimer', orgId: org, entryId: 'e1', by: 'ann', at: '2026-11-22T08:00:00.000Z' }).then([{ type: 'TimerStopped', data: { time_entry_id: 'e1', ended_at: at, duration_minutes: 0, by: 'ann', at: '2026-11-22T08:00:00.000Z' } }], 'a clock behind the start stops it where it began')

  const logged: TimeEntryEvent = { type: 'TimeLogged', data: { ...owner('e2'), ...fields, description: 'Call', started_at: at, ended_at: '2026-11-22T09:45:00.000Z', duration_minutes: 45, by: 'ann', at } }
  sheet.given([started]).when({ type: 'LogTime', entry: owner('e2'), fields: { ...fields, description: 'Call' }, startedAt: at, endedAt: '2026-11-22T09:45:00.000Z', by: 'ann', at }).then([logged], 'logging by hand needs no stopped timer')
  sheet.given([]).when({ type: 'LogTime', entry: owner('e2'), fields, startedAt: later, endedAt: at, by: 'ann', at }).thenRejects(ValidationError, { errors: { ended_at: [/on or after/] } })
  sheet.given([logged]).when({ type: 'ChangeTimeEntry', orgId: org, entryId: 'e2', changes: { started_at: '2026-11-22T09:15:00+00:00', billable: true }, by: 'ann', at }).then([{ type: 'TimeEntryUpdated', data: { time_entry_id: 'e2', changes: { started_at: '2026-11-22T09:15:00+00:00' }, duration_minutes: 30, by: 'ann', at } }], 'only what changed; the minutes follow')
  sheet.given([logged]).when({ type: 'ChangeTimeEntry', orgId: org, entryId: 'e2', changes: { ended_at: '2026-11-22T09:45:00Z', description: 'Call' }, by: 'ann', at }).then([], 'the same instant written otherwise is no change')
  sheet.given([logged]).when({ type: 'ChangeTimeEntry', orgId: org, entryId: 'e2', changes: { ended_at: '2026-11-22T08:00:00Z' }, by: 'ann', at }).thenRejects(ValidationError)
  sheet.given([logged]).when({ type: 'DeleteTimeEntry', orgId: org, entryId: 'e2', by: 'ann', at }).then([{ type: 'TimeEntryDeleted', data: { time_entry_id: 'e2', by: 'ann', at } }])
  sheet.given([logged, { type: 'TimeEntryDeleted', data: { time_entry_id: 'e2', by: 'ann', at } }]).when({ type: 'DeleteTimeEntry', orgId: org, entryId: 'e2', by: 'ann', at }).then([], 'deleting twice is a no-op')
  sheet.given([logged, { type: 'TimeEntryDeleted', data: { time_entry_id: 'e2', by: 'ann', at } }]).when({ type: 'StopTimer', orgId: org, entryId: 'e2', by: 'ann', at }).thenRejects(NotFoundError)
  sheet.given([started]).when({ type: 'StopTimer', orgId: org, entryId: 'e1', by: null, at: later, auto: true }).then([{ type: 'TimerStopped', data: { time_entry_id: 'e1', ended_at: later, duration_minutes: 89, auto_stopped: true, by: null, at: later } }], 'the auto-stop marks what it stops')
  sheet.given([started, stopped]).when({ type: 'StopTimer', orgId: org, entryId: 'e1', by: null, at: later, auto: true }).then([], 'the auto-stop leaves a stopped timer alone')
  sheet.given([]).when({ type: 'StopTimer', orgId: org, entryId: 'e1', by: null, at: later, auto: true }).then([], 'and a missing one')
  t.equal(minutesBetween(at, '2026-11-22T09:00:59.999Z'), 0)
  t.equal(minutesBetween(at, '2026-11-23T09:00:00.000Z'), 1440)
})
