import t from 'tap'
import { LEAD_EMAIL_SCOPE, createLead } from '../../src/commands/lead/create-lead.ts'
import { importLeads } from '../../src/commands/lead/import-leads.ts'
import { ValidationError } from '../../src/errors.ts'
import { leadConditions, leadSection } from '../../src/projections/lead/leads.ts'
import type { LeadRow } from '../../src/projections/lead/leads.ts'
import { csvFile, eventsAfter, givenDeps, givenOrganization, logEnd, nameHolder, rejectionOf, settled } from '../helpers/use-cases.ts'
import { LEAD_ROWS } from '../../src/http/leads/lead-upload.ts'


/** Issue 16: the lead CSV upload runs from (deps, caller, file), with no HTTP app. */
t.test('lead CSV upload, without an HTTP app', async (t) => {
  const { deps, dataDir } = await givenDeps(t)
  const acme = await givenOrganization(deps, 'Acme')
  const alice = await acme.addMember('alice@acme.test')
  const old = await createLead(deps, acme.admin, { first_name: 'Old', email: 'old@initech.test' })
  await settled(deps, old.position)

  /** Every live lead of Acme in the read model (open and closed sections), by email. */
  async function leadsByEmail(): Promise<Map<string | null, LeadRow>> {
    const conditions = leadConditions({ orgId: acme.orgId, profileId: acme.admin.profileId, isAdmin: true }, {})
    const page = { limit: 100, offset: 0 }
    const [open, closed] = await Promise.all([leadSection(deps.db, conditions, false, page), leadSection(deps.db, conditions, true, page)])
    return new Map([...open.rows, ...closed.rows].map((row) => [row.email, row]))
  }

  t.test('given a CSV of leads, when a member uploads it, then each valid row becomes a lead and a duplicate email within the file is refused', async (t) => {
    const path = await csvFile(dataDir, 'leads.csv', [
      'First Name,Last Name,Email,Company,Status,Shoe Size',
      'Ann,Archer,ann@initech.test,Initech,in process,42',
      'Ben,Baker,ben@initech.test,,,',
      'Cid,,ANN@initech.test,,,',
      'Dot,,old@INITECH.test,,,',
      ',,nameless@initech.test,,,',
      'Gus,,gus@hooli.test,Hooli,converted,',
    ])
    const outcome = await importLeads(deps, alice, path, LEAD_ROWS)
    t.match(outcome, { created: 3, failed: 3, columns: { recognized: ['first_name', 'last_name', 'email', 'company_name', 'status'], ignored: ['Shoe Size'] } })
    t.match(outcome.errors, [
      { row: 3, errors: { email: ['Duplicate of row 1 in this file.'] } },
      { row: 4, errors: { email: [/already in use/] } },
      { row: 5, errors: { first_name: [String] } },
    ])
    t.equal(outcome.errors.length, 3)
    await settled(deps, outcome.position)

    const leads = await leadsByEmail()
    t.same([...leads.keys()].sort(), ['ann@initech.test', 'ben@initech.test', 'gus@hooli.test', 'old@initech.test'], 'three leads added; the duplicate and the refused rows are not')
    t.match(leads.get('ann@initech.test'), { first_name: 'Ann', last_name: 'Archer', company_name: 'Initech', status: 'in process', created_by: alice.profileId })
    t.match(leads.get('ben@initech.test'), { status: 'assigned', company_name: null })
    t.match(leads.get('gus@hooli.test'), { status: 'converted', converted_account: String }, 'a row can create a converted lead (createLead converts it)')
    t.equal(await nameHolder(deps, LEAD_EMAIL_SCOPE, acme.orgId, 'ann@initech.test'), leads.get('ann@initech.test')?.id, "the first row's lead holds the email")
    t.equal(await nameHolder(deps, LEAD_EMAIL_SCOPE, acme.orgId, 'old@initech.test'), old.id, 'the email taken before stays with its lead')
  })

  t.test('given a malformed file, when it is uploaded, then it is refused outright and no row is created, not even the valid rows before the fault', async (t) => {
    const before = await logEnd(deps)
    const path = await csvFile(dataDir, 'malformed.csv', ['first_name,email', 'Zed,zed@x.test', 'Yan,"yan@x.test'])
    const error = await rejectionOf(importLeads(deps, alice, path, LEAD_ROWS))
    t.type(error, ValidationError)
    t.match(error, { errors: { file: [/data row 2/] } })
    t.same(await eventsAfter(deps, before), [], 'nothing appended')
    t.notOk((await leadsByEmail()).has('zed@x.test'))
  })
})
