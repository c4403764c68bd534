import { randomUUID } from 'node:crypto'
import { domainEventOf } from '../../events/versions.ts'
import { ACCOUNT_NAME_SCOPE, accountDecider, accountStream, emptyAccount } from '../account/account.ts'
import type { Caller } from '../caller.ts'
import { actorOfCaller } from '../caller.ts'
import type { CommandRunner } from '../command-runner.ts'
import { CONTACT_EMAIL_SCOPE, contactDecider, contactStream, emptyContact } from '../contact/contact.ts'
import { fold } from '../decider.ts'
import { companion } from '../handle-command.ts'
import type { Companion } from '../handle-command.ts'
import { dealCreation } from '../opportunity/create-opportunity.ts'
import type { DealDeps } from '../opportunity/create-opportunity.ts'
import type { LEAD_SOURCES as DEAL_SOURCES } from '../opportunity/enums.ts'
import { opportunityDecider } from '../opportunity/opportunity.ts'
import { replacing } from '../record.ts'
import { nameClaim } from '../unique-name.ts'
import { evolveLead, leadDecider, leadStreams } from './lead.ts'
import type { Conversion, LeadCommand, LeadEvent, LeadFields } from './lead.ts'

/**
 * Lead conversion (§3.3): a status change to `converted` creates the account, contact and deal the
 * lead describes, through their own deciders and name claims, in the same append as the lead's
 * `LeadConverted` with their ids. A dry run of the lead's decision first tells whether the command
 * converts (and refuses what the decider would refuse, e.g. no email).
 */

/** The lead's source in the deal's uppercase list (§2.1 vs §2.5). */
const DEAL_SOURCE: Record<NonNullable<LeadFields['source']>, (typeof DEAL_SOURCES)[number]> = {
  call: 'CALL', email: 'EMAIL', 'existing customer': 'EXISTING CUSTOMER', partner: 'PARTNER', 'public relations': 'PUBLIC RELATIONS', compaign: 'CAMPAIGN', other: 'OTHER',
}

const PLACEHOLDER: Conversion = { account_id: 'account', contact_id: 'contact', opportunity_id: 'opportunity' }

/**
 * The lead's fields as the command would leave them, when it converts the lead; null when it does
 * not convert. Throws what the decider refuses (e.g. converting twice, no email).
 */
export async function conversionNeeded(deps: Pick<DealDeps, 'store'>, leadId: string, command: LeadCommand): Promise<LeadFields | null> {
  const state = fold(leadDecider, (await deps.store.readStream(leadStreams.stream(leadId))).map((e) => domainEventOf<LeadEvent>(e)))
  const events = leadDecider.decide({ ...command, conversion: PLACEHOLDER } as LeadCommand, state)
  return events.some((e) => e.type === 'LeadConverted') ? events.reduce(evolveLead, state).fields : null
}

const fullName = (lead: LeadFields) => [lead.first_name, lead.last_name].filter(Boolean).join(' ')

/**
 * The account (named after company_name, else the person; 400 under company_name when an account
 * has that name), the contact (400 under email when a contact has it) and the deal (named like the
 * account; 400 under company_name when taken) a lead converts into, with their names' claims, as
 * companion commands of the lead's own: the store appends all of them with the lead's
 * LeadConverted, or none (one transaction on PostgreSQL), so a refusal, a failure or a crash leaves
 * nothing half-converted.
 */
async function conversionOf(deps: DealDeps, caller: Caller, lead: LeadFields): Promise<{ conversion: Conversion; companions: Companion[] }> {
  const { orgId } = caller
  const actorId = actorOfCaller(caller).profileId
  const at = deps.clock().toISOString()
  const name = lead.company_name ?? fullName(lead)
  const ids: Conversion = { account_id: randomUUID(), contact_id: randomUUID(), opportunity_id: randomUUID() }
  const { email, phone, website, industry, address_line, city, state, postcode, country, description, assigned_to, tags } = lead
  const account = replacing(emptyAccount(), { name, email, phone, website, industry, address_line, city, state, postcode, country, description, assigned_to, tags })
  // A contact needs a first name: a lead known only by its last name gives that.
  const [first_name, last_name] = lead.first_name ? [lead.first_name, lead.last_name] : [lead.last_name ?? '', null]
  const contact = replacing(emptyContact(), { first_name, last_name, email, phone, title: lead.title, account: ids.account_id, description, assigned_to, tags })
  const input = {
    name, account: ids.account_id, contacts: [ids.contact_id], amount: lead.opportunity_amount, currency: lead.currency, probability: lead.probability, lead_source: lead.source ? DEAL_SOURCE[lead.source] : null,
    description, tags, teams: lead.teams, assigned_to, custom: { cfFields: {} },
  }
  const deal = await dealCreation(deps, caller, { id: ids.opportunity_id, input, field: 'company_name' })
  const fresh = { expectNew: true }
  const companions = [
    nameClaim({ scope: ACCOUNT_NAME_SCOPE, orgId, ownerId: ids.account_id, name, field: 'company_name' }),
    companion(accountDecider, accountStream(ids.account_id), { type: 'CreateAccount', accountId: ids.account_id, orgId, fields: account, actorId, at }, fresh),
    ...(email ? [nameClaim({ scope: CONTACT_EMAIL_SCOPE, orgId, ownerId: ids.contact_id, name: email, field: 'email' })] : []),
    companion(contactDecider, contactStream(ids.contact_id), { type: 'CreateContact', contactId: ids.contact_id, orgId, fields: contact, actorId, at }, fresh),
    nameClaim(deal.claim),
    companion(opportunityDecider, deal.create.streamName, deal.create.prepare, fresh),
  ]
  return { conversion: ids, companions }
}

/**
 * Runs a lead command on its stream through `run` (the runner that carries the lead's own email
 * claim), converting when it converts: the answer carries the ids of what conversion created
 * (empty when the command converted nothing).
 */
export async function runLeadCommand(deps: DealDeps, caller: Caller, run: CommandRunner, leadId: string, command: LeadCommand): Promise<Partial<Conversion>> {
  const stream = leadStreams.stream(leadId)
  const lead = await conversionNeeded(deps, leadId, command)
  if (!lead) {
    await run(leadDecider, stream, command)
    return {}
  }
  const { conversion, companions } = await conversionOf(deps, caller, lead)
  await run(leadDecider, stream, { ...command, conversion } as LeadCommand, { also: companions })
  return conversion
}
