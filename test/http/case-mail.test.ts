import { randomUUID } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { caseStreams } from '../../src/commands/case/case.ts'
import { inboundSignature } from '../../src/commands/case-mail/mailbox-secrets.ts'
import type { MailMessage, MailTransport } from '../../src/identity/mail.ts'
import { caseMailMessagesProjector } from '../../src/projections/case-mail/messages.ts'
import { caseMailSettingsProjector } from '../../src/projections/case-mail/mailboxes.ts'
import { MAX_INBOUND_BYTES } from '../../src/http/case-mail/inbound.ts'
import { FIXED_NOW } from '../helpers/app.ts'
import { givenTwoOrganizations } from '../helpers/fixtures.ts'
import { rebuildEqualsLive } from '../helpers/read-models.ts'

type Headers = Record<string, string>
const SECRET = 'a-mailbox-secret-of-at-least-32-characters'
const DAY = 86_400_000
// Real messages, as a mail server hands them over (test/fixtures/mail/; the tests run compiled, from the repository root).
const fixture = (name: string) => readFile(join(process.cwd(), 'test/fixtures/mail', name))
/** A plain message as a mail client writes it (CRLF lines). */
const mail = (headers: Record<string, string>, body = 'Hello') => Buffer.from([...Object.entries({ From: 'Dana Scully <dana@customer.test>', To: 'support@acme.test', Date: 'Sun, 22 Nov 2026 10:00:00 +0000', ...headers }).map(([k, v]) => `${k}: ${v}`), '', body, ''].join('\r\n'))

