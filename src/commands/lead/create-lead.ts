import { randomUUID } from 'node:crypto'
import type { Position } from '../../eventstore/event-store.ts'
import { lookupsOf } from '../../lookups/lookups.ts'
import { checkRelations } from '../../projections/record/relations.ts'
import type { Caller } from '../caller.ts'
import { actorOfCaller } from '../caller.ts'
import { commandSession } from '../command-session.ts'
import type { CommandSession } from '../command-session.ts'
import type { Definition } from '../custom-field/values.ts'
import type { DealDeps } from '../opportunity/create-opportunity.ts'
import { withOptionalClaim } from '../unique-name.ts'
import { runLeadCommand } from './convert-lead.ts'
import type { Conversion, LeadCommand, LeadInput } from './lead.ts'

/** Lead emails are unique per organization, case-insensitively (name claims of this scope). */
export const LEAD_EMAIL_SCOPE = 'lead_email'

export type CreateLeadOptions = {
  /** The organization's custom field definitions for leads, so an import looks them up once, not per row. */
  customFields?: readonly Definition[]
  /** The organization's default currency (for an amount sent without one), so an import looks it up once. */
  defaultCurrency?: string
  /** The unit of work to join (an HTTP request's, an import's); a new one by default. */
  session?: CommandSession
  /** A chosen id, so a repeat creates nothing (a sample-data pack's records, a web form's submission); a fresh one by default. */
  id?: string
}

/**
 * Creates a lead: relations checked, the email claimed, the create run (converting first when
 * created as converted). POST /api/leads/, the CSV upload and the web capture all come here.
 * Answers the id, what conversion created and the position to wait for.
 */
export async function createLead(deps: DealDeps, caller: Caller, input: LeadInput, options: CreateLeadOptions = {}): Promise<{ id: string; converted: Partial<Conversion>; position: Position | null }> {
  const { orgId } = caller
  const session = options.session ?? commandSession(deps.store, caller)
  await checkRelations(deps.db, orgId, input)
  const [definitions, defaultCurrency] = await Promise.all([
    options.customFields ?? lookupsOf(deps).customFields(orgId, 'leads'),
    options.defaultCurrency ?? lookupsOf(deps).organization(orgId).then((org) => org.default_currency),
  ])
  const id = options.id ?? randomUUID()
  const command: LeadCommand = { type: 'CreateLead', leadId: id, orgId, actor: actorOfCaller(caller), at: deps.clock().toISOString(), customFields: definitions, defaultCurrency, input }
  const claim = { scope: LEAD_EMAIL_SCOPE, orgId, ownerId: id, name: input.email ?? null, field: 'email' }
  const converted = await withOptionalClaim(session.run, claim, (run) => runLeadCommand(deps, caller, run, id, command))
  return { id, converted, position: session.position() }
}
