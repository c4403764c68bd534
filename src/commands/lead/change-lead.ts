import type { Db } from '../../db/database.ts'
import { ForbiddenError, orNotFound } from '../../errors.ts'
import type { Position } from '../../eventstore/event-store.ts'
import { lookupsOf } from '../../lookups/lookups.ts'
import { leadOf } from '../../projections/lead/leads.ts'
import type { LeadRow } from '../../projections/lead/leads.ts'
import { checkRelations } from '../../projections/record/relations.ts'
import type { Caller } from '../caller.ts'
import { actorOfCaller } from '../caller.ts'
import { commandSession } from '../command-session.ts'
import type { CommandSession } from '../command-session.ts'
import type { DealDeps } from '../opportunity/create-opportunity.ts'
import { mayAccess } from '../../visibility/policy.ts'
import { withRenamedClaim } from '../unique-name.ts'
import { runLeadCommand } from './convert-lead.ts'
import { LEAD_EMAIL_SCOPE } from './create-lead.ts'
import type { Conversion, LeadCommand, LeadInput } from './lead.ts'

/** A live lead of the caller's organization (404 otherwise) that the caller may see: admin, creator or assignee (403 otherwise). */
export async function visibleLead(db: Db, caller: Caller, id: string): Promise<LeadRow> {
  const row = await orNotFound(leadOf(db, caller.orgId, id))
  if (!mayAccess('Lead', { createdBy: row.created_by, assignedTo: row.assigned_to }, actorOfCaller(caller))) throw new ForbiddenError('Only an admin, the creator or an assignee may see or change this lead')
  return row
}

/**
 * Changes a lead the caller may see (PUT replaces every field, PATCH the named ones): relations
 * checked, the email's claim moved, and a change of status to `converted` converts it (see
 * convert-lead.ts). Answers what conversion created and the position to wait for.
 */
export async function changeLead(deps: DealDeps, caller: Caller, leadId: string, change: { input: LeadInput; replace: boolean }, session: CommandSession = commandSession(deps.store, caller)): Promise<{ converted: Partial<Conversion>; position: Position | null }> {
  const { db, clock } = deps
  const { orgId } = caller
  const { input, replace } = change
  const current = await visibleLead(db, caller, leadId)
  await checkRelations(db, orgId, input, {}, current)
  const lookups = lookupsOf(deps)
  const [customFields, org] = await Promise.all([lookups.customFields(orgId, 'leads'), lookups.organization(orgId)])
  const command: LeadCommand = { type: 'UpdateLead', orgId, actor: actorOfCaller(caller), at: clock().toISOString(), customFields, defaultCurrency: org.default_currency, input, replace }
  const email = input.email === undefined ? (replace ? null : current.email) : input.email
  const claim = { scope: LEAD_EMAIL_SCOPE, orgId, ownerId: current.id, name: email, previousName: current.email, field: 'email' }
  const converted = await withRenamedClaim(session.run, claim, (run) => runLeadCommand(deps, caller, run, current.id, command))
  return { converted, position: session.position() }
}
