import t from 'tap'
import type { Test } from 'tap'
import type { Caller } from '../../src/commands/caller.ts'
import { changeLead } from '../../src/commands/lead/change-lead.ts'
import { LEAD_EMAIL_SCOPE, createLead } from '../../src/commands/lead/create-lead.ts'
import { leadStreams } from '../../src/commands/lead/lead.ts'
import type { Conversion } from '../../src/commands/lead/lead.ts'
import { DEAL_NAME_SCOPE, createDeal } from '../../src/commands/opportunity/create-opportunity.ts'
import { dealPipelines } from '../../src/commands/pipeline/kinds.ts'
import type { Deps } from '../../src/deps.ts'
import { ValidationError } from '../../src/errors.ts'
import { accountOf, liveAccounts } from '../../src/projections/account/accounts.ts'
import { contactOf, listContacts } from '../../src/projections/contact/contacts.ts'
import { leadOf } from '../../src/projections/lead/leads.ts'
import { opportunityOf } from '../../src/projections/opportunity/opportunities.ts'
import { dealQuery, listDeals } from '../../src/projections/opportunity/queries.ts'
import { eventsAfter, givenDeps, givenOrganization, logEnd, nameHolder, rejectionOf, settled } from '../helpers/use-cases.ts'
import { CONTACT_EMAIL_SCOPE } from '../../src/commands/contact/contact.ts'
import { ACCOUNT_NAME_SCOPE } from '../../src/commands/account/account.ts'

// The name-claim scopes of what conversion creates (accounts, contacts; deals and leads export theirs).
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** How many live accounts, contacts and deals the organization's read models hold (an admin's view). */
async function recordCounts(deps: Deps, orgId: string) {
  const page = { limit: 1000, offset: 0 }
  const [accounts, contacts, deals] = await Promise.all([
    liveAccounts(deps.db, orgId),
    listContacts(deps.db, orgId, page),
    listDeals(deps.db, dealQuery({ orgId, profileId: null, isAdmin: true }, {}, deps.clock()), page, 'USD'),
  ])
  return { accounts: accounts.length, contacts: contacts.count, deals: deals.count }
}

