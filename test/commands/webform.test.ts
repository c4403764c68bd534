import t from 'tap'
import type { Test } from 'tap'
import { consentRecordOf, leadInputOf, mappedAnswers, rawAnswers, readAnswers } from '../../src/commands/webform/answers.ts'
import { submissionDecider } from '../../src/commands/webform/submission.ts'
import type { SubmittedData } from '../../src/commands/webform/submission.ts'
import { DEFAULT_FIELDS, webFormDecider } from '../../src/commands/webform/webform.ts'
import type { FormDesign, FormField, WebFormEvent } from '../../src/commands/webform/webform.ts'
import { NotFoundError, ValidationError } from '../../src/errors.ts'
import { spec } from '../helpers/given-when-then.ts'

const org = '00000000-0000-4000-8000-00000000000a'
const otherOrg = '00000000-0000-4000-8000-00000000000b'
const formId = '00000000-0000-4000-8000-0000000000f1'
const at = '2026-11-22T09:00:00.000Z'
const design: FormDesign = { target: 'lead', name: 'Contact us', description: '', fields: [...DEFAULT_FIELDS], success_message: 'Thanks', allowed_origins: [], assigned_to: [], consent: null }
const created: WebFormEvent = { type: 'WebFormCreated', data: { form_id: formId, org_id: org, ...design, consent: null, created_by: null, at } }
const published: WebFormEvent = { type: 'WebFormPublished', data: { at } }
const field = (key: string, more: Partial<FormField> = {}): FormField => ({ key, label: key, type: 'text', required: false, options: [], maps_to: null, ...more })
const named = field('name', { required: true, maps_to: 'first_name' })

