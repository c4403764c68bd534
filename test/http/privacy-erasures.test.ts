import { createHash, randomUUID } from 'node:crypto'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import t from 'tap'
import type { Test } from 'tap'
import { claimHolder } from '../../src/commands/unique-name.ts'
import { exportEvents } from '../../src/events/export.ts'
import { createWebhookDispatcher } from '../../src/webhooks/dispatcher.ts'
import { allProjectors } from '../../src/modules/modules.ts'
import { ERASED, READ_MODEL_ERASED } from '../../src/privacy/seal.ts'
import { erasesSubjects } from '../../src/projections/privacy/erasing.ts'
import { erasuresProjector } from '../../src/projections/privacy/erasures.ts'
import { rebuildProjection } from '../../src/projections/kernel/rebuild.ts'
import { givenTwoOrganizations, succeeding } from '../helpers/fixtures.ts'
import { multipartBody } from '../helpers/multipart.ts'
import type { Headers } from '../helpers/fixtures.ts'
import { rebuildEqualsLive } from '../helpers/read-models.ts'
import { silentLogger } from '../helpers/runner.ts'
import { onTeardown } from '../helpers/cleanup.ts'
import { eventually, startReceiver } from '../helpers/webhook-receiver.ts'

/**
 * Issue 31: erasing a person. Their unique strings are everywhere before (read models, search,
 * notifications); after the erasure none is left in a dump of the whole database (the event log
 * included), in the API's answers or in an NDJSON export, also after a full rebuild, while the
 * records that pointed at the person keep answering.
 */
