import { z } from 'zod'
import { ALL_MAPPABLE_FIELDS, FIELD_TYPES, MAPPABLE_FIELDS, RESERVED_KEYS, TARGETS } from '../../commands/webform/webform.ts'
import type { Target } from '../../commands/webform/webform.ts'
import { iso } from '../kernel/schemas/common.ts'
import type { WebFormRow, WebFormSubmissionRow } from '../../projections/webform/webforms.ts'

/** A site allowed to post a form, as a browser names it in `Origin`: scheme, host and port, nothing after. */
const Origin = z
  .string()
  .trim()
  .max(300)
  .refine((text) => {
    try {
      const url = new URL(text)
      return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === text.replace(/\/$/, '')
    } catch {
      return false
    }
  }, 'Expected an origin such as https://www.example.com (scheme and host, no path)')
  .transform((text) => new URL(text).origin)

const FieldBody = z.object({
  key: z
    .string()
    .regex(/^[a-z][a-z0-9_]{0,49}$/, 'Expected lower-case letters, digits and underscores, starting with a letter (at most 50)')
    .describe(`The answer's name in a submission's body; unique in the form, not one of ${RESERVED_KEYS.join(', ')}`),
  label: z.string().trim().min(1, 'This field may not be blank.').max(200).describe('What the visitor reads'),
  type: z.enum(FIELD_TYPES).default('text'),
  required: z.boolean().default(false),
  options: z.array(z.string().trim().min(1).max(200)).max(100).default([]).describe('A select field\'s choices (only a select has them)'),
  maps_to: z
    .enum(ALL_MAPPABLE_FIELDS)
    .nullable()
    .default(null)
    .describe(`The target's field the answer fills (${TARGETS.map((target) => `${target}: ${MAPPABLE_FIELDS[target].join(', ')}`).join('; ')}); null: the answer is written into the record's description as "Label: answer"`),
})

const ConsentBody = z.object({
  text: z.string().trim().min(1).max(2000).describe('The exact wording shown beside the box the visitor must tick'),
  purpose: z.string().trim().min(1).max(200).describe('What the data is used for, e.g. "Sales follow-up"'),
  legal_basis: z.enum(['consent', 'legitimate_interests', 'contract']).default('consent'),
})

/** Everything an admin designs; POST fills what is left out with the defaults below, PUT changes only what is given. */
const designShape = {
  name: z.string().trim().min(1, 'This field may not be blank.').max(100),
  description: z.string().max(2000).describe('For the organization; not shown to visitors'),
  fields: z.array(FieldBody).min(1).max(50).describe('In the order shown. Default: first name (required), last name, email (required), phone, message'),
  success_message: z.string().trim().min(1).max(500).describe('Shown after a submission'),
  allowed_origins: z.array(Origin).max(20).describe('Sites whose pages may post the form (a browser\'s Origin); empty: any. A post without an Origin (server to server) is not checked'),
  assigned_to: z.array(z.uuid()).max(20).describe('Profiles the created records are assigned to'),
  consent: ConsentBody.nullable().describe('When set, the visitor must tick a box with this text; each submission records it'),
}
export const UpdateBody = z.object(designShape).partial()
export const CreateBody = UpdateBody.required({ name: true }).extend({
  target: z.enum(TARGETS).default('lead').describe("What each submission creates, set once: a lead, a contact, or a case (its submitter's email and name find or create a contact of the case)"),
})
export const DEFAULT_SUCCESS_MESSAGE = 'Thank you! We received your message.'

const Field = z.object({ key: z.string(), label: z.string(), type: z.enum(FIELD_TYPES), required: z.boolean(), options: z.array(z.string()), maps_to: z.enum(ALL_MAPPABLE_FIELDS).nullable() })
const Consent = z.object({ text: z.string(), purpose: z.string(), legal_basis: z.string(), version: z.number().int().describe('Grows whenever the wording, purpose or basis changes') })

export const WebForm = z.object({
  id: z.uuid(),
  name: z.string(),
  description: z.string(),
  target: z.enum(TARGETS).describe('What a submission creates'),
  fields: z.array(Field),
  success_message: z.string(),
  allowed_origins: z.array(z.string()),
  assigned_to: z.array(z.uuid()),
  consent: Consent.nullable(),
  is_published: z.boolean(),
  published_at: z.string().nullable(),
  embed: z.object({ script_path: z.string(), page_path: z.string(), submit_path: z.string() }).describe('Where the public finds the form (answering 404 while unpublished)'),
  created_by: z.uuid().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
})

export const WebFormSubmission = z.object({
  id: z.uuid(),
  status: z.enum(['accepted', 'quarantined']),
  outcome: z.enum(['created', 'matched']).nullable().describe("accepted: created the form's record, or matched the lead or contact that already had the email (a case is always created)"),
  lead_id: z.uuid().nullable(),
  contact_id: z.uuid().nullable().describe("A contact form's contact, or a case's submitter"),
  case_id: z.uuid().nullable(),
  reason: z.string().nullable().describe('quarantined (or released from it): why (honeypot)'),
  released_at: z.string().nullable().describe('When an admin released it from quarantine'),
  answers: z.record(z.string(), z.union([z.string(), z.boolean()])),
  consent: z.object({ purpose: z.string(), legal_basis: z.string(), text_sha256: z.string(), version: z.number().int() }).nullable(),
  source_page: z.string().nullable(),
  created_at: z.string(),
})

const count = z.number().int()
export const Analytics = z.object({
  submissions: count.describe('Accepted submissions'),
  leads_created: count.describe('Accepted submissions that created their record: a lead, a contact or a case (the name is from when forms made leads only)'),
  leads_matched: count.describe('Accepted submissions whose email already belonged to a lead'),
  quarantined: count,
  last_submission_at: z.string().nullable(),
  daily: z.array(z.object({ date: z.string(), accepted: count, quarantined: count })).describe('The last 30 days (UTC), oldest first'),
})

export const publicPaths = (row: Pick<WebFormRow, 'org_id' | 'id'>) => {
  const base = `/api/public/forms/${row.org_id}/${row.id}`
  return { script_path: `${base}/embed.js`, page_path: `${base}/embed/`, submit_path: `${base}/submit/` }
}

export const webFormBody = (row: WebFormRow) => ({
  id: row.id,
  name: row.name,
  description: row.description,
  target: row.target as Target,
  fields: row.fields,
  success_message: row.success_message,
  allowed_origins: row.allowed_origins,
  assigned_to: row.assigned_to,
  consent: row.consent,
  is_published: row.is_published,
  published_at: iso(row.published_at),
  embed: publicPaths(row),
  created_by: row.created_by,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
})

export const submissionBody = (row: WebFormSubmissionRow) => ({
  id: row.id,
  status: row.status,
  outcome: row.outcome,
  lead_id: row.lead_id,
  contact_id: row.contact_id,
  case_id: row.case_id,
  reason: row.reason,
  released_at: iso(row.released_at),
  answers: row.answers,
  consent: row.consent,
  source_page: row.source_page,
  created_at: row.created_at.toISOString(),
})