t.test('the form decider', async () => {
  const form = (t: Test) => spec(t, webFormDecider)

  t.test('create: once, with the design as given; a second create decides nothing', async (t) => {
    form(t).given([]).when({ type: 'CreateWebForm', formId, orgId: org, design, actorId: null, at }).then([created])
    form(t).given([created]).when({ type: 'CreateWebForm', formId, orgId: org, design, actorId: null, at }).then([], 'already there')
  })

  t.test('design rules: unique keys, no reserved key, options only on a select, one field per lead field, a required name', async (t) => {
    const refused = (fields: FormField[], message: RegExp) => form(t).given([]).when({ type: 'CreateWebForm', formId, orgId: org, design: { ...design, fields }, actorId: null, at }).thenRejects(ValidationError, { errors: { fields: [message] } })
    refused([named, field('name')], /unique/)
    refused([named, field('website_url')], /reserved/)
    refused([named, field('plan', { type: 'select' })], /needs options/)
    refused([named, field('note', { options: ['a'] })], /only a select/)
    refused([named, field('again', { maps_to: 'first_name' })], /Only one field/)
    refused([named, field('mail', { maps_to: 'email' })], /type email/)
    refused([named, field('ok', { type: 'checkbox', maps_to: 'city' })], /checkbox/)
    refused([field('name', { maps_to: 'first_name' })], /needs a name/)
    t.pass('each refused with its reason')
  })

  t.test('targets: a field fills only a field of the form\'s target, and the record gets its name', async (t) => {
    const refused = (target: FormDesign['target'], fields: FormField[], message: RegExp) => form(t).given([]).when({ type: 'CreateWebForm', formId, orgId: org, design: { ...design, target, fields }, actorId: null, at }).thenRejects(ValidationError, { errors: { fields: [message] } })
    const contactNamed = field('name', { required: true, maps_to: 'first_name' })
    const subject = field('subject', { required: true, maps_to: 'name' })
    refused('contact', [contactNamed, field('company', { maps_to: 'company_name' })], /a contact has no field company_name/)
    refused('contact', [field('name', { required: true, maps_to: 'last_name' })], /contact's first_name/)
    refused('lead', [named, field('subject', { maps_to: 'name' })], /a lead has no field name/)
    refused('case', [subject, field('phone', { type: 'phone', maps_to: 'phone' })], /a case has no field phone/)
    refused('case', [field('who', { required: true, maps_to: 'first_name' })], /case's name/)
    refused('case', [subject, field('mail', { type: 'email', maps_to: 'email' })], /submitter becomes a contact/)
    refused('case', [subject, field('urgency', { type: 'select', options: ['Soon'], maps_to: 'priority' })], /priority needs a select/)
    const caseForm = [subject, field('urgency', { type: 'select', options: ['Low', 'High'], maps_to: 'priority' }), field('mail', { type: 'email', maps_to: 'email' }), field('who', { required: true, maps_to: 'first_name' })]
    const caseCreated: WebFormEvent = { type: 'WebFormCreated', data: { form_id: formId, org_id: org, ...design, consent: null, target: 'case', fields: caseForm, created_by: null, at } }
    form(t).given([]).when({ type: 'CreateWebForm', formId, orgId: org, design: { ...design, target: 'case', fields: caseForm }, actorId: null, at }).then([caseCreated])
    // An update is checked against the target chosen on creation.
    form(t).given([caseCreated]).when({ type: 'UpdateWebForm', orgId: org, design: { fields: [...DEFAULT_FIELDS] }, at }).thenRejects(ValidationError, { errors: { fields: [/a case has no field/] } })
  })

  t.test('update: only what changed; nothing changed, no event; consent wording versioned', async (t) => {
    form(t).given([created]).when({ type: 'UpdateWebForm', orgId: org, design: { name: 'Contact us', fields: [...DEFAULT_FIELDS] }, at }).then([], 'the same design')
    form(t).given([created]).when({ type: 'UpdateWebForm', orgId: org, design: { name: 'Talk to sales', success_message: 'Thanks' }, at }).then([{ type: 'WebFormUpdated', data: { name: 'Talk to sales', at } }])
    const consent = { text: 'I agree to be contacted.', purpose: 'Sales follow-up', legal_basis: 'consent' }
    const first: WebFormEvent = { type: 'WebFormUpdated', data: { consent: { ...consent, version: 1 }, at } }
    form(t).given([created]).when({ type: 'UpdateWebForm', orgId: org, design: { consent }, at }).then([first])
    form(t).given([created, first]).when({ type: 'UpdateWebForm', orgId: org, design: { consent }, at }).then([], 'the same wording keeps its version')
    form(t).given([created, first]).when({ type: 'UpdateWebForm', orgId: org, design: { consent: { ...consent, text: 'I agree to calls.' } }, at }).then([{ type: 'WebFormUpdated', data: { consent: { ...consent, text: 'I agree to calls.', version: 2 }, at } }])
    form(t).given([created, first]).when({ type: 'UpdateWebForm', orgId: org, design: { consent: null }, at }).then([{ type: 'WebFormUpdated', data: { consent: null, at } }])
  })

  t.test('the switch: publish and unpublish once each; deleting switches off for good', async (t) => {
    form(t).given([created]).when({ type: 'PublishWebForm', orgId: org, at }).then([published])
    form(t).given([created, published]).when({ type: 'PublishWebForm', orgId: org, at }).then([], 'already on')
    form(t).given([created, published]).when({ type: 'UnpublishWebForm', orgId: org, at }).then([{ type: 'WebFormUnpublished', data: { at } }])
    form(t).given([created]).when({ type: 'UnpublishWebForm', orgId: org, at }).then([], 'already off')
    const deleted: WebFormEvent = { type: 'WebFormDeleted', data: { at } }
    form(t).given([created, published]).when({ type: 'DeleteWebForm', orgId: org, at }).then([deleted])
    form(t).given([created, deleted]).when({ type: 'DeleteWebForm', orgId: org, at }).then([], 'deleting twice')
    form(t).given([created, deleted]).when({ type: 'PublishWebForm', orgId: org, at }).thenRejects(NotFoundError)
  })

  t.test("another organization's form, or none, is not found", async (t) => {
    for (const command of [{ type: 'PublishWebForm', orgId: otherOrg, at }, { type: 'UpdateWebForm', orgId: otherOrg, design: { name: 'x' }, at }, { type: 'DeleteWebForm', orgId: otherOrg, at }] as const) {
      form(t).given([created]).when(command).thenRejects(NotFoundError)
    }
    form(t).given([]).when({ type: 'PublishWebForm', orgId: org, at }).thenRejects(NotFoundError)
  })
})

t.test('a submission is written once: a repeat (same idempotency key) decides nothing', async (t) => {
  const submission: SubmittedData = { submission_id: 's', form_id: formId, org_id: org, answers: {}, source_page: null, lead_id: 'l', outcome: 'created', consent: null, at }
  const submitted = { type: 'WebFormSubmitted' as const, data: submission }
  const decide = spec(t, submissionDecider)
  decide.given([]).when({ type: 'RecordSubmission', submission }).then([submitted])
  decide.given([submitted]).when({ type: 'RecordSubmission', submission: { ...submission, lead_id: 'other' } }).then([])
  decide.given([submitted]).when({ type: 'QuarantineSubmission', submission: { ...submission, reason: 'honeypot' } }).then([])
})

t.test('a release: once, of a quarantined submission of this form only', async (t) => {
  const base = { submission_id: 's', form_id: formId, org_id: org, answers: { name: 'Ada' }, source_page: null, at }
  const quarantined = { type: 'WebFormSubmissionQuarantined' as const, data: { ...base, reason: 'honeypot' as const, consent: null } }
  const release = { lead_id: 'l', outcome: 'created' as const, consent: null, released_by: 'admin', at }
  const released = { type: 'WebFormSubmissionReleased' as const, data: release }
  const decide = spec(t, submissionDecider)
  decide.given([quarantined]).when({ type: 'ReleaseSubmission', orgId: org, formId, release }).then([released])
  decide.given([quarantined, released]).when({ type: 'ReleaseSubmission', orgId: org, formId, release: { ...release, lead_id: 'other' } }).then([], 'released once')
  decide.given([{ type: 'WebFormSubmitted', data: { ...base, lead_id: 'l', outcome: 'created', consent: null } }]).when({ type: 'ReleaseSubmission', orgId: org, formId, release }).thenRejects(ValidationError)
  decide.given([quarantined]).when({ type: 'ReleaseSubmission', orgId: otherOrg, formId, release }).thenRejects(NotFoundError)
  decide.given([quarantined]).when({ type: 'ReleaseSubmission', orgId: org, formId: 'another form', release }).thenRejects(NotFoundError)
  decide.given([]).when({ type: 'ReleaseSubmission', orgId: org, formId, release }).thenRejects(NotFoundError)
})

t.test('answers read against the fields', async (t) => {
  const fields: FormField[] = [
    named,
    field('email', { type: 'email', required: true, maps_to: 'email' }),
    field('phone', { type: 'phone' }),
    field('plan', { type: 'select', options: ['Basic', 'Pro'] }),
    field('newsletter', { type: 'checkbox', label: 'Send me news' }),
    field('terms', { type: 'checkbox', required: true }),
    field('message', { type: 'textarea', label: 'Message' }),
  ]
  const good = { name: ' Ada ', email: 'ada@example.test', phone: '+44 20 7946 0958', plan: 'Pro', newsletter: 'on', terms: true, message: 'Call me', extra: 'dropped' }
  t.same(readAnswers(fields, good), { name: 'Ada', email: 'ada@example.test', phone: '+44 20 7946 0958', plan: 'Pro', newsletter: true, terms: true, message: 'Call me' }, 'trimmed, boxes as booleans, unknown keys dropped')
  t.same(readAnswers(fields, { ...good, phone: '', plan: undefined, newsletter: undefined }), { name: 'Ada', email: 'ada@example.test', terms: true, message: 'Call me', newsletter: false }, 'blank optional answers left out; an unticked box is false')
  try {
    readAnswers(fields, { name: '', email: 'not-mail', phone: 'call me', plan: 'Gold', newsletter: 'maybe', terms: 'off', message: ['a', 'b'] })
    t.fail('expected a refusal')
  } catch (error) {
    t.type(error, ValidationError)
    t.same(Object.keys((error as ValidationError).errors as object).sort(), ['email', 'message', 'name', 'newsletter', 'phone', 'plan', 'terms'], 'every refused field named by its key')
  }
  t.throws(() => readAnswers(fields, { ...good, message: 'x'.repeat(5001) }), ValidationError, 'a textarea holds at most 5000 characters')

  const input = leadInputOf(mappedAnswers(fields, readAnswers(fields, good)), ['p1'])
  t.match(input, { first_name: 'Ada', email: 'ada@example.test', source: 'other', assigned_to: ['p1'] }, 'mapped answers fill lead fields')
  t.equal(input.description, 'phone: +44 20 7946 0958\nplan: Pro\nSend me news: Yes\nterms: Yes\nMessage: Call me', 'the others are written into the description as "Label: answer" lines')
  t.same(rawAnswers(fields, { name: ['Bot', 'x'], message: 5, terms: true, other: 'x' }), { name: 'Bot', message: '5', terms: true }, 'a quarantined post kept as sent, to the form\'s keys')
  t.match(consentRecordOf({ text: 'I agree.', purpose: 'Sales', legal_basis: 'consent', version: 3 }), { purpose: 'Sales', legal_basis: 'consent', version: 3, text_sha256: /^[0-9a-f]{64}$/ }, 'consent recorded as the hash and version of its wording')
})
