import { randomUUID } from 'node:crypto'
import { domainEventOf } from '../../projections/projector.ts'
import { ACCOUNT_NAME_SCOPE, accountDecider, accountStream, emptyAccount } from '../account/account.ts'
import type { Caller } from '../caller.ts'
import { actorOfCaller } from '../caller.ts'
import type { CommandRunner } from '../command-runner.ts'
import type { CommandSession } from '../command-session.ts'
import { CONTACT_EMAIL_SCOPE, contactDecider, contactStream, emptyContact } from '../contact/contact.ts'
import { fold } from '../decider.ts'
import { DEAL_NAME_SCOPE, createCheckedDeal } from '../opportunity/create-deal.ts'
import type { DealDeps } from '../opportunity/create-deal.ts'
import type { LEAD_SOURCES as DEAL_SOURCES } from '../opportunity/enums.ts'
import { opportunityDecider, opportunityStreams } from '../opportunity/opportunity.ts'
import { replacing } from '../record.ts'
import { withClaimedName, withOptionalClaim, withReleasedName } from '../unique-name.ts'
import { evolveLead, leadDecider, leadStreams } from './lead.ts'
import type { Conversion, LeadCommand, LeadEvent, LeadFields } from './lead.ts'

/**
 * Lead conversion (§3.3): a status change to `converted` creates the account, contact and deal the
 * lead describes, through their own deciders and name claims, then the lead's command records
 * `LeadConverted` with their ids. What the lead's decider would refuse is refused before anything
 * is created (a dry run of the same decision); if the lead's command still fails afterwards (a
 * concurrent change), what was created is deleted again (soft, its names freed).
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
 * Creates the account (named after company_name, else the person; 400 under company_name when an
 * account has that name), the contact (400 under email when a contact has it) and the deal (named
 * like the account; 400 under company_name when taken). Answers their ids and how to undo them.
 */
async function createRecords(deps: DealDeps, caller: Caller, session: CommandSession, lead: LeadFields) {
  const { run } = session
  const { orgId } = caller
  const actor = actorOfCaller(caller)
  const at = deps.clock().toISOString()
  const name = lead.company_name ?? fullName(lead)
  const ids: Conversion = { account_id: randomUUID(), contact_id: randomUUID(), opportunity_id: randomUUID() }
  const undo: (() => Promise<unknown>)[] = []
  const admin = { profileId: actor.profileId, isAdmin: true }
  try {
    const { email, phone, website, address_line, city, state, postcode, country, description, assigned_to, tags } = lead
    const account = replacing(emptyAccount(), { name, email, phone, website, address_line, city, state, postcode, country, description, assigned_to, tags })
    await withClaimedName(run, { scope: ACCOUNT_NAME_SCOPE, orgId, ownerId: ids.account_id, name, field: 'company_name' }, (withClaim) =>
      withClaim(accountDecider, accountStream(ids.account_id), { type: 'CreateAccount', accountId: ids.account_id, orgId, fields: account, actorId: actor.profileId, at }),
    )
    undo.push(() => withReleasedName(run, { scope: ACCOUNT_NAME_SCOPE, orgId, ownerId: ids.account_id, name }, (withRelease) => withRelease(accountDecider, accountStream(ids.account_id), { type: 'DeleteAccount', orgId, actor: admin, at })))

    const contact = replacing(emptyContact(), { first_name: lead.first_name, last_name: lead.last_name, email, phone, title: lead.title, account: ids.account_id, description, assigned_to, tags })
    await withOptionalClaim(run, { scope: CONTACT_EMAIL_SCOPE, orgId, ownerId: ids.contact_id, name: email, field: 'email' }, (withClaim) =>
      withClaim(contactDecider, contactStream(ids.contact_id), { type: 'CreateContact', contactId: ids.contact_id, orgId, fields: contact, actorId: actor.profileId, at }),
    )
    const releaseContact = (withRelease = run) => withRelease(contactDecider, contactStream(ids.contact_id), { type: 'DeleteContact', orgId, actor: admin, at })
    undo.push(() => (email ? withReleasedName(run, { scope: CONTACT_EMAIL_SCOPE, orgId, ownerId: ids.contact_id, name: email }, releaseContact) : releaseContact()))

    const input = {
      name, account: ids.account_id, contacts: [ids.contact_id], amount: lead.opportunity_amount, probability: lead.probability, lead_source: lead.source ? DEAL_SOURCE[lead.source] : null,
      description, tags, teams: lead.teams, assigned_to, custom: { cfFields: {} },
    }
    await createCheckedDeal(deps, caller, { id: ids.opportunity_id, input, field: 'company_name' }, session)
    undo.push(() =>
      withReleasedName(run, { scope: DEAL_NAME_SCOPE, orgId, ownerId: ids.opportunity_id, name }, (withRelease) => withRelease(opportunityDecider, opportunityStreams.stream(ids.opportunity_id), { type: 'DeleteOpportunity', orgId, actor: { ...admin, isSuperuser: false }, at })),
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
 * Runs a lead command on its stream in the caller's session, converting first when it converts:
 * the answer carries the ids conversion created (empty when the command converted nothing).
 * The lead's own command runs through `runLead` (a runner that carries the lead's email claim into
 * the lead's append); the records conversion creates carry their own claims.
 */
export async function runLeadCommand(deps: DealDeps, caller: Caller, session: CommandSession, leadId: string, command: LeadCommand, runLead: CommandRunner = session.run): Promise<Partial<Conversion>> {
  const stream = leadStreams.stream(leadId)
  const lead = await conversionNeeded(deps, leadId, command)
  if (!lead) {
    await runLead(leadDecider, stream, command)
    return {}
  }
  const created = await createRecords(deps, caller, session, lead)
  try {
    await runLead(leadDecider, stream, { ...command, conversion: created.conversion } as LeadCommand)
  } catch (error) {
    await created.undo()
    throw error
  }
  return created.conversion
}
