import { randomUUID } from 'node:crypto'
import t from 'tap'
import { accountStream } from '../../src/commands/account/account.ts'
import { logTransport } from '../../src/identity/mail.ts'
import type { MailTransport } from '../../src/identity/mail.ts'
import { collectionClient, givenTwoOrganizations } from '../helpers/fixtures.ts'
import { silentLogger } from '../helpers/runner.ts'

/** The log transport, except that the mail server refuses any address at bounce.test. */
function observedMailer() {
  const log = logTransport(silentLogger)
  const mail: MailTransport = { kind: 'log', send: (message) => (message.to.endsWith('@bounce.test') ? Promise.reject(new Error('550 mailbox unavailable')) : log.send(message)) }
  return { mail, outbox: log.outbox }
}

t.test('POST /api/accounts/{id}/create_mail/', async (t) => {
  const { mail, outbox } = observedMailer()
  const { app, store, acme, globex, alice, bob } = await givenTwoOrganizations(t, { mail })
  const { inject, create } = collectionClient(app, '/api/accounts/')
  const account = (await create(alice.headers, { name: 'Initech' })).json().id as string
  const contact = async (headers: Record<string, string>, payload: object) => (await inject('POST', '/api/contacts/', headers, payload)).json().id as string
  const peter = await contact(alice.headers, { first_name: 'Peter', email: 'peter@initech.test', account })
  const milton = await contact(alice.headers, { first_name: 'Milton', email: 'milton@initech.test' })
  const noEmail = await contact(alice.headers, { first_name: 'Bob', last_name: 'Slydell' })
  const foreign = await contact(globex.admin.headers, { first_name: 'Hank', email: 'hank@globex.test' })
  const url = (id = account) => `/api/accounts/${id}/create_mail/`
  const message = { message_subject: 'Your TPS reports', message_body: 'Please use the new cover sheet.' }
  const mailEvents = async () => (await store.readStream(accountStream(account))).filter((event) => event.type === 'AccountEmailSent')

  t.test('any member mails the recipients, each through the mailer, and the account stream records it', async (t) => {
    const before = outbox.length
    const res = await inject('POST', url(), bob.headers, { ...message, recipients: [peter, milton] })
    t.same({ status: res.statusCode, body: res.json() }, { status: 200, body: { error: false, message: 'Mail sent to 2 contacts' } })
    t.match(res.headers['x-event-position'], /^\d+-\d+$/)
    t.same(outbox.slice(before), [
      { to: 'peter@initech.test', subject: message.message_subject, text: message.message_body },
      { to: 'milton@initech.test', subject: message.message_subject, text: message.message_body },
    ])
    const [sent, ...more] = await mailEvents()
    t.same(more, [])
    t.match(sent?.data, { email_id: String, subject: message.message_subject, body: message.message_body, recipients: [peter, milton], by: bob.profileId, at: String })
    t.notOk(JSON.stringify(sent?.data).includes('@initech.test'), 'contact ids, not addresses, in the log')
  })

  t.test('form bodies name recipients by repeating the key', async (t) => {
    const before = outbox.length
    const form = new URLSearchParams([['recipients', peter], ['message_subject', 'Form'], ['message_body', 'Sent from a form'], ['scheduled_later', 'false']])
    const res = await app.inject({ method: 'POST', url: url(), headers: { ...alice.headers, 'content-type': 'application/x-www-form-urlencoded' }, payload: form.toString() })
    t.equal(res.statusCode, 200, res.body)
    t.match(outbox.slice(before), [{ to: 'peter@initech.test', subject: 'Form' }])
  })

  t.test('recipients must be live contacts of the organization with an email: 400 naming recipients, nothing sent', async (t) => {
    const before = { mails: outbox.length, events: (await mailEvents()).length }
    const deleted = await contact(alice.headers, { first_name: 'Gone', email: 'gone@initech.test' })
    await inject('DELETE', `/api/contacts/${deleted}/`, acme.admin.headers)
    for (const recipients of [[], [peter, noEmail], [foreign], [randomUUID()], [deleted], ['not-an-id']]) {
      const res = await inject('POST', url(), alice.headers, { ...message, recipients })
      t.match({ status: res.statusCode, body: res.json() }, { status: 400, body: { error: true, errors: { recipients: [String] } } }, JSON.stringify(recipients))
    }
    t.match((await inject('POST', url(), alice.headers, { ...message, recipients: [peter, noEmail] })).json().errors.recipients[0], noEmail, 'the message names the contact')
    t.equal(outbox.length, before.mails)
    t.equal((await mailEvents()).length, before.events)
  })

  t.test('an invalid body is 400 in the error shape; scheduling is refused rather than faked', async (t) => {
    const errorsOf = async (payload: object) => (await inject('POST', url(), alice.headers, payload)).json()
    t.match(await errorsOf({ recipients: [peter], message_body: 'x' }), { error: true, errors: { message_subject: [String] } })
    t.match(await errorsOf({ recipients: [peter], message_subject: '  ', message_body: 'x' }), { error: true, errors: { message_subject: [String] } })
    t.match(await errorsOf({ recipients: [peter], message_subject: 'Two\r\nBcc: x@evil.test', message_body: 'x' }), { error: true, errors: { message_subject: ['Expected a single line.'] } })
    t.match(await errorsOf({ recipients: [peter], message_subject: 'x' }), { error: true, errors: { message_body: [String] } })
    const scheduled = await inject('POST', url(), alice.headers, { ...message, recipients: [peter], scheduled_later: true, scheduled_date_time: '2026-12-01T09:00:00Z', timezone: 'Europe/Paris' })
    t.match({ status: scheduled.statusCode, body: scheduled.json() }, { status: 400, body: { error: true, errors: { scheduled_later: [/not supported/] } } })
  })

  t.test('another organization’s or a missing account is 404, before its recipients are looked at', async (t) => {
    const before = outbox.length
    t.equal((await inject('POST', url(), globex.admin.headers, { ...message, recipients: [foreign] })).statusCode, 404)
    t.equal((await inject('POST', url(randomUUID()), alice.headers, { ...message, recipients: [peter] })).statusCode, 404)
    const deleted = (await create(alice.headers, { name: 'Deleted' })).json().id as string
    await inject('DELETE', `/api/accounts/${deleted}/`, alice.headers)
    t.equal((await inject('POST', url(deleted), alice.headers, { ...message, recipients: [peter] })).statusCode, 404, 'a deleted account')
    t.equal(outbox.length, before)
  })

  t.test('a recipient the mail server refuses: 502 naming it; the others are sent and recorded', async (t) => {
    const bounce = await contact(alice.headers, { first_name: 'Lumbergh', email: 'bill@bounce.test' })
    const before = { mails: outbox.length, events: (await mailEvents()).length }
    const res = await inject('POST', url(), alice.headers, { ...message, recipients: [bounce, peter] })
    t.match({ status: res.statusCode, body: res.json() }, { status: 502, body: { error: true, errors: { recipients: [new RegExp(bounce)] } } })
    t.match(outbox.slice(before.mails), [{ to: 'peter@initech.test' }])
    const events = await mailEvents()
    t.equal(events.length, before.events + 1)
    t.same((events.at(-1)?.data as { recipients: string[] }).recipients, [peter])
    const none = await inject('POST', url(), alice.headers, { ...message, recipients: [bounce] })
    t.equal(none.statusCode, 502)
    t.equal((await mailEvents()).length, before.events + 1, 'nothing went out, nothing recorded')
  })
})
