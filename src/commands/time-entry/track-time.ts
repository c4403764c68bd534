import { randomUUID } from 'node:crypto'
import type { Deps } from '../../deps.ts'
import { ForbiddenError, NotFoundError, orNotFound } from '../../errors.ts'
import type { Position } from '../../eventstore/event-store.ts'
import { organizationById } from '../../identity/organizations.ts'
import { caseOf } from '../../projections/case/queries.ts'
import { timeEntryOf } from '../../projections/time-entry/time-entries.ts'
import { mayAccess } from '../../visibility/policy.ts'
import type { Caller } from '../caller.ts'
import { commandSession } from '../command-session.ts'
import { timesheetDecider, timesheetStream } from './time-entry.ts'
import type { TimeEntryChanges, TimeEntryCommand } from './time-entry.ts'

type TimeDeps = Pick<Deps, 'db' | 'store' | 'clock'>
export type NewTimeEntry = { description: string; billable: boolean; hourly_rate: string | null; currency?: string }

async function runOn(deps: TimeDeps, caller: Caller, profileId: string, command: TimeEntryCommand): Promise<Position | null> {
  const session = commandSession(deps.store, caller)
  await session.run(timesheetDecider, timesheetStream(profileId), command)
  return session.position()
}

/** The new entry's owner (the calling member) and case: a case of the organization they may see, else 404 as a missing one. */
async function ownerOn(deps: TimeDeps, caller: Caller, caseId: string, fields: NewTimeEntry) {
  if (caller.profileId === null) throw new ForbiddenError('Time is logged by a member; the organization API key has no timesheet.')
  const found = await caseOf(deps.db, caller.orgId, caseId)
  if (!found || !mayAccess('Case', { createdBy: found.created_by, assignedTo: found.assigned_to, watchers: found.watchers }, caller)) throw new NotFoundError()
  // Not given, the entry is in the organization's currency.
  const currency = fields.currency ?? (await organizationById(deps.db, caller.orgId)).default_currency
  return { entry: { time_entry_id: randomUUID(), org_id: caller.orgId, case_id: caseId, profile_id: caller.profileId }, fields: { ...fields, currency } }
}

/** Starts the caller's timer on a case; 409 while another of theirs runs. */
export async function startTimer(deps: TimeDeps, caller: Caller, caseId: string, input: NewTimeEntry): Promise<{ id: string; position: Position | null }> {
  const { entry, fields } = await ownerOn(deps, caller, caseId, input)
  const position = await runOn(deps, caller, entry.profile_id, { type: 'StartTimer', entry, fields, by: caller.profileId, at: deps.clock().toISOString() })
  return { id: entry.time_entry_id, position }
}

/** Logs finished time on a case by hand: its start and end. */
export async function logTime(deps: TimeDeps, caller: Caller, caseId: string, input: NewTimeEntry & { started_at: string; ended_at: string }): Promise<{ id: string; position: Position | null }> {
  const { started_at, ended_at, ...rest } = input
  const { entry, fields } = await ownerOn(deps, caller, caseId, rest)
  const position = await runOn(deps, caller, entry.profile_id, { type: 'LogTime', entry, fields, startedAt: started_at, endedAt: ended_at, by: caller.profileId, at: deps.clock().toISOString() })
  return { id: entry.time_entry_id, position }
}

/** A command on an entry the caller sees (their own; any of the organization's for an admin), on its agent's timesheet. */
async function onEntry(deps: TimeDeps, caller: Caller, id: string, command: (base: { orgId: string; entryId: string; by: string | null; at: string }) => TimeEntryCommand): Promise<Position | null> {
  const row = await orNotFound(timeEntryOf(deps.db, caller, id))
  return runOn(deps, caller, row.profile_id, command({ orgId: caller.orgId, entryId: id, by: caller.profileId, at: deps.clock().toISOString() }))
}

export const stopTimer = (deps: TimeDeps, caller: Caller, id: string) => onEntry(deps, caller, id, (base) => ({ type: 'StopTimer', ...base }))
export const changeTimeEntry = (deps: TimeDeps, caller: Caller, id: string, changes: TimeEntryChanges) => onEntry(deps, caller, id, (base) => ({ type: 'ChangeTimeEntry', ...base, changes }))
export const deleteTimeEntry = (deps: TimeDeps, caller: Caller, id: string) => onEntry(deps, caller, id, (base) => ({ type: 'DeleteTimeEntry', ...base }))
