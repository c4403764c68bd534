import type { Deps } from '../../deps.ts'
import type { Position } from '../../eventstore/event-store.ts'
import { businessCalendarVersions } from '../../projections/business-hours/queries.ts'
import { escalationCandidates } from '../../projections/case/queries.ts'
import type { CalendarOf } from '../business-hours/sla-clock.ts'
import { commandSession } from '../command-session.ts'
import { caseDecider, caseStream } from './case.ts'
import { ESCALATION_GAP_MS } from './escalation.ts'

/** How many cases one run asks about at most; the rest wait for the next run. */
const BATCH = 500

/**
 * Escalates the open cases breached now, as the system (no actor): the read model names the
 * candidates, and each case's decider judges it again on its own events and the clock (a read model
 * behind, or a second process, decides nothing twice). Answers how many were escalated and the last
 * position appended (what a reader waits for).
 */
export async function escalateBreachedCases(deps: Pick<Deps, 'db' | 'store' | 'clock'>): Promise<{ escalated: number; position: Position | null }> {
  const now = deps.clock()
  const candidates = await escalationCandidates(deps.db, now, ESCALATION_GAP_MS, BATCH)
  const calendars = new Map<string, CalendarOf>()
  let escalated = 0
  let position: Position | null = null
  for (const { id, org_id: orgId } of candidates) {
    const calendarsOfOrg = calendars.get(orgId) ?? (await businessCalendarVersions(deps.db, orgId))
    calendars.set(orgId, calendarsOfOrg)
    const session = commandSession(deps.store, { orgId, profileId: null, isAdmin: false })
    const { events, position: appended } = await session.run(caseDecider, caseStream(id), { type: 'EscalateCase', orgId, calendars: calendarsOfOrg, at: now.toISOString() })
    escalated += events.length
    if (appended) position = appended
  }
  return { escalated, position }
}
