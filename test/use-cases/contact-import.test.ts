import { existsSync } from 'node:fs'
import t from 'tap'
import { IMPORT_TTL_MS, commitRecordImport, previewRecordImport } from '../../src/commands/imports/record-import.ts'
import { createRecord } from '../../src/commands/record-create.ts'
import { NotFoundError, ValidationError } from '../../src/errors.ts'
import { listContacts } from '../../src/projections/contact/contacts.ts'
import { csvFile, eventsAfter, givenAccount, givenDeps, givenOrganization, logEnd, nameHolder, rejectionOf, settled } from '../helpers/use-cases.ts'
import { contactModule } from '../../src/http/contacts/contacts.ts'
import { CONTACT_EMAIL_SCOPE } from '../../src/commands/contact/contact.ts'

/** Issue 16: the contact CSV import (preview, then commit) runs from (deps, caller, module, file), with no HTTP app. */
t.test('contact CSV import, without an HTTP app', async (t) => {
  const { deps, dataDir } = await givenDeps(t)
  const acme = await givenOrganization(deps, 'Acme')
  const globex = await givenOrganization(deps, 'Globex')
  const alice = await acme.addMember('alice@acme.test')
  const bob = await acme.addMember('bob@acme.test')
  const contacts = contactModule(deps.db)

  const initech = await givenAccount(deps, acme.admin, 'Initech')
  const foreign = await givenAccount(deps, globex.admin, 'Globex Corp')
  const taken = await createRecord(deps, acme.admin, contacts, { first_name: 'Taken', email: 'taken@acme.test' })
  await settled(deps, taken.position)
  const acmeContacts = async (search?: string) => (await listContacts(deps.db, acme.orgId, { limit: 100, offset: 0, search })).rows

  const lines = [
    'First Name,EMAIL,account,Shoe Size',
    `Peter,peter@initech.test,${initech},42`,
    'Samir,samir@initech.test,,',
    ',nobody@initech.test,,',
    'Michael,not-an-email,,',
    'Pete,PETER@initech.test,,',
    'Already,TAKEN@acme.test,,',
    `Spy,spy@initech.test,${foreign},`,
  ]
  const refusedRows = [3, 4, 5, 6, 7]
  let importId = ''

  t.test('given a CSV of valid and invalid rows, when a member previews it, then every row has its verdict and nothing is created', async (t) => {
    const before = await logEnd(deps)
    const path = await csvFile(dataDir, 'contacts.csv', lines)
    const preview = await previewRecordImport(deps, alice, contacts, path)
    importId = preview.importId
    t.match(preview, { total: 7, refused: { count: 5 }, columns: { recognized: ['first_name', 'email', 'account'], ignored: ['Shoe Size'] } })
    t.same(preview.refused.errors.map((e) => e.row), refusedRows)
    t.match(preview.refused.errors, [
      { row: 3, errors: { first_name: [String] } },
      { row: 4, errors: { email: [String] } },
      { row: 5, errors: { email: ['Duplicate of row 1 in this file.'] } },
      { row: 6, errors: { email: [/already in use/] } },
      { row: 7, errors: { account: [String] } },
    ])
    t.same(preview.preview.map((row) => [row.first_name, row.email, row.account]), [['Peter', 'peter@initech.test', initech], ['Samir', 'samir@initech.test', null]], 'the valid rows as they would be created')
    t.equal(Date.parse(preview.expiresAt) - deps.clock().getTime(), IMPORT_TTL_MS, 'kept for a day from the preview')
    t.notOk(existsSync(path), 'the file is taken over for the commit')

    t.same(await eventsAfter(deps, before), [], 'nothing appended')
    t.same((await acmeContacts()).map((c) => c.email), ['taken@acme.test'], 'no contact created')
    t.equal(await nameHolder(deps, CONTACT_EMAIL_SCOPE, acme.orgId, 'peter@initech.test'), null, 'no email claimed')
  })

  t.test("given Alice's preview, when another member, an admin or another organization commits it, then it is not found and nothing is created", async (t) => {
    const before = await logEnd(deps)
    for (const [who, caller] of [['Bob', bob], ["Acme's admin", acme.admin], ["Globex's admin", globex.admin]] as const) {
      const error = await rejectionOf(commitRecordImport(deps, caller, contacts, importId))
      t.type(error, NotFoundError, `${who}: 404`)
      t.match(error, { statusCode: 404 })
    }
    t.same(await eventsAfter(deps, before), [], 'nothing appended')
  })

  t.test('given the preview, when Alice commits it, then the valid rows are created (once) and the refused ones reported', async (t) => {
    const outcome = await commitRecordImport(deps, alice, contacts, importId)
    t.match(outcome, { created: 2, failed: 5 })
    t.same(outcome.errors.map((e) => e.row), refusedRows)
    await settled(deps, outcome.position)

    const [peter] = await acmeContacts('peter@initech')
    t.match(peter, { first_name: 'Peter', email: 'peter@initech.test', account: initech, created_by: alice.profileId })
    t.match(await acmeContacts('samir@initech'), [{ first_name: 'Samir', account: null }])
    t.same(await acmeContacts('spy@'), [], 'the row pointing at another organization\'s account is not created')
    t.equal((await acmeContacts()).length, 3, 'two contacts added to the one there was')
    t.equal(await nameHolder(deps, CONTACT_EMAIL_SCOPE, acme.orgId, 'PETER@initech.test'), peter?.id, "the imported email is claimed by the imported contact")
    const copy = await rejectionOf(createRecord(deps, bob, contacts, { first_name: 'Copy', email: 'Peter@Initech.test' }))
    t.type(copy, ValidationError, 'so a later create with that email is refused')

    const before = await logEnd(deps)
    const again = await rejectionOf(commitRecordImport(deps, alice, contacts, importId))
    t.type(again, NotFoundError, 'committing again is 404')
    t.same(await eventsAfter(deps, before), [], 'and creates nothing')
    t.equal((await acmeContacts()).length, 3)
  })
})