t.test('/api/privacy/erasures/', async (t) => {
  // The app's files under a folder of the test's own, to see the person's files go.
  const dataDir = await mkdtemp(join(tmpdir(), 'crm-erasure-'))
  t.teardown(() => rm(dataDir, { recursive: true, force: true }))
  // The receiver listens on loopback, which only WEBHOOK_ALLOW_PRIVATE lets webhooks reach.
  const { app, database, store, acme, globex, alice, bob } = await givenTwoOrganizations(t, { env: { DATA_DIR: dataDir, WEBHOOK_ALLOW_PRIVATE: '1' } })
  const admin = acme.admin.headers
  const ok = succeeding(t, app)
  // Webhooks deliver the person's events before the erasure: their delivery log must keep nothing of them after.
  const receiver = await startReceiver(t)
  const dispatcher = createWebhookDispatcher({ db: database.db, store, logger: silentLogger, retry: { baseMs: 20, maxMs: 200, maxFailures: 4 }, pollMs: 50, leaderRetryMs: 50, targets: { allowPrivate: true } })
  dispatcher.start()
  onTeardown(t, () => dispatcher.stop())
  t.equal((await app.inject({ method: 'POST', url: '/api/webhooks/', headers: admin, payload: { url: receiver.url('/people'), event_types: ['Contact*'] } })).statusCode, 201)
  const mark = randomUUID().replaceAll('-', '').slice(0, 10)
  const person = { first_name: `Ulla${mark}`, last_name: `Vrede${mark}`, email: `ulla.${mark}@mail.test`, phone: `+46 8 ${mark}`, address_line: `${mark} Storgatan`, city: `Kiruna${mark}` }
  const fileName = `passport-${mark}.txt`
  const strings = [...Object.values(person), fileName]
  const contact: string = (await ok('POST', '/api/contacts/', admin, person)).id
  await ok('PATCH', `/api/contacts/${contact}/`, admin, { description: `Met ${person.first_name} at ${person.address_line}` })
  await ok('POST', `/api/contacts/${contact}/`, admin, { comment: `@alice please call ${person.first_name} on ${person.phone}` })
  const upload = await multipartBody({ contact_attachment: { name: fileName, type: 'text/plain', content: `${person.first_name}'s passport` } })
  t.equal((await app.inject({ method: 'POST', url: `/api/contacts/${contact}/`, headers: { ...admin, 'content-type': upload.contentType }, payload: upload.payload })).statusCode, 200)
  const storedFiles = async () => (await readdir(join(dataDir, 'attachments'), { recursive: true, withFileTypes: true })).filter((entry) => entry.isFile()).length
  const deal: string = (await ok('POST', '/api/opportunities/', admin, { name: 'Renewal', amount: '1200.50', contacts: [contact] })).id
  const task: string = (await ok('POST', '/api/tasks/', admin, { title: 'Send the contract', contacts: [contact] })).id
  const billed: string = (await ok('POST', '/api/accounts/', admin, { name: 'Kiruna Mining' })).id
  const invoice: string = (await ok('POST', '/api/invoices/', admin, { account_id: billed, contact_id: contact, invoice_title: 'Renewal', currency: 'EUR', line_items: [{ name: 'Licence', unit_price: '10' }] })).invoice.id
  const licence = [{ name: 'Licence', unit_price: '10' }]
  const estimate: string = (await ok('POST', '/api/invoices/estimates/', admin, { title: 'Quote', account_id: billed, contact_id: contact, currency: 'EUR', line_items: licence })).estimate.id
  const recurring: string = (await ok('POST', '/api/invoices/recurring/', admin, { title: 'Monthly', account_id: billed, contact_id: contact, currency: 'EUR', start_date: '2030-01-01', line_items: licence })).recurring_invoice.id
  const other: string = (await ok('POST', '/api/contacts/', admin, { first_name: 'Otto', email: 'otto@mail.test' })).id
  const othersInvoice: string = (await ok('POST', '/api/invoices/', admin, { account_id: billed, contact_id: other, invoice_title: 'Support', currency: 'EUR', line_items: licence })).invoice.id
  const erase = (headers: Headers, kind: string, id: string) => app.inject({ method: 'POST', url: '/api/privacy/erasures/', headers, payload: { kind, id } })

  // Every row of every table of the database as text, the event log and the keys included (what
  // pg_dump --data-only holds; the machine's pg_dump may be older than the embedded server).
  const dump = async () => {
    const { rows: tables } = await database.pool.query<{ name: string }>(
      `SELECT format('%I.%I', table_schema, table_name) AS name FROM information_schema.tables WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`,
    )
    const texts = await Promise.all(tables.map(async ({ name }) => (await database.pool.query<{ text: string | null }>(`SELECT string_agg(t::text, E'\\n') AS text FROM ${name} t`)).rows[0]!.text ?? ''))
    return texts.join('\n')
  }
  const leftIn = (text: string) => strings.filter((value) => text.includes(value))
  // An unsalted SHA-256 of the address (as claim streams were once named) can be tested against a guessed address: a pseudonym, never in the database.
  const unsaltedHash = createHash('sha256').update(person.email.toLowerCase()).digest('hex')
  const hashesIn = (text: string) => [unsaltedHash, unsaltedHash.slice(0, 32)].filter((hash) => text.includes(hash))
  const exported = async () => {
    let text = ''
    const out = new Writable({ write: (chunk: Buffer, _encoding, done) => ((text += chunk.toString()), done()) })
    await exportEvents(store, out, { orgId: acme.orgId })
    return text
  }

  await eventually('the contact events delivered', () => receiver.delivered('/people').length >= 4)
  t.ok(leftIn(receiver.delivered('/people').map((r) => r.body).join('\n')).length > 0, 'the subscriber got the person, as it was then')
  t.same(leftIn(await dump()).sort(), [...strings].sort(), 'before: the read models hold the person (search, contacts, notifications)')
  t.same(hashesIn(await dump()), [], 'their email claim is named by a keyed hash, not a hash of the address')
  t.equal(await claimHolder(store, 'contact_email', acme.orgId, person.email), contact, 'and holds the address')
  t.equal(await storedFiles(), 1, 'and the file store their file')
  t.notMatch(JSON.stringify((await database.db.selectFrom('events').select('data').execute()).map((row) => row.data)), new RegExp(mark), 'even before, the log holds none of it in clear')

  t.test('admins only; an unknown kind is a 400; another organization\'s or a missing person a 404', async (t) => {
    t.equal((await erase(alice.headers, 'contact', contact)).statusCode, 403)
    t.equal((await erase(globex.admin.headers, 'contact', contact)).statusCode, 404)
    t.equal((await erase(admin, 'contact', randomUUID())).statusCode, 404)
    t.equal((await erase(admin, 'lead', contact)).statusCode, 404, 'a contact is no lead')
    t.match((await erase(admin, 'account', contact)).json(), { error: true, errors: { kind: [String] } })
    t.equal((await erase(admin, 'contact', 'not-a-uuid')).statusCode, 400)
  })

  const exportOf = (headers: Headers, kind: string, id: string) => app.inject({ url: `/api/privacy/subjects/${kind}/${id}/export/`, headers })

  t.test('the subject-access export hands over every personal field, with when and by whom', async (t) => {
    const res = await exportOf(admin, 'contact', contact)
    t.equal(res.statusCode, 200, res.body)
    const answer = res.json()
    t.same(leftIn(res.body).sort(), [...strings].sort(), 'every string of the person is in it')
    t.match(answer, { kind: 'contact', subject_id: contact, events: [{ stream: `contact-${contact}`, revision: 0, type: 'ContactCreated', by: acme.admin.profileId, fields: person }] })
    t.same(answer.events.map((e: { type: string }) => e.type), ['ContactCreated', 'ContactUpdated', 'ContactCommentAdded', 'ContactAttachmentAdded'], 'only the events that hold personal data')
    t.equal((await exportOf(alice.headers, 'contact', contact)).statusCode, 403, 'admins only')
    t.equal((await exportOf(globex.admin.headers, 'contact', contact)).statusCode, 404, 'another organization')
    t.equal((await exportOf(admin, 'lead', contact)).statusCode, 404, 'a contact is no lead')
  })

  t.test('answers the receipt once complete; a second request the same receipt', async (t) => {
    const first = await erase(admin, 'contact', contact)
    t.equal(first.statusCode, 201, first.body)
    const receipt = first.json()
    t.match(receipt, {
      id: String,
      kind: 'contact',
      subject_id: contact,
      erased_by: acme.admin.profileId,
      erased: { fields: ['address_line', 'city', 'comment', 'description', 'email', 'file_name', 'first_name', 'last_name', 'phone'], events: 4, reads_as: ERASED },
      kept: [{ what: String, ground: String }],
      key_backups_expire_at: '2026-12-27T09:00:00.000Z',
    })
    t.match(receipt.copies, [{ copy: 'event log' }, {}, {}, { copy: 'attached files', handling: /^1 file/ }], 'the attached file was deleted')
    t.equal(await storedFiles(), 0, 'and is gone from the file store')
    const copies = receipt.copies.map((c: { copy: string }) => c.copy)
    for (const copy of ['event log', 'webhook delivery logs', 'read model contacts', 'read model search', 'read model notifications', 'read model dashboard_activity']) t.ok(copies.includes(copy), copy)
    const handling = (copy: string) => receipt.copies.find((c: { copy: string }) => c.copy === copy)?.handling
    t.match(handling('read model contacts'), /^Blanked at once/, 'a read model holding the person: blanked')
    t.match(handling('read model case_mail_messages'), /^Holds none/, 'one declared to keep none of their fields (it reads their mail): holds none, not blanked')
    t.notMatch(first.body, new RegExp(mark), 'the receipt holds no personal value')
    const again = await erase(admin, 'contact', contact)
    t.equal(again.statusCode, 200)
    t.same(again.json(), receipt)
    t.match((await app.inject({ url: '/api/privacy/erasures/', headers: admin })).json(), { count: 1, results: [receipt] })
    t.same((await app.inject({ url: `/api/privacy/erasures/${receipt.id}/`, headers: admin })).json(), receipt)
    t.equal((await app.inject({ url: `/api/privacy/erasures/${receipt.id}/`, headers: globex.admin.headers })).statusCode, 404)
    t.equal((await app.inject({ url: '/api/privacy/erasures/', headers: alice.headers })).statusCode, 403)
    const history = (await app.inject({ url: '/api/events/?type=SubjectErased', headers: admin })).json()
    t.match(history.events, [{ stream: `erasure-contact-${contact}`, data: { subject_id: contact, by: acme.admin.profileId } }], 'history shows who erased whom and when')
  })

  const nothingLeft = async (t: Test) => {
    t.equal((await exportOf(admin, 'contact', contact)).statusCode, 410, 'the export: gone')
    const after = await dump()
    t.same(leftIn(after), [], 'no string of the person in any row of the database')
    t.same(hashesIn(after), [], 'nor a hash of their address')
    t.equal(await claimHolder(store, 'contact_email', acme.orgId, person.email), null, 'their email claim is released')
    const ndjson = await exported()
    t.same(leftIn(ndjson), [], 'none in an NDJSON export')
    t.match(ndjson, JSON.stringify({ first_name: ERASED }).slice(1, -1), 'the export shows where they were: a typed tombstone')
    const feed = (await app.inject({ url: '/api/events/?type=ContactCreated', headers: admin })).json()
    t.match(feed.events.find((e: { stream: string }) => e.stream === `contact-${contact}`), { data: { first_name: ERASED, email: ERASED, do_not_call: false } }, 'the event feed too')
    const shown = (await app.inject({ url: `/api/contacts/${contact}/`, headers: admin })).json()
    const blank = READ_MODEL_ERASED
    t.match(shown.contact_obj, { id: contact, first_name: blank, last_name: blank, email: blank, phone: blank, description: blank, erased: true }, 'the read model: blank strings, the type the apps cast them to; the record says it was erased')
    t.same(leftIn(JSON.stringify(shown)), [], 'none through the API')
    t.same((await app.inject({ url: `/api/search/?q=${person.first_name}`, headers: admin })).json().results, [], 'search finds nothing')
    const dealShown = await app.inject({ url: `/api/opportunities/${deal}/`, headers: admin })
    t.equal(dealShown.statusCode, 200, 'the deal still answers')
    t.match(dealShown.body, contact, 'and still names its contact')
    t.match(dealShown.body, '1200.50', 'with its amount')
    const tombstone = { id: contact, erased: true, first_name: blank }
    t.match(dealShown.json().opportunity_obj.contacts, [{ ...tombstone, email: blank }], "its contact: a tombstone beside the id, the names still strings (the apps' casts)")
    const taskShown = await app.inject({ url: `/api/tasks/${task}/`, headers: admin })
    t.equal(taskShown.statusCode, 200, 'the task still answers')
    t.match(taskShown.json().task_obj.contacts, [{ ...tombstone, primary_email: blank }], 'with its contact as a tombstone')
    t.match((await app.inject({ url: `/api/invoices/${invoice}/`, headers: admin })).json().invoice.contact, { ...tombstone, email: blank }, "an invoice's contact too")
    // Where a record names the person by a plain id and a name string, the mark sits beside them.
    const listed = async (url: string, id: string, headers = admin) => (await app.inject({ url, headers })).json().results.find((row: { id: string }) => row.id === id)
    const named = { contact, contact_name: blank, contact_erased: true }
    t.match(await listed('/api/invoices/', invoice), named, "an invoice list's contact name: blank, marked erased")
    t.match(await listed('/api/invoices/estimates/', estimate), named, "an estimate's")
    t.match(await listed('/api/invoices/recurring/', recurring), { contact, contact_erased: true }, "a recurring invoice's (its blank name reads null, as before)")
    t.notOk('contact_erased' in (await listed('/api/invoices/', othersInvoice)), "another person's invoice carries no mark")
    const picker: { id: string; first_name: string; erased?: true }[] = (await app.inject({ url: '/api/accounts/', headers: admin })).json().contacts
    t.match(picker.find((c) => c.id === contact), { first_name: blank, erased: true }, "the account form's contact picker")
    t.notOk('erased' in picker.find((c) => c.id === other)!, 'beside other contacts unmarked')
    const entries = (await app.inject({ url: `/api/activities/?entity_id=${contact}`, headers: admin })).json().activities
    t.ok(entries.length > 0 && entries.every((entry: { entity_name: string; entity_erased?: true }) => entry.entity_name === blank && entry.entity_erased === true), "the activity feed's entries about the person: a blank name, marked")
    t.ok((await app.inject({ url: `/api/activities/?entity_id=${other}`, headers: admin })).json().activities.every((entry: object) => !('entity_erased' in entry)), "other people's unmarked")
    const notices = (await app.inject({ url: '/api/notifications/', headers: alice.headers })).json().results.filter((n: { entity_id: string }) => n.entity_id === contact)
    t.match(notices, [{ entity_name: blank, entity_erased: true }], 'the notification of the mention: a blank name, marked')
    const otto = (await app.inject({ url: `/api/contacts/${other}/`, headers: admin })).json().contact_obj
    t.match(otto, { first_name: 'Otto', email: 'otto@mail.test' }, 'other people are untouched')
    t.notOk('erased' in otto, 'and carry no mark')
  }

  t.test('afterwards nothing personal is readable anywhere, and nothing breaks', nothingLeft)

  t.test('…also after every read model is rebuilt from the log', async (t) => {
    // The erasure handlers blanked at once what a rebuild makes of the erased events: the same rows.
    await rebuildEqualsLive(t, { db: database.db, store }, allProjectors.filter(erasesSubjects))
    for (const projector of allProjectors.filter((projector) => !erasesSubjects(projector))) await rebuildProjection(database.db, store, projector)
    await nothingLeft(t)
    await rebuildEqualsLive(t, { db: database.db, store }, erasuresProjector)
  })

  t.test('a lead is erased the same way', async (t) => {
    const lead: string = (await ok('POST', '/api/leads/', admin, { first_name: `Lena${mark}`, email: `lena.${mark}@mail.test`, company_name: 'Kiruna Mining', rating: 'hot', status: 'assigned' })).id
    await ok('PATCH', `/api/leads/${lead}/`, admin, { last_name: `Lund${mark}` })
    const followUp: string = (await ok('POST', '/api/tasks/', admin, { title: 'Follow up', lead })).id
    const receipt = await erase(admin, 'lead', lead)
    t.equal(receipt.statusCode, 201, receipt.body)
    t.match(receipt.json(), { kind: 'lead', erased: { fields: ['email', 'first_name', 'last_name'], events: 2 } })
    t.notMatch(await dump(), new RegExp(`(Lena|lena\\.|Lund)${mark}`), 'nothing of the lead left')
    t.match((await app.inject({ url: `/api/leads/${lead}/`, headers: admin })).json().lead_obj, { first_name: READ_MODEL_ERASED, last_name: READ_MODEL_ERASED, email: READ_MODEL_ERASED, company_name: 'Kiruna Mining', erased: true }, 'the company is no person: kept')
    t.match((await app.inject({ url: `/api/tasks/${followUp}/`, headers: admin })).json().task_obj.lead, { id: lead, name: 'Kiruna Mining', first_name: READ_MODEL_ERASED, erased: true }, "a task's lead: a tombstone beside the id")
    const hot = (await app.inject({ url: '/api/dashboard/', headers: admin })).json().hot_leads.find((l: { id: string }) => l.id === lead)
    t.match(hot, { first_name: READ_MODEL_ERASED, erased: true }, "the dashboard's hot leads: blank names, marked")
  })

  t.test("a web form's answers go with the lead they made (sealed under the lead's key, on the submission's own stream)", async (t) => {
    const form = (await ok('POST', '/api/webforms/', admin, { name: 'Erasable' }))
    await ok('POST', `/api/webforms/${form.id}/publish/`, admin, {})
    const answers = { first_name: `Wera${mark}`, email: `wera.${mark}@mail.test`, message: `Call Wera${mark} after six` }
    const submitted = await app.inject({ method: 'POST', url: form.embed.submit_path, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams(answers).toString() })
    t.equal(submitted.statusCode, 200, submitted.body)
    const [submission] = (await app.inject({ url: `/api/webforms/${form.id}/submissions/`, headers: admin })).json().results
    t.equal((await erase(admin, 'lead', submission.lead_id)).statusCode, 201)
    t.notMatch(await dump(), new RegExp(`(Wera|wera\\.)${mark}`), "nothing of the visitor's answers left, in the log or the submissions")
    const [after] = (await app.inject({ url: `/api/webforms/${form.id}/submissions/`, headers: admin })).json().results
    t.match(after, { id: submission.id, lead_id: submission.lead_id }, 'the submission itself stays')
  })

  t.test("a case form's answers go with its submitter's contact", async (t) => {
    const form = await ok('POST', '/api/webforms/', admin, { name: 'Erasable support', target: 'case' })
    await ok('POST', `/api/webforms/${form.id}/publish/`, admin, {})
    const answers = { first_name: `Vera${mark}`, email: `vera.${mark}@mail.test`, subject: 'Broken printer' }
    const submitted = await app.inject({ method: 'POST', url: form.embed.submit_path, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams(answers).toString() })
    t.equal(submitted.statusCode, 200, submitted.body)
    const [submission] = (await app.inject({ url: `/api/webforms/${form.id}/submissions/`, headers: admin })).json().results
    t.equal((await erase(admin, 'contact', submission.contact_id)).statusCode, 201)
    t.notMatch(await dump(), new RegExp(`(Vera|vera\\.)${mark}`), "nothing of the submitter left, in the log, the contact or the submissions")
    t.match((await app.inject({ url: `/api/webforms/${form.id}/submissions/`, headers: admin })).json().results[0], { id: submission.id, case_id: submission.case_id, answers: { first_name: READ_MODEL_ERASED } })
  })

  t.test("a member's profile: deactivated and blanked, their account too when it is theirs alone", async (t) => {
    await database.db.updateTable('users').set({ first_name: `Bo${mark}`, last_name: `Berg${mark}` }).where('id', '=', bob.userId).execute()
    await database.db.updateTable('profiles').set({ phone: `+46 9 ${mark}` }).where('id', '=', bob.profileId).execute()
    t.equal((await app.inject({ url: '/api/contacts/', headers: bob.headers })).statusCode, 200, 'before: they sign in')
    t.equal((await erase(admin, 'user', acme.admin.profileId)).statusCode, 400, 'not the profile one acts with')
    t.equal((await erase(globex.admin.headers, 'user', bob.profileId)).statusCode, 404, "another organization's member")
    const first = await erase(admin, 'user', bob.profileId)
    t.equal(first.statusCode, 201, first.body)
    t.match(first.json(), { kind: 'user', subject_id: bob.profileId, erased: { fields: ['email', 'first_name', 'last_name', 'phone'], events: 0 }, copies: [{ copy: 'member profile' }] })
    t.same((await erase(admin, 'user', bob.profileId)).json(), first.json(), 'asked again: the same receipt')
    t.notMatch(await dump(), new RegExp(`(Bo|Berg|9 )${mark}|bob@acme`), 'nothing of theirs left in any table')
    t.not((await app.inject({ url: '/api/contacts/', headers: bob.headers })).statusCode, 200, 'their tokens no longer work')
  })

  t.test("an erased person's email is free again (their claim on it was released)", async (t) => {
    t.equal((await app.inject({ method: 'POST', url: '/api/contacts/', headers: admin, payload: { first_name: 'Again', email: person.email.toUpperCase() } })).statusCode, 200)
    t.equal((await app.inject({ method: 'POST', url: '/api/leads/', headers: admin, payload: { first_name: 'Again', email: `lena.${mark}@mail.test` } })).statusCode, 200)
  })
})


