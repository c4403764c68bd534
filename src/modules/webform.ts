import { z } from 'zod'
import type { SubmissionEvent } from '../commands/webform/submission.ts'
import { ALL_MAPPABLE_FIELDS, FIELD_TYPES, TARGETS } from '../commands/webform/webform.ts'
import type { WebFormEvent } from '../commands/webform/webform.ts'
import { By, Id, Ids, at, eventsOf, noPersonalData } from '../events/event-schemas.ts'
import { webFormsProjector } from '../projections/webform/webforms.ts'
import type { ModuleManifest } from './manifest.ts'

const Field = z.strictObject({ key: z.string(), label: z.string(), type: z.enum(FIELD_TYPES), required: z.boolean(), options: z.array(z.string()), maps_to: z.enum(ALL_MAPPABLE_FIELDS).nullable() })
const Consent = z.strictObject({ text: z.string(), purpose: z.string(), legal_basis: z.string(), version: z.number().int().min(1) })
const design = { name: z.string(), description: z.string(), fields: z.array(Field), success_message: z.string(), allowed_origins: z.array(z.string()), assigned_to: Ids, consent: Consent.nullable() }
const Answers = z.record(z.string(), z.union([z.string(), z.boolean()])).describe("The visitor's answers by field key (personal data: never logged)")
const submitted = { submission_id: Id, form_id: Id, org_id: Id, answers: Answers, source_page: z.string().nullable(), ...at }
const ConsentRecord = z.strictObject({ purpose: z.string(), legal_basis: z.string(), text_sha256: z.string(), version: z.number().int().min(1) })
/** The record made, by the form's target (events from before contacts and cases were targets all have a lead_id). */
const made = { lead_id: Id.optional(), contact_id: Id.nullable().optional(), case_id: Id.optional(), outcome: z.enum(['created', 'matched']) }

// Declared apart, not inline: a function literal in a declaration defers eventsOf's inference of the data types.
/** The person the answers are about: the lead or contact made or matched (a case's submitter), else the submission itself (a case form asking no name). */
const personOfSubmission = (stream: string, data: Record<string, unknown>) => (data.lead_id ? `lead-${String(data.lead_id)}` : data.contact_id ? `contact-${String(data.contact_id)}` : stream)
const ownStream = (stream: string) => stream

const formEvents = eventsOf<WebFormEvent>()({
  // webform-<id>
  WebFormCreated: { stream: 'webform', description: 'An admin designed a web form (unpublished): what it creates (lead, contact or case), its ordered fields, what each fills on that record, assignees, consent text (with its version), allowed origins.', data: z.strictObject({ form_id: Id, org_id: Id, target: z.enum(TARGETS), ...design, created_by: By, ...at }) },
  WebFormUpdated: { stream: 'webform', description: "A web form's design changed: only the changed parts, each with its new value (a changed consent wording has a new version).", data: z.strictObject(design).partial().extend(at) },
  WebFormPublished: { stream: 'webform', description: 'A web form was switched on: its public address serves and accepts it.', data: z.strictObject(at) },
  WebFormUnpublished: { stream: 'webform', description: 'A web form was switched off: its public address answers 404.', data: z.strictObject(at) },
  WebFormDeleted: { stream: 'webform', description: 'A web form was deleted (its submissions stay in the log and their leads stay).', data: z.strictObject(at) },
})

const submissionEvents = eventsOf<SubmissionEvent>()({
  // webform_submission-<id>
  WebFormSubmitted: {
    stream: 'webform_submission',
    description: "A visitor submitted a web form: the answers, the record it made (a lead or contact created or matched by email; a case created, with its submitter's contact), the consent given (purpose, legal basis, hash and version of the wording shown), the source page.",
    data: z.strictObject({ ...submitted, ...made, consent: ConsentRecord.nullable() }),
    // The answers are the lead's or contact's person's: erasing them erases the answers.
    personal: ['answers.*'],
    subject: personOfSubmission,
  },
  WebFormSubmissionQuarantined: {
    stream: 'webform_submission',
    description: 'A web form submission was held as spam (it filled the honeypot): no record was created. The consent the visitor ticked is kept for a release.',
    data: z.strictObject({ ...submitted, reason: z.literal('honeypot'), consent: ConsentRecord.nullable().optional() }),
    // No lead: the submission itself is the subject, its answers sealed under a key of its own.
    personal: ['answers.*'],
    subject: ownStream,
  },
  WebFormSubmissionReleased: {
    stream: 'webform_submission',
    description: 'An admin released a quarantined submission: the record its answers made then (as WebFormSubmitted describes), and the consent the visitor had given.',
    data: z.strictObject({ ...made, consent: ConsentRecord.nullable(), released_by: By, ...at }),
    personal: [],
  },
})

/** Web forms: admins design forms that create leads, contacts or cases; the public embeds and submits them with no sign-in (docs/web-forms.md). */
export const webFormModule: ModuleManifest = {
  name: 'webform',
  events: { ...noPersonalData(formEvents), ...submissionEvents },
  routes: async (deps) => {
    const { webFormRoutes } = await import('../http/webforms/webforms.ts')
    const { publicFormRoutes } = await import('../http/webforms/public-forms.ts')
    return [webFormRoutes(deps), publicFormRoutes(deps)]
  },
  projectors: [webFormsProjector],
  idKinds: [[/^\/api\/webforms\/\{id\}/, 'webform']],
  // The public address names the organization and the form: both must match; a release names the form and its submission.
  idParams: { org_id: 'org', form_id: 'webform', submission_id: 'webformSubmission' },
}
