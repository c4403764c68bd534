import { z } from 'zod'
import type { TimeEntryEvent } from '../commands/time-entry/time-entry.ts'
import { At, By, Decimal, Id, at, eventsOf, noPersonalData } from '../events/event-schemas.ts'
import { createTimerAutoStop } from '../processes/timer-auto-stop.ts'
import { timeEntriesProjector } from '../projections/time-entry/time-entries.ts'
import type { ModuleManifest } from './manifest.ts'

// timesheet-<profile id>: every entry of one agent.
const fields = { description: z.string(), billable: z.boolean(), hourly_rate: Decimal.nullable(), currency: z.string() }
const owner = { time_entry_id: Id, org_id: Id, case_id: Id, profile_id: Id }
const Minutes = z.number().int().min(0)

/** Time tracking: agents' timers and hand-logged time on cases, in whole minutes; the billable time invoicing will bill. */
export const timeEntryModule: ModuleManifest = {
  name: 'time-entry',
  // Time on a case is the business's record of work, as the case itself: its description is about the work.
  events: noPersonalData(eventsOf<TimeEntryEvent>()({
    TimerStarted: { stream: 'timesheet', description: "An agent started a timer on a case (`started_at`, when the request was made): the agent's one running entry until stopped.", data: z.strictObject({ ...owner, ...fields, started_at: At, by: By, ...at }) },
    TimeLogged: { stream: 'timesheet', description: 'An agent logged finished time on a case by hand: its start, end and whole minutes.', data: z.strictObject({ ...owner, ...fields, started_at: At, ended_at: At, duration_minutes: Minutes, by: By, ...at }) },
    TimerStopped: { stream: 'timesheet', description: 'A running timer was stopped (by its agent or an admin, or `auto_stopped` by the service after 12 hours, as the original): its end and whole minutes.', data: z.strictObject({ time_entry_id: Id, ended_at: At, duration_minutes: Minutes, auto_stopped: z.literal(true).optional(), by: By, ...at }) },
    TimeEntryUpdated: { stream: 'timesheet', description: "Fields of an entry changed: only those, with their new values (setting `ended_at` on a running timer stops it), and the entry's minutes after.", data: z.strictObject({ time_entry_id: Id, changes: z.strictObject({ started_at: At.optional(), ended_at: At.optional(), description: fields.description.optional(), billable: fields.billable.optional(), hourly_rate: fields.hourly_rate.optional(), currency: fields.currency.optional() }), duration_minutes: Minutes, by: By, ...at }) },
    TimeEntryBilled: { stream: 'timesheet', description: 'An entry was billed by the draft invoice `invoice_id` (POST /api/invoices/from-time-entries/), whose InvoiceCreated is in the same append: it is never billed again, and no longer changes.', data: z.strictObject({ time_entry_id: Id, invoice_id: Id, by: By, ...at }) },
    TimeEntryDeleted: { stream: 'timesheet', description: 'An entry was deleted (by its agent or an admin); a running one stops with it.', data: z.strictObject({ time_entry_id: Id, by: By, ...at }) },
  })),
  routes: async (deps) => {
    const [{ timeEntryRoutes }, { timeReportRoutes }] = await Promise.all([import('../http/time-entries/time-entries.ts'), import('../http/time-entries/time-report.ts')])
    return [timeEntryRoutes(deps), timeReportRoutes(deps)]
  },
  projectors: [timeEntriesProjector],
  processes: [(deps) => createTimerAutoStop({ ...deps, intervalMs: 30 * 60_000 })],
  idKinds: [[/^\/api\/time-entries\/\{id\}/, 'timeEntry']],
}