/** Issue 16: lead conversion (at creation, or by a status change) runs from (deps, caller, input), with no HTTP app. */
t.test('lead conversion, without an HTTP app', async (t) => {
  const { deps } = await givenDeps(t)
  const acme = await givenOrganization(deps, 'Acme')
  const alice = await acme.addMember('alice@acme.test')

  /** The account, contact and deal a conversion made exist in the read models, linked to each other and to the lead; each holds its name. */
  async function assertConverted(t: Test, caller: Caller, leadId: string, ids: Partial<Conversion>, expected: { name: string; email: string; firstName: string }) {
    t.match(ids, { account_id: UUID, contact_id: UUID, opportunity_id: UUID }, 'answers the ids of what it created')
    t.equal(new Set([ids.account_id, ids.contact_id, ids.opportunity_id]).size, 3, 'three distinct records')
    const { account_id, contact_id, opportunity_id } = ids as Conversion
    const { orgId } = caller
    const lead = await leadOf(deps.db, orgId, leadId)
    t.match(lead, { status: 'converted', account: account_id, converted_account: account_id, converted_contact: contact_id, converted_opportunity: opportunity_id, converted_by: caller.profileId })
    t.ok(lead?.contacts.includes(contact_id), "the new contact joins the lead's contacts")
    t.match(await accountOf(deps.db, orgId, account_id), { name: expected.name, email: expected.email, created_by: caller.profileId })
    t.match(await contactOf(deps.db, orgId, contact_id), { first_name: expected.firstName, email: expected.email, account: account_id })
    const deal = await opportunityOf(deps.db, orgId, opportunity_id)
    t.match(deal, { name: expected.name, account: account_id, pipeline_id: dealPipelines.defaultId(orgId) })
    t.same(deal?.contacts, [contact_id], "the deal's contact is the new one")

    const events = await deps.store.readStream(leadStreams.stream(leadId))
    const converted = events.filter((e) => e.type === 'LeadConverted')
    t.equal(converted.length, 1, 'LeadConverted appended once')
    t.match(converted[0]?.data, { account_id, contact_id, opportunity_id, by: caller.profileId })

    t.equal(await nameHolder(deps, ACCOUNT_NAME_SCOPE, orgId, expected.name), account_id, "the account's name is claimed")
    t.equal(await nameHolder(deps, CONTACT_EMAIL_SCOPE, orgId, expected.email), contact_id, "the contact's email is claimed")
    t.equal(await nameHolder(deps, DEAL_NAME_SCOPE, orgId, expected.name), opportunity_id, "the deal's name is claimed")
  }

  t.test('given a member, when they create a lead with status converted, then its account, contact and deal exist, linked, and LeadConverted is recorded', async (t) => {
    const before = await recordCounts(deps, acme.orgId)
    const { id, converted, position } = await createLead(deps, alice, { first_name: 'Ann', last_name: 'Archer', email: 'ann@initech.test', company_name: 'Initech', status: 'converted', source: 'call' })
    await settled(deps, position)
    await assertConverted(t, alice, id, converted, { name: 'Initech', email: 'ann@initech.test', firstName: 'Ann' })
    t.match(await opportunityOf(deps.db, acme.orgId, converted.opportunity_id!), { lead_source: 'CALL' }, "the lead's source in the deal's list")
    t.same((await deps.store.readStream(leadStreams.stream(id))).map((e) => e.type), ['LeadCreated', 'LeadConverted'])
    t.equal(await nameHolder(deps, LEAD_EMAIL_SCOPE, acme.orgId, 'ann@initech.test'), id, "the lead's email is claimed")
    t.same(await recordCounts(deps, acme.orgId), { accounts: before.accounts + 1, contacts: before.contacts + 1, deals: before.deals + 1 })
  })

  t.test('given an open lead, when changeLead sets its status to converted, then it is converted the same way (the account named after the person)', async (t) => {
    const created = await createLead(deps, alice, { first_name: 'Bob', last_name: 'Baker', email: 'bob@bakery.test' })
    t.same(created.converted, {}, 'an open lead converts nothing')
    await settled(deps, created.position)
    t.match(await leadOf(deps.db, acme.orgId, created.id), { status: 'assigned', account: null, converted_account: null })

    const { converted, position } = await changeLead(deps, alice, created.id, { input: { status: 'converted' }, replace: false })
    await settled(deps, position)
    await assertConverted(t, alice, created.id, converted, { name: 'Bob Baker', email: 'bob@bakery.test', firstName: 'Bob' })
    t.same((await deps.store.readStream(leadStreams.stream(created.id))).map((e) => e.type), ['LeadCreated', 'LeadConverted'], 'LeadConverted carries the status change')

    const again = await rejectionOf(changeLead(deps, alice, created.id, { input: { status: 'converted' }, replace: false }))
    t.type(again, ValidationError)
    t.match(again, { errors: { status: [/already converted/] } }, 'converting twice is refused')
  })

  t.test('given a lead without an email, when it is converted (created as converted, or changed to), then it is refused under email and nothing is created', async (t) => {
    const counts = await recordCounts(deps, acme.orgId)
    const before = await logEnd(deps)
    const atCreation = await rejectionOf(createLead(deps, alice, { first_name: 'Nora', company_name: 'Nomail Inc', status: 'converted' }))
    t.type(atCreation, ValidationError)
    t.match(atCreation, { statusCode: 400, errors: { email: [String] } })
    t.same(await eventsAfter(deps, before), [], 'no lead, account, contact, deal or name claim appended')

    const open = await createLead(deps, alice, { first_name: 'Nora', company_name: 'Nomail Inc' })
    await settled(deps, open.position)
    const afterOpen = await logEnd(deps)
    const byChange = await rejectionOf(changeLead(deps, alice, open.id, { input: { status: 'converted' }, replace: false }))
    t.type(byChange, ValidationError)
    t.match(byChange, { statusCode: 400, errors: { email: [String] } })
    t.same(await eventsAfter(deps, afterOpen), [], 'nothing appended by the refused change')
    t.match(await leadOf(deps.db, acme.orgId, open.id), { status: 'assigned', account: null, converted_account: null })

    t.same(await recordCounts(deps, acme.orgId), counts, 'no account, contact or deal rows')
    t.equal(await nameHolder(deps, ACCOUNT_NAME_SCOPE, acme.orgId, 'Nomail Inc'), null, 'no account name claimed')
    t.equal(await nameHolder(deps, DEAL_NAME_SCOPE, acme.orgId, 'Nomail Inc'), null, 'no deal name claimed')
  })

  t.test("given a deal already named like the lead's company, when the lead converts, then it is refused under company_name and nothing is written: the account, contact, deal and lead are one append", async (t) => {
    const hooli = await createDeal(deps, acme.admin, { input: { name: 'Hooli' } })
    await settled(deps, hooli.position)
    const counts = await recordCounts(deps, acme.orgId)
    const before = await logEnd(deps)

    const error = await rejectionOf(createLead(deps, alice, { first_name: 'Gavin', email: 'gavin@hooli.test', company_name: 'Hooli', status: 'converted' }))
    t.type(error, ValidationError)
    t.match(error, { statusCode: 400, errors: { company_name: [/already in use/] } })

    t.same(await eventsAfter(deps, before), [], 'nothing appended: no account, contact, deal, lead or claim')
    t.same(await recordCounts(deps, acme.orgId), counts, 'no account, contact or deal rows left')
    t.equal(await nameHolder(deps, ACCOUNT_NAME_SCOPE, acme.orgId, 'Hooli'), null, 'the account name is free')
    t.equal(await nameHolder(deps, CONTACT_EMAIL_SCOPE, acme.orgId, 'gavin@hooli.test'), null, 'the contact email is free')
    t.equal(await nameHolder(deps, LEAD_EMAIL_SCOPE, acme.orgId, 'gavin@hooli.test'), null, 'the lead email is free')
    t.equal(await nameHolder(deps, DEAL_NAME_SCOPE, acme.orgId, 'Hooli'), hooli.id, 'the deal keeps its name')

    const retried = await createLead(deps, alice, { first_name: 'Gavin', email: 'gavin@hooli.test', company_name: 'Hooli XYZ', status: 'converted' })
    await settled(deps, retried.position)
    t.match(await contactOf(deps.db, acme.orgId, retried.converted.contact_id!), { email: 'gavin@hooli.test' }, 'the freed email converts under another company name')
  })
})
