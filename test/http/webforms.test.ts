import { Writable } from 'node:stream'
import pino from 'pino'
import t from 'tap'
import { webFormsProjector } from '../../src/projections/webform/webforms.ts'
import { givenTwoOrganizations } from '../helpers/fixtures.ts'
import type { Headers } from '../helpers/fixtures.ts'
import { rebuildEqualsLive } from '../helpers/read-models.ts'
import { eventCount } from '../helpers/route-table.ts'

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE'

t.test('web forms: designed by admins, embedded and submitted by the public', async (t) => {
  const lines: string[] = []
  const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) })
  // AUTH_RATE_LIMIT_MAX 3: six posts a minute per client IP and form.
  const { app, database, store, acme, globex, alice } = await givenTwoOrganizations(t, { env: { AUTH_RATE_LIMIT_MAX: '3' }, logger: pino({ level: 'trace' }, sink) })
  const admin = acme.admin.headers
  const call = (method: Method, url: string, headers: Headers, payload?: object) => app.inject({ method, url, headers, ...(payload && { payload }) })
  const design = async (payload: object) => {
    const res = await call('POST', '/api/webforms/', admin, payload)
    t.equal(res.statusCode, 201, res.body)
    return res.json()
  }
  let ip = 0
  // A fresh client address per post, so the per-IP budget only matters where a test means it.
  const submit = (form: { embed: { submit_path: string } }, payload: Record<string, string>, headers: Headers = {}, remoteAddress = `10.1.0.${++ip}`) =>
    app.inject({ method: 'POST', url: form.embed.submit_path, remoteAddress, headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams(payload).toString() })
  const leadsCount = async () => (await call('GET', '/api/leads/?limit=1', admin)).json().open_leads.leads_count as number

  const form = await design({ name: 'Contact us', assigned_to: [alice.profileId], consent: { text: 'You may contact me about my request.', purpose: 'Sales follow-up' } })

  t.test('an admin designs a form: a contact form by default, unpublished; members may not', async (t) => {
    t.match(form, { name: 'Contact us', target: 'lead', is_published: false, success_message: String, consent: { purpose: 'Sales follow-up', legal_basis: 'consent', version: 1 }, created_by: acme.admin.profileId })
    t.same(form.fields.map((f: { key: string }) => f.key), ['first_name', 'last_name', 'email', 'phone', 'message'])
    t.equal(form.embed.submit_path, `/api/public/forms/${acme.orgId}/${form.id}/submit/`)
    t.equal((await call('POST', '/api/webforms/', alice.headers, { name: 'Mine' })).statusCode, 403)
    t.equal((await call('GET', '/api/webforms/', alice.headers)).statusCode, 403, 'submissions are personal data: members read no form')
    t.match((await call('GET', '/api/webforms/', admin)).json(), { count: 1, results: [{ id: form.id }] })
    t.match((await call('GET', '/api/webforms/', globex.admin.headers)).json(), { count: 0, results: [] })
    t.equal((await call('GET', `/api/webforms/${form.id}/`, globex.admin.headers)).statusCode, 404)
  })

  t.test('bad designs are a 400 naming what is wrong', async (t) => {
    const noName = await call('POST', '/api/webforms/', admin, { name: 'X', fields: [{ key: 'email', label: 'Email', type: 'email', maps_to: 'email' }] })
    t.match(noName.json(), { error: true, errors: { fields: [/needs a name/] } })
    t.match((await call('POST', '/api/webforms/', admin, { name: 'X', fields: [{ key: 'Bad Key', label: 'x' }] })).json(), { errors: { 'fields.0.key': [String] } })
    t.match((await call('POST', '/api/webforms/', admin, { name: 'X', allowed_origins: ['https://a.test/page'] })).json(), { errors: { 'allowed_origins.0': [String] } })
    t.match((await call('POST', '/api/webforms/', admin, { name: 'X', assigned_to: [globex.admin.profileId] })).json(), { errors: { assigned_to: [String] } }, "another organization's profile")
    t.match((await call('PUT', `/api/webforms/${form.id}/`, admin, { fields: [] })).json(), { errors: { fields: [String] } })
  })

  t.test('the public side answers 404 until published, and only under its own organization', async (t) => {
    for (const path of Object.values(form.embed) as string[]) t.equal((await app.inject({ method: path.endsWith('submit/') ? 'POST' : 'GET', url: path, payload: path.endsWith('submit/') ? {} : undefined })).statusCode, 404, `${path} while unpublished`)
    const on = await call('POST', `/api/webforms/${form.id}/publish/`, admin)
    t.match(on.json(), { is_published: true, published_at: String })
    t.equal((await call('POST', `/api/webforms/${form.id}/publish/`, admin)).statusCode, 200, 'publishing twice')
    t.equal((await call('POST', `/api/webforms/${form.id}/publish/`, globex.admin.headers)).statusCode, 404)
    const script = await app.inject({ url: form.embed.script_path })
    t.equal(script.statusCode, 200)
    t.match(script.headers['content-type'], /^application\/javascript/)
    t.equal(script.headers['cross-origin-resource-policy'], 'cross-origin', 'loadable from any site')
    t.match(script.body, /"name":"Contact us"/)
    t.match(script.body, /"honeypot":"website_url"/)
    const page = await app.inject({ url: form.embed.page_path })
    t.match(page.headers['content-type'], /^text\/html/)
    t.match(page.headers['content-security-policy'], /frame-ancestors \*/)
    t.notOk(page.headers['x-frame-options'], 'framable')
    t.match(page.body, new RegExp(`<script src="${form.embed.script_path}"></script>`))
    const foreign = form.embed.script_path.replace(acme.orgId, globex.orgId)
    t.equal((await app.inject({ url: foreign })).statusCode, 404, "another organization's id in the path")
  })

  t.test('a submission creates the lead through the lead use case, once per idempotency key, and records the consent', async (t) => {
    const before = await leadsCount()
    const answers = { first_name: 'Ada', last_name: 'Lovelace', email: 'ada@visitor.test', message: 'Call me', consent: 'on', idempotency_key: 'k-1', page_url: 'https://www.acme.test/contact?ref=secret' }
    const res = await submit(form, answers, { origin: 'https://www.acme.test' })
    t.equal(res.statusCode, 200, res.body)
    t.match(res.json(), { error: false, message: form.success_message, submission_id: String })
    t.equal(res.headers['access-control-allow-origin'], '*')
    t.notOk(res.headers['x-event-position'], 'a stranger is not told the log position')
    const events = await eventCount(database.db)
    const again = await submit(form, answers)
    t.same(again.json(), res.json(), 'a repeat answers the same submission')
    t.equal(await eventCount(database.db), events, 'and appends nothing')
    t.equal(await leadsCount(), before + 1, 'one lead')
    const [submission] = (await call('GET', `/api/webforms/${form.id}/submissions/`, admin)).json().results
    t.match(submission, { id: res.json().submission_id, status: 'accepted', outcome: 'created', lead_id: String, source_page: 'https://www.acme.test/contact', consent: { purpose: 'Sales follow-up', legal_basis: 'consent', version: 1, text_sha256: /^[0-9a-f]{64}$/ } })
    t.same(submission.answers, { first_name: 'Ada', last_name: 'Lovelace', email: 'ada@visitor.test', message: 'Call me' })
    const lead = (await call('GET', `/api/leads/${submission.lead_id}/`, admin)).json().lead_obj
    t.match(lead, { first_name: 'Ada', last_name: 'Lovelace', email: 'ada@visitor.test', description: 'Call me', source: 'other', created_by: null })
    t.equal((await call('GET', `/api/leads/${submission.lead_id}/`, alice.headers)).statusCode, 200, 'assigned to the form\'s assignee')

    const returning = await submit(form, { ...answers, email: 'ADA@visitor.test', idempotency_key: 'k-2' })
    t.equal(returning.statusCode, 200, 'a known email is no error (a stranger learns nothing)')
    t.equal(await leadsCount(), before + 1, 'and no second lead')
    const listed = (await call('GET', `/api/webforms/${form.id}/submissions/`, admin)).json()
    t.match(listed, { count: 2 })
    t.match(listed.results.find((s: { outcome: string }) => s.outcome === 'matched'), { lead_id: submission.lead_id }, 'recorded against the known lead')
  })

  t.test('bad answers are a 400 naming each field key; consent is required when the form asks', async (t) => {
    const res = await submit(form, { first_name: '', email: 'nope', phone: 'call me' })
    t.equal(res.statusCode, 400)
    t.same(Object.keys(res.json().errors).sort(), ['consent', 'email', 'first_name', 'phone'], 'every problem at once, the missing consent too')
    t.equal(res.headers['access-control-allow-origin'], '*', "the embedding page's script reads the errors")
    t.match((await submit(form, { first_name: 'Bo', email: 'bo@visitor.test' })).json(), { errors: { consent: [String] } })
    t.match((await submit(form, { first_name: 'Bo', email: 'bo@visitor.test', consent: 'off' })).json(), { errors: { consent: [String] } }, 'an unticked box, as the embed posts it')
  })

  t.test('spam: the honeypot is answered like a success, quarantined, and creates nothing', async (t) => {
    const before = await leadsCount()
    const res = await submit(form, { first_name: 'Bot', email: 'bot@spam.test', consent: 'on', website_url: 'http://spam.test' })
    t.match(res.json(), { error: false, message: form.success_message })
    t.equal(await leadsCount(), before, 'no lead')
    t.match((await call('GET', `/api/webforms/${form.id}/submissions/?status=quarantined`, admin)).json(), { count: 1, results: [{ status: 'quarantined', reason: 'honeypot', lead_id: null, answers: { first_name: 'Bot' } }] })
  })

  t.test('allowed origins: a browser on another site is refused; a server-to-server post is not checked', async (t) => {
    const strict = await design({ name: 'Strict', allowed_origins: ['https://www.acme.test/'] })
    t.same(strict.allowed_origins, ['https://www.acme.test'])
    await call('POST', `/api/webforms/${strict.id}/publish/`, admin)
    const answers = { first_name: 'Cy', email: 'cy@visitor.test' }
    t.equal((await submit(strict, answers, { origin: 'https://evil.test' })).statusCode, 403)
    t.equal((await submit(strict, answers, { origin: 'null' })).statusCode, 403, 'a sandboxed frame is no allowed site either')
    t.equal((await submit(strict, { ...answers, idempotency_key: 'same' }, { origin: 'https://www.acme.test' })).statusCode, 200)
    t.equal((await submit(strict, { ...answers, idempotency_key: 'same' })).statusCode, 200)
    t.match((await app.inject({ url: strict.embed.page_path })).headers['content-security-policy'], /frame-ancestors https:\/\/www\.acme\.test(;|$)/, 'framed only by the allowed site')
  })

  t.test('rate limits: six posts a minute per client IP and form, then 429 with Retry-After', async (t) => {
    const statuses: number[] = []
    let last
    for (let i = 0; i < 7; i++) statuses.push((last = await submit(form, {}, {}, '10.9.9.9')).statusCode)
    t.same(statuses, [400, 400, 400, 400, 400, 400, 429])
    t.ok(last!.headers['retry-after'])
    t.equal((await submit(form, {}, {}, '10.9.9.10')).statusCode, 400, 'another client is not held back')
  })

  t.test('analytics come from the submissions', async (t) => {
    t.match((await call('GET', `/api/webforms/${form.id}/analytics/`, admin)).json(), { submissions: 2, leads_created: 1, leads_matched: 1, quarantined: 1, last_submission_at: String })
    const { daily } = (await call('GET', `/api/webforms/${form.id}/analytics/`, admin)).json()
    t.equal(daily.length, 30)
    t.same(daily.at(-1), { date: '2026-11-22', accepted: 2, quarantined: 1 })
  })

  t.test('changes, the off switch and delete', async (t) => {
    const changed = await call('PUT', `/api/webforms/${form.id}/`, admin, { name: 'Talk to us', consent: { text: 'New wording.', purpose: 'Sales follow-up' } })
    t.match(changed.json(), { name: 'Talk to us', is_published: true, consent: { version: 2 } })
    t.match((await app.inject({ url: form.embed.script_path })).body, /Talk to us/, 'the public form shows the change at once')
    const fields = [{ key: 'who', label: 'Name', required: true, maps_to: 'last_name' }, { key: 'plan', label: 'Plan', type: 'select', options: ['Basic', 'Pro'] }]
    const refit = (await call('PUT', `/api/webforms/${form.id}/`, admin, { fields, allowed_origins: ['https://forms.acme.test'] })).json()
    t.match(refit, { fields: [{ key: 'who', type: 'text', required: true, options: [], maps_to: 'last_name' }, { key: 'plan', type: 'select', options: ['Basic', 'Pro'], maps_to: null }], allowed_origins: ['https://forms.acme.test'], name: 'Talk to us' }, 'fields replaced as a whole, the rest kept')
    t.match((await call('POST', `/api/webforms/${form.id}/unpublish/`, admin)).json(), { is_published: false })
    t.equal((await app.inject({ url: form.embed.script_path })).statusCode, 404)
    const doomed = await design({ name: 'Doomed' })
    t.equal((await call('DELETE', `/api/webforms/${doomed.id}/`, globex.admin.headers)).statusCode, 404)
    t.same((await call('DELETE', `/api/webforms/${doomed.id}/`, admin)).json(), { error: false, message: 'Web form deleted' })
    t.equal((await call('GET', `/api/webforms/${doomed.id}/`, admin)).statusCode, 404)
  })

  const consent = { text: 'You may reply to me.', purpose: 'Support' }
  const published = async (payload: object) => {
    const made = await design(payload)
    await call('POST', `/api/webforms/${made.id}/publish/`, admin)
    return made
  }
  const submissionsOf = async (made: { id: string }, query = '') => (await call('GET', `/api/webforms/${made.id}/submissions/${query}`, admin)).json().results
  let grace = ''

  t.test('a contact form creates the contact through the contact use case, with the consent; a known email is matched', async (t) => {
    const contactForm = await published({ name: 'Stay in touch', target: 'contact', consent })
    t.match(contactForm, { target: 'contact', fields: [{ maps_to: 'first_name' }, { maps_to: 'last_name' }, { maps_to: 'email' }, { maps_to: 'phone' }, { maps_to: 'description' }] })
    const res = await submit(contactForm, { first_name: 'Grace', last_name: 'Hopper', email: 'grace@visitor.test', phone: '+1 555 0100', message: 'Hello', consent: 'on', idempotency_key: 'c-1' })
    t.equal(res.statusCode, 200, res.body)
    const [submission] = await submissionsOf(contactForm)
    t.match(submission, { status: 'accepted', outcome: 'created', contact_id: String, lead_id: null, case_id: null, consent: { purpose: 'Support', version: 1 } })
    grace = submission.contact_id
    t.match((await call('GET', `/api/contacts/${grace}/`, admin)).json().contact_obj, { first_name: 'Grace', last_name: 'Hopper', email: 'grace@visitor.test', phone: '+1 555 0100', description: 'Hello' })
    t.equal((await submit(contactForm, { first_name: 'Grace', email: 'GRACE@visitor.test', consent: 'on' })).statusCode, 200)
    // The clock is fixed, so submissions list in id order: found by what they hold.
    t.match((await submissionsOf(contactForm)).find((s: { outcome: string }) => s.outcome === 'matched'), { contact_id: grace }, 'no second contact')
    t.match((await submit(contactForm, { first_name: 'Grace', email: 'grace@visitor.test' })).json(), { errors: { consent: [String] } }, 'consent required as for a lead')
    t.match((await call('POST', '/api/webforms/', admin, { name: 'X', target: 'contact', fields: [{ key: 'who', label: 'Name', required: true, maps_to: 'first_name' }, { key: 'firm', label: 'Firm', maps_to: 'company_name' }] })).json(), { errors: { fields: [/a contact has no field company_name/] } })
  })

  t.test('a case form creates the case through the case use case; its submitter is found or created as its contact', async (t) => {
    const caseForm = await published({ name: 'Support', target: 'case' })
    t.same(caseForm.fields.map((f: { maps_to: string }) => f.maps_to), ['first_name', 'email', 'name', 'description'])
    const known = { first_name: 'Grace', email: 'grace@visitor.test', subject: 'Printer on fire', message: 'Please help' }
    t.equal((await submit(caseForm, { ...known, idempotency_key: 'case-1' })).statusCode, 200)
    t.equal((await submit(caseForm, { ...known, idempotency_key: 'case-1' })).statusCode, 200, 'a repeat')
    t.equal((await submit(caseForm, { first_name: 'Linus', email: 'linus@visitor.test', subject: 'Kernel panic' })).statusCode, 200)
    const listed = await submissionsOf(caseForm)
    t.equal(listed.length, 2)
    const mine = listed.find((s: { contact_id: string }) => s.contact_id === grace)
    const linus = listed.find((s: { contact_id: string }) => s.contact_id !== grace)
    t.match(mine, { outcome: 'created', case_id: String, contact_id: grace, lead_id: null }, 'the known email: its contact')
    t.match((await call('GET', `/api/cases/${mine.case_id}/`, admin)).json().cases_obj, { name: 'Printer on fire', description: 'Please help', contacts: [{ id: grace }] })
    t.match((await call('GET', `/api/contacts/${linus.contact_id}/`, admin)).json().contact_obj, { first_name: 'Linus', email: 'linus@visitor.test' }, 'a new person: a new contact')
    t.match((await call('GET', `/api/cases/${linus.case_id}/`, admin)).json().cases_obj, { name: 'Kernel panic', contacts: [{ id: linus.contact_id }] })
    t.match((await call('POST', '/api/webforms/', admin, { name: 'X', target: 'case', fields: [{ key: 'subject', label: 'Subject', required: true, maps_to: 'name' }, { key: 'tel', label: 'Phone', type: 'phone', maps_to: 'phone' }] })).json(), { errors: { fields: [/a case has no field phone/] } })
  })

  t.test('releasing a quarantined submission creates its record once (admins)', async (t) => {
    const contactForm = await published({ name: 'Quarantine', target: 'contact', consent })
    await submit(contactForm, { first_name: 'Ann', email: 'ann@visitor.test', consent: 'on', website_url: 'x' })
    await submit(contactForm, { first_name: 'Bea', email: 'bea@visitor.test', consent: 'on' })
    const [held] = await submissionsOf(contactForm, '?status=quarantined')
    const [accepted] = await submissionsOf(contactForm, '?status=accepted')
    const release = (id: string, headers = admin, form = contactForm.id) => call('POST', `/api/webforms/${form}/submissions/${id}/release/`, headers)
    t.equal((await release(held.id, globex.admin.headers)).statusCode, 404, "another organization's")
    t.equal((await release(held.id, admin, form.id)).statusCode, 404, "another form's")
    t.equal((await release(held.id, alice.headers)).statusCode, 403)
    const released = await release(held.id)
    t.equal(released.statusCode, 200, released.body)
    t.match(released.json(), { id: held.id, status: 'accepted', outcome: 'created', contact_id: String, reason: 'honeypot', released_at: String, consent: { purpose: 'Support' } })
    t.match((await call('GET', `/api/contacts/${released.json().contact_id}/`, admin)).json().contact_obj, { first_name: 'Ann', email: 'ann@visitor.test' })
    const events = await eventCount(database.db)
    const again = await release(held.id)
    t.equal(again.statusCode, 200)
    t.equal(again.json().contact_id, released.json().contact_id, 'a second release answers the same record')
    t.equal(await eventCount(database.db), events, 'and appends nothing')
    t.match((await release(accepted.id)).json(), { error: true, errors: { submission: [/quarantined/] } })
    t.equal((await release(accepted.id)).statusCode, 400)
  })

  t.test('answers never reach the logs', async (t) => {
    const log = lines.join('')
    t.ok(lines.length > 20, `${lines.length} log lines`)
    for (const personal of ['Lovelace', 'ada@visitor.test', 'Call me', 'bot@spam.test']) t.notOk(log.includes(personal), `no "${personal}" in the logs`)
  })

  t.test('rebuild equals live', async (t) => {
    const live = await rebuildEqualsLive(t, { db: database.db, store }, webFormsProjector, { oneByOne: true })
    t.ok(live.webforms!.length >= 5 && live.webform_submissions!.length >= 10, 'forms and submissions were compared')
  })
})
