import type { Deps } from '../../deps.ts'
import type { Position } from '../../eventstore/event-store.ts'
import { activeProfileIds } from '../../identity/users.ts'
import { businessCalendarVersions } from '../../projections/business-hours/queries.ts'
import { escalationCandidates } from '../../projections/case/queries.ts'
import { escalationPoliciesOf } from '../../projections/case-escalation/queries.ts'
import { memberIdsOf } from '../../projections/team/teams.ts'
import type { EscalationAction } from '../case-escalation/escalation-policy.ts'
import { commandSession } from '../command-session.ts'
import { caseDecider, caseStream } from './case.ts'
import { ESCALATION_GAP_MS } from './escalation.ts'
import type { EscalateCase, PolicyFacts } from './escalation.ts'
import type { CasePriority } from './fields.ts'

/** How many cases one run asks about at most; the rest wait for the next run. */
const BATCH = 500

// A policy's instance without a target does nothing (the original skips it).
const rule = (action: EscalationAction, target: string | null) => (target ? { action, target } : null)

type OrgFacts = Pick<EscalateCase, 'calendars' | 'policies' | 'active'>

/** What an organization's escalations are decided on: its calendars, its active policies by priority, and which people they name are active members. */
async function orgFactsOf(db: Deps['db'], orgId: string): Promise<OrgFacts> {
  const [calendars, rows] = await Promise.all([businessCalendarVersions(db, orgId), escalationPoliciesOf(db, orgId)])
  const live = rows.filter((row) => row.is_active)
  const teams = await memberIdsOf(db, [...new Set(live.flatMap((row) => (row.notify_team ? [row.notify_team] : [])))])
  const policies: Partial<Record<CasePriority, PolicyFacts>> = {}
  for (const row of live) {
    policies[row.priority as CasePriority] = { first_response: rule(row.first_response_action, row.first_response_target), resolution: rule(row.resolution_action, row.resolution_target), team: row.notify_team ? (teams.get(row.notify_team) ?? []) : [] }
  }
  const named = Object.values(policies).flatMap((policy) => [policy.first_response?.target, policy.resolution?.target, ...policy.team].filter((id): id is string => !!id))
  return { calendars, policies, active: [...(await activeProfileIds(db, orgId, [...new Set(named)]))] }
}

/**
 * Escalates the open cases breached now, as the system (no actor): the read model names the
 * candidates, and each case's decider judges it again on its own events and the clock (a read model
 * behind, or a second process, decides nothing twice), acting on its priority's policy as the
 * policies read model holds it at this run. Answers how many were escalated and the last
 * position appended (what a reader waits for).
 */
export async function escalateBreachedCases(deps: Pick<Deps, 'db' | 'store' | 'clock'>): Promise<{ escalated: number; position: Position | null }> {
  const now = deps.clock()
  const candidates = await escalationCandidates(deps.db, now, ESCALATION_GAP_MS, BATCH)
  const facts = new Map<string, OrgFacts>()
  let escalated = 0
  let position: Position | null = null
  for (const { id, org_id: orgId } of candidates) {
    const ofOrg = facts.get(orgId) ?? (await orgFactsOf(deps.db, orgId))
    facts.set(orgId, ofOrg)
    const session = commandSession(deps.store, { orgId, profileId: null, isAdmin: false })
    const { events, position: appended } = await session.run(caseDecider, caseStream(id), { type: 'EscalateCase', orgId, ...ofOrg, at: now.toISOString() })
    escalated += events.filter((event) => event.type === 'CaseEscalated').length
    if (appended) position = appended
  }
  return { escalated, position }
}
