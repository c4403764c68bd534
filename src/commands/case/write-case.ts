import { randomUUID } from 'node:crypto'
import type { Deps } from '../../deps.ts'
import { ForbiddenError, orNotFound } from '../../errors.ts'
import type { Position } from '../../eventstore/event-store.ts'
import { accountOf } from '../../projections/account/accounts.ts'
import { currentBusinessCalendar } from '../../projections/business-hours/queries.ts'
import { approvalGateOf } from '../../projections/case-approval/queries.ts'
import { caseOf, parentFacts } from '../../projections/case/queries.ts'
import type { CaseRecord } from '../../projections/case/queries.ts'
import { definitionsOf } from '../../projections/custom-field/custom-fields.ts'
import { checkRelations } from '../../projections/record/relations.ts'
import type { Caller } from '../caller.ts'
import { actorOfCaller } from '../caller.ts'
import { commandSession } from '../command-session.ts'
import type { CommandSession } from '../command-session.ts'
import { routeCase } from '../case-routing/route-case.ts'
import type { RoutingContext } from '../case-routing/route-case.ts'
import { caseDecider, caseStream, mayReadCase } from './case.ts'
import type { CaseCommand, CaseInput } from './case.ts'
import type { ParentFacts } from './parent.ts'

type CaseDeps = Pick<Deps, 'db' | 'store' | 'clock'>
type Written = { position: Position | null }

/** A live case of the caller's organization (404 otherwise) that the caller may read: admin, creator, assignee or watcher (403 otherwise). */
export async function visibleCase(db: Deps['db'], caller: Caller, id: string): Promise<CaseRecord> {
  const row = await orNotFound(caseOf(db, caller.orgId, id))
  if (!mayReadCase({ createdBy: row.created_by, fields: row, watchers: row.watchers }, actorOfCaller(caller))) throw new ForbiddenError('Only an admin, the creator, an assignee or a watcher may see this case')
  return row
}

/**
 * 400 naming the account or relation that is not a live record of the caller's organization (an
 * account the caller may not see answers the same); what the case already holds (`current`) may stay.
 */
async function checkLinks(db: Deps['db'], caller: Caller, input: CaseInput, current?: CaseRecord): Promise<void> {
  const errors: Record<string, string[]> = {}
  if (input.account && input.account !== current?.account && !(await accountOf(db, caller.orgId, input.account))) errors.account = ['No such account.']
  await checkRelations(db, caller.orgId, input, errors, current)
}

/** The organization's custom field definitions for cases, inactive ones included: what the decider checks values against. */
export const caseDefinitions = (db: Deps['db'], orgId: string) => definitionsOf(db, orgId, 'cases', { activeOnly: false })

/**
 * The facts of a new parent the input names (none when it names none or the one it has); none too
 * when the caller may not see it, so a case hidden from them answers as a missing one.
 */
async function newParent(db: Deps['db'], caller: Caller, parent: string | null | undefined, caseId: string | undefined, current?: string | null): Promise<ParentFacts | undefined> {
  if (!parent || parent === current) return undefined
  const row = await caseOf(db, caller.orgId, parent)
  if (!row || !mayReadCase({ createdBy: row.created_by, fields: row, watchers: row.watchers }, actorOfCaller(caller))) return undefined
  return parentFacts(db, caller.orgId, parent, caseId)
}

/** The approval gate's facts when the input closes the case (case-approval/gate.ts), none otherwise. */
export const approvalGateIfClosing = (db: Deps['db'], orgId: string, caseId: string, input: CaseInput) => (input.status === 'Closed' ? approvalGateOf(db, orgId, caseId) : undefined)

/**
 * Creates a case: its links and parent checked, then one command with the custom field definitions
 * and the business calendar version its SLA instances measure in; a case created unassigned is then
 * routed by the organization's routing rules (`routing`: what inbound mail adds). POST /api/cases/ comes here.
 * A given `id` (an import row's) makes it idempotent: the same id again creates nothing.
 */
export async function createCase(deps: CaseDeps, caller: Caller, input: CaseInput, session: CommandSession = commandSession(deps.store, caller), { id = randomUUID(), routing = {} }: { id?: string; routing?: RoutingContext } = {}): Promise<{ id: string } & Written> {
  const [customFields, parent, calendar, approvalGate] = await Promise.all([caseDefinitions(deps.db, caller.orgId), newParent(deps.db, caller, input.parent, undefined), currentBusinessCalendar(deps.db, caller.orgId), approvalGateIfClosing(deps.db, caller.orgId, id, input), checkLinks(deps.db, caller, input)])
  await session.run(caseDecider, caseStream(id), { type: 'CreateCase', caseId: id, orgId: caller.orgId, actor: actorOfCaller(caller), input, customFields, parent, calendarVersion: calendar.version, approvalGate, at: deps.clock().toISOString() })
  if (!input.assigned_to?.length) await routeCase(deps, caller, id, routing, session)
  return { id, position: session.position() }
}

/**
 * Changes a case the caller may see (PUT replaces the fields, PATCH the named ones), its links and
 * parent checked. `parentField` names the body field a tree refusal points at (`parent_id` on link/).
 */
export async function changeCase(deps: CaseDeps, caller: Caller, id: string, change: { input: CaseInput; replace: boolean; parentField?: string }, session: CommandSession = commandSession(deps.store, caller)): Promise<Written> {
  const current = await visibleCase(deps.db, caller, id)
  // The account is set on creation only: an update's is ignored, not checked (the original's read-only field).
  const { account: _fixed, ...input } = change.input
  const [customFields, parent, approvalGate] = await Promise.all([caseDefinitions(deps.db, caller.orgId), newParent(deps.db, caller, input.parent, id, current.parent), approvalGateIfClosing(deps.db, caller.orgId, id, input), checkLinks(deps.db, caller, input, current)])
  await session.run(caseDecider, caseStream(id), { type: 'UpdateCase', orgId: caller.orgId, actor: actorOfCaller(caller), ...change, input, customFields, parent, approvalGate, at: deps.clock().toISOString() })
  return { position: session.position() }
}

/** Deletes a case (admin or creator; the decider says 403 to anyone else, 404 to another organization). */
export async function deleteCase(deps: CaseDeps, caller: Caller, id: string, session: CommandSession = commandSession(deps.store, caller)): Promise<Written> {
  await session.run(caseDecider, caseStream(id), { type: 'DeleteCase', orgId: caller.orgId, actor: actorOfCaller(caller), at: deps.clock().toISOString() })
  return { position: session.position() }
}

/** The caller starts (`watch`) or stops following a case they may see. */
export async function watchCase(deps: CaseDeps, caller: Caller, id: string, watch: boolean, session: CommandSession = commandSession(deps.store, caller)): Promise<{ changed: boolean } & Written> {
  const command: CaseCommand = { type: watch ? 'WatchCase' : 'UnwatchCase', orgId: caller.orgId, actor: actorOfCaller(caller), at: deps.clock().toISOString() }
  const { events } = await session.run(caseDecider, caseStream(id), command)
  return { changed: events.length > 0, position: session.position() }
}