t.test('inbound mail: /api/cases/mailboxes/, /api/cases/inbound/{mailbox_id}/, /api/cases/reopen-policy/', async (t) => {
  let now = FIXED_NOW
  const outbox: MailMessage[] = []
  const transport: MailTransport = { kind: 'log', send: (message) => (outbox.push(message), Promise.resolve()) }
  const { app, database, store, acme, globex, alice } = await givenTwoOrganizations(t, { clock: () => now, mail: transport })
  const admin = acme.admin.headers
  const call = (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, headers: Headers, payload?: object) => app.inject({ method, url, headers, ...(payload && { payload }) })
  const deliver = (mailboxId: string, raw: Buffer, secret = SECRET) => app.inject({ method: 'POST', url: `/api/cases/inbound/${mailboxId}/`, headers: { 'content-type': 'message/rfc822', 'x-inbound-signature': inboundSignature(secret, raw) }, payload: raw })
  const caseEvents = async (id: string) => (await store.readStream(caseStreams.stream(id))).map((e) => e.type)
  const eventCount = async () => Number((await database.db.selectFrom('events').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n)

  const created = await call('POST', '/api/cases/mailboxes/', admin, { address: 'Support@Acme.test', provider: 'ses', default_priority: 'High', default_case_type: 'Question', default_assignee_id: alice.profileId, is_active: true, webhook_secret: SECRET })
  t.equal(created.statusCode, 201, created.body)
  const mailbox = created.json()
  const unsigned = (await call('POST', '/api/cases/mailboxes/', admin, { address: 'sales@acme.test' })).json()

  t.test('mailboxes: the original shapes; the secret is never answered, whether one is set only to admins', async (t) => {
    t.match(mailbox, { address: 'support@acme.test', provider: 'ses', has_webhook_secret: true, has_topic_arn: true, default_priority: 'High', default_case_type: 'Question', default_assignee: { id: alice.profileId, user_details: { email: 'alice@acme.test', name: String } }, is_active: true })
    t.notOk('webhook_secret' in mailbox)
    t.match(unsigned, { has_webhook_secret: false, has_topic_arn: false, default_priority: 'Normal', default_assignee: null })
    const asMember = (await call('GET', '/api/cases/mailboxes/', alice.headers)).json()
    t.match(asMember, { totals: { count: 2, active: 2, cases_last_30d: 0 } })
    t.same(asMember.mailboxes.map((m: { address: string }) => m.address), ['sales@acme.test', 'support@acme.test'])
    t.notOk(JSON.stringify(asMember).includes(SECRET))
    t.notOk('has_webhook_secret' in asMember.mailboxes[0], 'a member is not told whether a secret is set')
    t.equal((await call('POST', '/api/cases/mailboxes/', alice.headers, { address: 'x@acme.test' })).statusCode, 403)
    t.match((await call('POST', '/api/cases/mailboxes/', admin, { address: 'support@acme.test' })).json(), { errors: { address: [String] } }, 'an address is unique in the organization')
    t.match((await call('POST', '/api/cases/mailboxes/', admin, { address: 'y@acme.test', webhook_secret: 'short' })).json(), { errors: { webhook_secret: [String] } })
    t.equal((await call('GET', `/api/cases/mailboxes/${mailbox.id}/`, globex.admin.headers)).statusCode, 404)
    const put = await call('PUT', `/api/cases/mailboxes/${unsigned.id}/`, admin, { is_active: false })
    t.match(put.json(), { address: 'sales@acme.test', is_active: false }, 'PUT is partial')
    t.equal((await call('DELETE', `/api/cases/mailboxes/${unsigned.id}/`, admin)).json().message, 'Mailbox deleted')
    t.equal((await call('GET', `/api/cases/mailboxes/${unsigned.id}/`, admin)).statusCode, 404)
  })

  let caseId = ''
  t.test('a new message opens a case with the mailbox defaults, its attachment in the file store, and is acknowledged', async (t) => {
    const raw = await fixture('new-ticket.eml')
    const res = await deliver(mailbox.id, raw)
    t.equal(res.statusCode, 200, res.body)
    t.match(res.json(), { ok: true, created_case: true, dropped: false, duplicate: false })
    caseId = res.json().case_id
    const detail = (await call('GET', `/api/cases/${caseId}/`, admin)).json()
    t.match(detail, { cases_obj: { name: 'Printer jams on page two', priority: 'High', case_type: 'Question' } })
    const events = await caseEvents(caseId)
    t.same(events.slice(0, 2), ['CaseCreated', 'CaseSlaActivated'])
    t.ok(events.includes('CaseEmailReceived') && events.includes('CaseAttachmentAdded'))
    const received = (await store.readStream(caseStreams.stream(caseId))).find((e) => e.type === 'CaseEmailReceived')!.data as Record<string, unknown>
    t.match(received, { from_email: 'dana@customer.test', from_name: 'Dana Scully', text: /Café floor/, contact_id: null, threaded_by: null, auto_reply: { status: 'sent' } })
    const stored = await database.db.selectFrom('events').select('data').where('event_type', '=', 'CaseEmailReceived').executeTakeFirstOrThrow()
    t.notOk(JSON.stringify(stored.data).includes('dana@customer.test'), "the sender's address is sealed in the log")
    t.equal(outbox.length, 1)
    t.match(outbox[0], { to: 'dana@customer.test', subject: 'Re: Printer jams on page two', headers: { 'Auto-Submitted': 'auto-replied', 'In-Reply-To': '<first-1@customer.test>' } })
    t.match(outbox[0]!.messageId, new RegExp(`^case-${caseId}\\.[0-9a-f]{24}@`))
  })

  t.test('a repeat of the Message-ID writes nothing and answers the first outcome', async (t) => {
    const before = await eventCount()
    const res = await deliver(mailbox.id, await fixture('new-ticket.eml'))
    t.match(res.json(), { case_id: caseId, created_case: true, duplicate: true })
    t.equal(await eventCount(), before)
  })

  t.test('threading: our signed token, then In-Reply-To or References; a token signed for another organization threads nothing', async (t) => {
    const token = outbox[0]!.messageId!
    const byToken = await deliver(mailbox.id, mail({ 'Message-ID': '<r1@customer.test>', Subject: 'Re: x', 'In-Reply-To': `<${token}>` }))
    t.match(byToken.json(), { case_id: caseId, created_case: false })
    const byReferences = await deliver(mailbox.id, mail({ 'Message-ID': '<r2@customer.test>', Subject: 'Re: x', References: '<unknown@elsewhere.test> <first-1@customer.test>' }))
    t.match(byReferences.json(), { case_id: caseId, created_case: false })
    const forged = token.replace(/\.[0-9a-f]{24}@/, '.000000000000000000000000@')
    const fresh = await deliver(mailbox.id, mail({ 'Message-ID': '<r3@customer.test>', Subject: 'Re: x', 'In-Reply-To': `<${forged}>` }))
    t.match(fresh.json(), { created_case: true }, 'a forged token opens a new case')
    const threaded = (await store.readStream(caseStreams.stream(caseId))).filter((e) => e.type === 'CaseEmailReceived').map((e) => (e.data as { threaded_by: string | null }).threaded_by)
    t.same(threaded, [null, 'token', 'headers'])
  })

  t.test('RFC 3834: auto-replies, bounces and list mail are dropped as recorded events, touching no case', async (t) => {
    const before = (await caseEvents(caseId)).length
    for (const [file, reason] of [['auto-reply.eml', 'auto_submitted'], ['bounce.eml', 'bounce'], ['list.eml', 'precedence_bulk']] as const) {
      const res = await deliver(mailbox.id, await fixture(file))
      t.match(res.json(), { ok: true, dropped: true, reason, case_id: null }, file)
    }
    const human = await deliver(mailbox.id, mail({ 'Message-ID': '<human-1@customer.test>', Subject: 'Re: x', 'Auto-Submitted': 'no', 'In-Reply-To': '<first-1@customer.test>' }))
    t.match(human.json(), { dropped: false, case_id: caseId }, '`Auto-Submitted: no` is a person')
    const own = await deliver(mailbox.id, mail({ 'Message-ID': '<loop@acme.test>', From: 'support@acme.test', Subject: 'x' }))
    t.match(own.json(), { dropped: true, reason: 'own_mail' })
    t.equal((await caseEvents(caseId)).length, before + 1)
    const dropped = await database.db.selectFrom('events').select('event_type').where('event_type', '=', 'InboundMailDropped').execute()
    t.equal(dropped.length, 4)
  })

  t.test('refused deliveries write nothing: unsigned (404), malformed (400), oversize (413)', async (t) => {
    const before = await eventCount()
    const raw = mail({ 'Message-ID': '<x1@customer.test>', Subject: 'x' })
    t.equal((await deliver(mailbox.id, raw, 'another-secret-of-at-least-32-characters!')).statusCode, 404)
    t.equal((await app.inject({ method: 'POST', url: `/api/cases/inbound/${mailbox.id}/`, headers: { 'content-type': 'message/rfc822' }, payload: raw })).statusCode, 404)
    t.equal((await deliver(randomUUID(), raw)).statusCode, 404)
    t.equal((await deliver(mailbox.id, Buffer.from('just some text, no headers\r\n'))).statusCode, 400)
    t.equal((await deliver(mailbox.id, mail({ Subject: 'no id' }))).statusCode, 400, 'no Message-ID')
    t.equal((await deliver(mailbox.id, mail({ 'Message-ID': '<x2@customer.test>', From: 'nobody' }))).statusCode, 400, 'no address in From')
    const big = Buffer.concat([mail({ 'Message-ID': '<big@customer.test>', Subject: 'big' }), Buffer.alloc(MAX_INBOUND_BYTES, 'a')])
    t.equal((await deliver(mailbox.id, big)).statusCode, 413)
    t.equal((await app.inject({ method: 'POST', url: `/api/cases/inbound/${mailbox.id}/`, headers: { 'content-type': 'application/json' }, payload: { raw: 'x' } })).statusCode, 404, 'a body not sent raw cannot be signed')
    t.equal(await eventCount(), before)
  })

  t.test('a customer reply ends a Pending pause in the same append as the message', async (t) => {
    t.equal((await call('PATCH', `/api/cases/${caseId}/`, admin, { status: 'Pending' })).statusCode, 200)
    now = new Date(FIXED_NOW.getTime() + 3_600_000)
    const res = await deliver(mailbox.id, mail({ 'Message-ID': '<answer-1@customer.test>', Subject: 'Re: x', 'In-Reply-To': '<first-1@customer.test>' }))
    t.equal(res.statusCode, 200, res.body)
    const stream = await store.readStream(caseStreams.stream(caseId))
    const message = stream.find((e) => e.type === 'CaseEmailReceived' && (e.data as { message_id: string }).message_id === 'answer-1@customer.test')!
    const sameAppend = stream.filter((e) => e.position.commit === message.position.commit).map((e) => e.type)
    t.same(sameAppend, ['CaseEmailReceived', 'CaseUpdated', 'CaseSlaResumed', 'CaseSlaResumed'])
    t.match((await call('GET', `/api/cases/${caseId}/`, admin)).json(), { cases_obj: { status: 'Assigned' } })
  })

  t.test('the reopen policy: admins only; a reply within its window reopens a closed case, one after it does not', async (t) => {
    t.equal((await call('GET', '/api/cases/reopen-policy/', alice.headers)).statusCode, 403)
    t.same((await call('GET', '/api/cases/reopen-policy/', admin)).json(), { is_enabled: true, reopen_window_days: 7, reopen_to_status: 'Pending', notify_assigned: true, reopened_last_30d: 0, replies_after_window_30d: 0, median_days_to_reply: null })
    t.match((await call('PUT', '/api/cases/reopen-policy/', admin, { reopen_window_days: 0 })).json(), { errors: { reopen_window_days: ['reopen_window_days must be between 1 and 365'] } })
    t.match((await call('PUT', '/api/cases/reopen-policy/', admin, { reopen_to_status: 'Closed' })).json(), { errors: { reopen_to_status: [String] } })
    t.same((await call('PUT', '/api/cases/reopen-policy/', admin, { reopen_window_days: 3, reopen_to_status: 'New', is_enabled: true, notify_assigned: false })).json(), { is_enabled: true, reopen_window_days: 3, reopen_to_status: 'New', notify_assigned: false })
    t.equal((await call('PATCH', `/api/cases/${caseId}/`, admin, { status: 'Closed', closed_on: '2026-11-22' })).statusCode, 200)
    now = new Date(FIXED_NOW.getTime() + 2 * DAY)
    await deliver(mailbox.id, mail({ 'Message-ID': '<late-ok@customer.test>', Subject: 'Re: x', 'In-Reply-To': '<first-1@customer.test>' }))
    t.match((await call('GET', `/api/cases/${caseId}/`, admin)).json(), { cases_obj: { status: 'New', closed_on: null } }, 'reopened to the policy status')
    t.equal(outbox.at(-1)!.subject, 'Re: x', 'the reopen is acknowledged')
    t.equal((await call('PATCH', `/api/cases/${caseId}/`, admin, { status: 'Closed', closed_on: '2026-11-24' })).statusCode, 200)
    now = new Date(FIXED_NOW.getTime() + 9 * DAY)
    await deliver(mailbox.id, mail({ 'Message-ID': '<too-late@customer.test>', Subject: 'Re: x', 'In-Reply-To': '<first-1@customer.test>' }))
    t.match((await call('GET', `/api/cases/${caseId}/`, admin)).json(), { cases_obj: { status: 'Closed' } }, 'outside the window it stays closed')
    t.match((await call('GET', '/api/cases/reopen-policy/', admin)).json(), { reopened_last_30d: 1, replies_after_window_30d: 1, median_days_to_reply: 4.5 })
  })

  t.test('acknowledgements are rate limited per recipient', async (t) => {
    const sent = outbox.length
    for (let i = 0; i < 6; i++) await deliver(mailbox.id, mail({ 'Message-ID': `<flood-${i}@customer.test>`, From: 'bot@flood.test', Subject: `ticket ${i}` }))
    t.equal(outbox.length - sent, 5, 'at most 5 an hour to one sender')
    const held = await database.db.selectFrom('case_mail_messages').select('auto_reply').where('auto_reply', '=', 'recipient_limit').execute()
    t.equal(held.length, 1)
  })

  t.test('the mailbox figures, and rebuild equals live', async (t) => {
    const list = (await call('GET', '/api/cases/mailboxes/', admin)).json()
    t.match(list.mailboxes[0], { address: 'support@acme.test', cases_last_30d: 8, last_received_at: String })
    await rebuildEqualsLive(t, { db: database.db, store }, caseMailMessagesProjector, { oneByOne: true })
    await rebuildEqualsLive(t, { db: database.db, store }, caseMailSettingsProjector, { oneByOne: true })
  })

  t.test('threading follows a merge: a reply to a duplicate lands on the case that absorbed it', async (t) => {
    const duplicate = (await deliver(mailbox.id, mail({ 'Message-ID': '<dup-1@customer.test>', From: 'fox@customer.test', Subject: 'Same printer again' }))).json().case_id as string
    const merged = await call('POST', `/api/cases/${duplicate}/merge/${caseId}/`, admin)
    t.equal(merged.statusCode, 200, merged.body)
    const reply = await deliver(mailbox.id, mail({ 'Message-ID': '<dup-2@customer.test>', From: 'fox@customer.test', Subject: 'Re: Same printer again', 'In-Reply-To': '<dup-1@customer.test>' }))
    t.match(reply.json(), { case_id: caseId, created_case: false })
  })

  t.test("a case mail opens unassigned is routed by the rules, on its mailbox and its sender's domain", async (t) => {
    const plain = (await call('POST', '/api/cases/mailboxes/', admin, { address: 'help@acme.test', webhook_secret: SECRET })).json()
    const rule = await call('POST', '/api/cases/routing-rules/', admin, { name: 'Customer mail', conditions: [{ field: 'mailbox_id', op: 'eq', value: plain.id }, { field: 'from_email_domain', op: 'eq', value: 'customer.test' }], strategy: 'direct', target_assignee_ids: [alice.profileId] })
    t.equal(rule.statusCode, 201, rule.body)
    const routed = (await deliver(plain.id, mail({ 'Message-ID': '<route-1@customer.test>', To: 'help@acme.test', Subject: 'Route me' }))).json().case_id as string
    t.same((await call('GET', `/api/cases/${routed}/`, admin)).json().cases_obj.assigned_to.map((a: { id: string }) => a.id), [alice.profileId])
    t.ok((await caseEvents(routed)).includes('CaseUpdated'), 'assigned by the system after the opening append')
    const other = (await deliver(plain.id, mail({ 'Message-ID': '<route-2@elsewhere.test>', From: 'eve@elsewhere.test', To: 'help@acme.test', Subject: 'Not mine' }))).json().case_id as string
    t.same((await call('GET', `/api/cases/${other}/`, admin)).json().cases_obj.assigned_to, [], 'another domain matches no rule')
  })
})
