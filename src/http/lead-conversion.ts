import { randomUUID } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { accountDecider, accountStream, emptyAccount } from '../commands/account/account.ts'
import type { CommandRunner } from '../commands/command-runner.ts'
import { contactDecider, contactStream, emptyContact } from '../commands/contact/contact.ts'
import { fold } from '../commands/decider.ts'
import { evolveLead, leadDecider, leadStreams } from '../commands/lead/lead.ts'
import type { Conversion, LeadCommand, LeadEvent, LeadFields } from '../commands/lead/lead.ts'
import type { LEAD_SOURCES as DEAL_SOURCES } from '../commands/opportunity/enums.ts'
import { opportunityDecider, opportunityStreams } from '../commands/opportunity/opportunity.ts'
import type { Actor } from '../commands/opportunity/rules.ts'
import { replacing } from '../commands/record.ts'
import { withClaimedName, withOptionalClaim, withReleasedName } from '../commands/unique-name.ts'
import { domainEventOf } from '../projections/projector.ts'
import type { AppDeps } from './app.ts'
import { DEAL_NAME_SCOPE, createDeal } from './deal-create.ts'

/**
 * Lead conversion (§3.3): a status change to `converted` creates the account, contact and deal the
 * lead describes, through their own deciders and name claims, then the lead's command records
 * `LeadConverted` with their ids. What the lead's decider would refuse is refused before anything
 * is created (a dry run of the same decision); if the lead's command still fails afterwards (a
 * concurrent change), what was created is deleted again (soft, its names freed).
 */

// The name-claim scopes of the records conversion creates (routes/accounts.ts, routes/contacts.ts).
const ACCOUNT_SCOPE = 'account'
const CONTACT_SCOPE = 'contact_email'

/** The lead's source in the deal's uppercase list (§2.1 vs §2.5). */
const DEAL_SOURCE: Record<NonNullable<LeadFields['source']>, (typeof DEAL_SOURCES)[number]> = {
  call: 'CALL', email: 'EMAIL', 'existing customer': 'EXISTING CUSTOMER', partner: 'PARTNER', 'public relations': 'PUBLIC RELATIONS', compaign: 'CAMPAIGN', other: 'OTHER',
}

const PLACEHOLDER: Conversion = { account_id: 'account', contact_id: 'contact', opportunity_id: 'opportunity' }

/**
 * The lead's fields as the command would leave them, when it converts the lead; null when it does
 * not convert. Throws what the decider refuses (e.g. converting twice, no email).
 */
export async function conversionNeeded(deps: AppDeps, leadId: string, command: LeadCommand): Promise<LeadFields | null> {
  const state = fold(leadDecider, (await deps.store.readStream(leadStreams.stream(leadId))).map((e) => domainEventOf<LeadEvent>(e)))
  const events = leadDecider.decide({ ...command, conversion: PLACEHOLDER } as LeadCommand, state)
  return events.some((e) => e.type === 'LeadConverted') ? events.reduce(evolveLead, state).fields : null
}

const fullName = (lead: LeadFields) => [lead.first_name, lead.last_name].filter(Boolean).join(' ')

/**
 * Creates the account (named after company_name, else the person; 400 under company_name when an
 * account has that name), the contact (400 under email when a contact has it) and the deal (named
 * like the account; 400 under company_name when taken). Answers their ids and how to undo them.
 */
async function createRecords(deps: AppDeps, request: FastifyRequest, reply: FastifyReply, run: CommandRunner, lead: LeadFields, actor: Actor, orgId: string) {
  const at = deps.clock().toISOString()
  const name = lead.company_name ?? fullName(lead)
  const ids: Conversion = { account_id: randomUUID(), contact_id: randomUUID(), opportunity_id: randomUUID() }
  const undo: (() => Promise<unknown>)[] = []
  const admin = { profileId: actor.profileId, isAdmin: true }
  try {
    const { email, phone, website, address_line, city, state, postcode, country, description, assigned_to, tags } = lead
    const account = replacing(emptyAccount(), { name, email, phone, website, address_line, city, state, postcode, country, description, assigned_to, tags })
    await withClaimedName(run, { scope: ACCOUNT_SCOPE, orgId, ownerId: ids.account_id, name, field: 'company_name' }, () =>
      run(accountDecider, accountStream(ids.account_id), { type: 'CreateAccount', accountId: ids.account_id, orgId, fields: account, actorId: actor.profileId, at }),
    )
    undo.push(() => withReleasedName(run, { scope: ACCOUNT_SCOPE, orgId, ownerId: ids.account_id, name }, () => run(accountDecider, accountStream(ids.account_id), { type: 'DeleteAccount', orgId, actor: admin, at })))

    const contact = replacing(emptyContact(), { first_name: lead.first_name, last_name: lead.last_name, email, phone, title: lead.title, account: ids.account_id, description, assigned_to, tags })
    await withOptionalClaim(run, { scope: CONTACT_SCOPE, orgId, ownerId: ids.contact_id, name: email, field: 'email' }, () =>
      run(contactDecider, contactStream(ids.contact_id), { type: 'CreateContact', contactId: ids.contact_id, orgId, fields: contact, actorId: actor.profileId, at }),
    )
    const releaseContact = () => run(contactDecider, contactStream(ids.contact_id), { type: 'DeleteContact', orgId, actor: admin, at })
    undo.push(() => (email ? withReleasedName(run, { scope: CONTACT_SCOPE, orgId, ownerId: ids.contact_id, name: email }, releaseContact) : releaseContact()))

    const input = {
      name, account: ids.account_id, contacts: [ids.contact_id], amount: lead.opportunity_amount, probability: lead.probability, lead_source: lead.source ? DEAL_SOURCE[lead.source] : null,
      description, tags, teams: lead.teams, assigned_to, custom: { cfFields: {} },
    }
    await createDeal(deps, request, reply, run, { id: ids.opportunity_id, input, actor, field: 'company_name' })
    undo.push(() =>
      withReleasedName(run, { scope: DEAL_NAME_SCOPE, orgId, ownerId: ids.opportunity_id, name }, () => run(opportunityDecider, opportunityStreams.stream(ids.opportunity_id), { type: 'DeleteOpportunity', orgId, actor: { ...admin, isSuperuser: false }, at })),
    )
  } catch (error) {
    await undoAll(undo)
    throw error
  }
  return { conversion: ids, undo: () => undoAll(undo) }
}

async function undoAll(undo: (() => Promise<unknown>)[]): Promise<void> {
  for (const step of [...undo].reverse()) await step()
}

/**
 * Runs a lead command on its stream, converting first when it converts: the answer carries the ids
 * conversion created (empty when the command converted nothing).
 */
export async function runLeadCommand(deps: AppDeps, request: FastifyRequest, reply: FastifyReply, run: CommandRunner, leadId: string, command: LeadCommand, actor: Actor): Promise<Partial<Conversion>> {
  const stream = leadStreams.stream(leadId)
  const lead = await conversionNeeded(deps, leadId, command)
  if (!lead) {
    await run(leadDecider, stream, command)
    return {}
  }
  const created = await createRecords(deps, request, reply, run, lead, actor, command.orgId)
  try {
    await run(leadDecider, stream, { ...command, conversion: created.conversion } as LeadCommand)
  } catch (error) {
    await created.undo()
    throw error
  }
  return created.conversion
}
