import { z } from 'zod'
import type { SubmissionEvent } from '../commands/webform/submission.ts'
import { FIELD_TYPES, MAPPABLE_LEAD_FIELDS } from '../commands/webform/webform.ts'
import type { WebFormEvent } from '../commands/webform/webform.ts'
import { By, Id, Ids, at, eventsOf, noPersonalData } from '../events/event-schemas.ts'
import { webFormsProjector } from '../projections/webform/webforms.ts'
import type { ModuleManifest } from './manifest.ts'

const Field = z.strictObject({ key: z.string(), label: z.string(), type: z.enum(FIELD_TYPES), required: z.boolean(), options: z.array(z.string()), maps_to: z.enum(MAPPABLE_LEAD_FIELDS).nullable() })
const Consent = z.strictObject({ text: z.string(), purpose: z.string(), legal_basis: z.string(), version: z.number().int().min(1) })
const design = { name: z.string(), description: z.string(), fields: z.array(Field), success_message: z.string(), allowed_origins: z.array(z.string()), assigned_to: Ids, consent: Consent.nullable() }
const Answers = z.record(z.string(), z.union([z.string(), z.boolean()])).describe("The visitor's answers by field key (personal data: never logged)")
const submitted = { submission_id: Id, form_id: Id, org_id: Id, answers: Answers, source_page: z.string().nullable(), ...at }
const ConsentRecord = z.strictObject({ purpose: z.string(), legal_basis: z.string(), text_sha256: z.string(), version: z.number().int().min(1) })

// Declared apart, not inline: a function literal in a declaration defers eventsOf's inference of the data types.
const leadOfSubmission = (_stream: string, data: Record<string, unknown>) => `lead-${String(data.lead_id)}`
const ownStream = (stream: string) => stream

const formEvents = eventsOf<WebFormEvent>()({
  // webform-<id>
  WebFormCreated: { stream: 'webform', description: 'An admin designed a web form (unpublished): its ordered fields, what each fills on the lead, assignees, consent text (with its version), allowed origins.', data: z.strictObject({ form_id: Id, org_id: Id, target: z.literal('lead'), ...design, created_by: By, ...at }) },
  WebFormUpdated: { stream: 'webform', description: "A web form's design changed: only the changed parts, each with its new value (a changed consent wording has a new version).", data: z.strictObject(design).partial().extend(at) },
  WebFormPublished: { stream: 'webform', description: 'A web form was switched on: its public address serves and accepts it.', data: z.strictObject(at) },
  WebFormUnpublished: { stream: 'webform', description: 'A web form was switched off: its public address answers 404.', data: z.strictObject(at) },
  WebFormDeleted: { stream: 'webform', description: 'A web form was deleted (its submissions stay in the log and their leads stay).', data: z.strictObject(at) },
})

const submissionEvents = eventsOf<SubmissionEvent>()({
  // webform_submission-<id>
  WebFormSubmitted: {
    stream: 'webform_submission',
    description: 'A visitor submitted a web form: the answers, the lead it created or matched (same email), the consent given (purpose, legal basis, hash and version of the wording shown), the source page.',
    data: z.strictObject({ ...submitted, lead_id: Id, outcome: z.enum(['created', 'matched']), consent: ConsentRecord.nullable() }),
    // The answers are the lead's person's: erasing the lead erases them.
    personal: ['answers.*'],
    subject: leadOfSubmission,
  },
  WebFormSubmissionQuarantined: {
    stream: 'webform_submission',
    description: 'A web form submission was held as spam (it filled the honeypot): no lead was created.',
    data: z.strictObject({ ...submitted, reason: z.literal('honeypot') }),
    // No lead: the submission itself is the subject, its answers sealed under a key of its own.
    personal: ['answers.*'],
    subject: ownStream,
  },
})

/** Web forms: admins design lead-capture forms; the public embeds and submits them with no sign-in (docs/web-forms.md). */
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
  // The public address names the organization and the form: both must match.
  idParams: { org_id: 'org', form_id: 'webform' },
}
