import { z } from 'zod'
import { CLOSED_LEAD_STATUSES, LEAD_RATINGS, LEAD_SOURCES, LEAD_STATUSES } from '../../commands/lead/lead.ts'
import { UNWORKED_DAYS } from '../../projections/lead/leads.ts'
import { ContactRef, Erased, IdFilter, IdList, ProfileRef, TagRef, optionalEmail, optionalText } from '../kernel/relations.ts'
import { PageQuery } from '../kernel/schemas/common.ts'
import { STAGE_KINDS } from '../../commands/pipeline/stage-rules.ts'
import { Column, DealFilterQuery, MoveBody, OpportunityBody } from '../opportunities/schemas.ts'
import { AttachmentView, CommentView } from '../kernel/schemas/notes.ts'
import { registerComponents } from '../kernel/schemas/components.ts'
import { CustomField } from '../custom-fields/schemas.ts'
import { Profile } from '../identity/schemas.ts'

/** Ratings as answered: the original's upper-case values (stored lower case, the events' shape). */
export const ANSWERED_RATINGS = ['HOT', 'WARM', 'COLD'] as const satisfies readonly Uppercase<(typeof LEAD_RATINGS)[number]>[]
export const answeredRating = (rating: (typeof LEAD_RATINGS)[number] | null) => (rating ? (rating.toUpperCase() as (typeof ANSWERED_RATINGS)[number]) : null)

/** Request and response shapes of the lead routes (§2.5, §3.3, §4.1, §4.8; our field choices where the spec shows none). */

const blankIsNull = (v: unknown) => (v === '' ? null : v)
const choice = <T extends readonly [string, ...string[]]>(values: T) => z.preprocess(blankIsNull, z.enum(values).nullable()).optional()
// The deal body's field schemas where a lead field reads the same (amount, probability, a date, a file, custom values).
const deal = OpportunityBody.shape

const LeadFieldsBody = z
  .object({
    salutation: optionalText(64).describe('e.g. "Mr", "Ms", "Dr"'),
    first_name: z
      .preprocess((v) => (v === null ? '' : v), z.string().trim().max(255))
      .optional()
      .describe('A lead needs a first or a last name (400 on first_name when it would have neither); null or blank is no first name'),
    last_name: optionalText(),
    job_title: optionalText().describe("The person's job title (e.g. \"VP of Sales\")"),
    title: optionalText().describe('The same as job_title (our earlier name for it); job_title wins'),
    email: optionalEmail().describe('Unique per organization among leads, case-insensitively, when given (400 naming email). Required to convert'),
    phone: optionalText(50),
    company_name: optionalText().describe('The company the lead works for: the name of the account (and deal) conversion creates'),
    industry: optionalText().describe('Free text; the web app offers ADVERTISING, AGRICULTURE, … VENTURE CAPITAL. Copied to the account conversion creates'),
    website: optionalText(),
    linkedin_url: optionalText(500).describe("The person's LinkedIn profile URL"),
    address_line: optionalText(),
    city: optionalText(),
    state: optionalText(),
    postcode: optionalText(64),
    country: optionalText(),
    status: z
      .enum(LEAD_STATUSES)
      .optional()
      .describe(
        '§2.5 exact strings; `assigned` on create when absent, kept by a PUT that names none. `converted` converts the lead (§3.3): it needs an email, creates the account, contact and deal the lead describes and answers their ids; it cannot be undone (naming any status on a converted lead is 400 on status). A `closed` lead may be reopened to any other status',
      ),
    source: choice(LEAD_SOURCES).describe('§2.5 exact strings (lowercase; `compaign` as the spec spells it)'),
    rating: z
      .preprocess((v) => (typeof v === 'string' ? v.toLowerCase() : v), choice(LEAD_RATINGS))
      .describe('HOT, WARM or COLD (the original\'s values), in any case'),
    description: optionalText(10_000),
    opportunity_amount: deal.amount.describe("Expected deal size: non-negative decimal (string or number), answered as a string with 2 decimals; the converted deal's amount"),
    currency: deal.currency.describe("ISO 4217 code of opportunity_amount; the organization's default currency when an amount is set without one. The converted deal's currency"),
    probability: deal.probability.describe("0 to 100; the converted deal's probability"),
    close_date: deal.closed_on.describe('Expected close date, YYYY-MM-DD'),
    last_contacted: deal.closed_on.describe('When the lead was last contacted, YYYY-MM-DD'),
    next_follow_up: deal.closed_on.describe('When to follow up next, YYYY-MM-DD (the list filters by it; the dashboard counts those due today)'),
    contacts: IdList('contacts').optional(),
    tags: IdList('live tags').optional(),
    teams: IdList('teams').optional(),
    assigned_to: IdList('active profiles').optional(),
    lead_attachment: deal.opportunity_attachment.describe('multipart/form-data only: a file attached to the lead in the same request (at most MAX_UPLOAD_BYTES, else 413)'),
    custom_fields: deal.custom_fields.describe("Values of the organization's custom fields for leads, by key (an object, or its JSON text in a form body); wins over cf_<key>. 400 with errors.custom_fields.<key>"),
  })
  .catchall(z.unknown())
  .describe('Also `cf_<key>`: a custom field value. Other keys (output-only fields such as account, id, created_by) are ignored')
/** A whole lead (create, PUT, a CSV row): a first or a last name, as the original's form asks. */
export const LeadBody = LeadFieldsBody.superRefine((body, context) => {
  if (!body.first_name && !body.last_name) context.addIssue({ code: 'custom', path: ['first_name'], message: 'A lead needs a first or a last name.' })
})
export const LeadPatch = LeadFieldsBody.partial()
/**
 * PUT's body: the name rule is the decider's there, so it is judged after the lead was found and
 * its visibility checked (another organization's id stays a 404, whatever the body).
 */
export const LeadReplaceBody = LeadFieldsBody

/** A scalar filter (blank: no filter; repeated: the last value), documented for leads. */
const text = (what: string) => DealFilterQuery.shape.name.describe(what)
export const LeadListQuery = PageQuery.extend({
  name: text('Case-insensitive contains on first_name or last_name'),
  salutation: text('Case-insensitive contains'),
  source: text(`Exact: one of ${LEAD_SOURCES.join(', ')}; any other value matches nothing`),
  status: z
    .union([z.string(), z.array(z.string())])
    .optional()
    .transform((raw) => {
      const values = (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).filter((v) => v.trim() !== '')
      return values.length ? values : undefined
    })
    .describe(`Repeatable, exact, any of: ${LEAD_STATUSES.join(', ')}; other values match nothing`),
  assigned_to: IdFilter('leads assigned to a profile'),
  tags: IdFilter('leads carrying a tag'),
  city: text('Case-insensitive contains'),
  email: text('Case-insensitive contains'),
  rating: text(`One of ${LEAD_RATINGS.join(', ')}, in any case (HOT as the original's clients send it); any other value matches nothing`),
  search: text('Case-insensitive contains on first_name, last_name, company_name or email (any of them)'),
  created_at__gte: text('YYYY-MM-DD (UTC day); malformed matches nothing'),
  created_at__lte: text('YYYY-MM-DD, the whole day included'),
  close_date__gte: text('YYYY-MM-DD'),
  close_date__lte: text('YYYY-MM-DD'),
  next_follow_up: text('YYYY-MM-DD: leads to follow up that day; malformed matches nothing'),
})
  .catchall(z.union([z.string(), z.array(z.string())]))
  .describe("Also cf_<key>=value: the lead's custom field equals the value (read by its type); an unknown key or a malformed value matches nothing. Blank values are no filter")

const Ref = z.object({ id: z.uuid(), name: z.string() })
const Conversion = z
  .object({ account_id: z.uuid(), contact_id: z.uuid(), opportunity_id: z.uuid(), converted_by: ProfileRef.nullable(), converted_at: z.string() })
  .nullable()
  .describe('What conversion created; null until converted')

export const Lead = z.object({
  id: z.uuid(),
  salutation: z.string().nullable(),
  first_name: z.string(),
  last_name: z.string().nullable(),
  job_title: z.string().nullable().describe("The person's job title"),
  title: z.string().nullable().describe('The same as job_title (our earlier name for it)'),
  email: z.string().nullable(),
  phone: z.string().nullable(),
  company_name: z.string().nullable(),
  industry: z.string().nullable(),
  website: z.string().nullable(),
  linkedin_url: z.string().nullable(),
  address_line: z.string().nullable(),
  city: z.string().nullable(),
  state: z.string().nullable(),
  postcode: z.string().nullable(),
  country: z.string().nullable(),
  status: z.enum(LEAD_STATUSES),
  source: z.enum(LEAD_SOURCES).nullable(),
  rating: z.enum(ANSWERED_RATINGS).nullable().describe("The original's values (its web and phone apps compare them as written)"),
  description: z.string().nullable(),
  opportunity_amount: z.string().nullable(),
  currency: z.string().nullable().describe('ISO 4217 code of opportunity_amount'),
  probability: z.number().int().nullable(),
  close_date: z.string().nullable(),
  last_contacted: z.string().nullable().describe('YYYY-MM-DD'),
  next_follow_up: z.string().nullable().describe('YYYY-MM-DD'),
  account: Ref.nullable().describe('The account conversion created (output-only)'),
  contacts: z.array(ContactRef),
  tags: z.array(TagRef),
  teams: z.array(Ref),
  assigned_to: z.array(ProfileRef),
  created_by: ProfileRef.nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  created_on_arrow: z.string().describe('How long ago it was created, e.g. "3 days ago"'),
  pipeline: z.uuid().nullable().describe('The lead pipeline of its board card; null until its first move (PATCH /api/leads/{id}/move/)'),
  stage: z.string().nullable().describe('The stage code of its board card; null until its first move'),
  kanban_order: z.number().describe('Position in its board column; the creation time in ms until moved'),
  stage_changed_at: z.string().nullable().describe('When it last entered a stage; null until its first move'),
  conversion: Conversion,
  custom_fields: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).describe("Values of the organization's active custom fields for leads, by key"),
  erased: Erased,
})

const leadsCount = z.number().int().describe("The section's whole filtered count")
const nextOffset = z.number().int().nullable().describe('The offset of the next page, or null on the last page')
const page = z.array(Lead).describe('This page, newest first')
const openStatuses = LEAD_STATUSES.filter((s) => !CLOSED_LEAD_STATUSES.includes(s))

export const LeadList = z.object({
  open_leads: z.object({ leads_count: leadsCount, open_leads: page, offset: nextOffset }).describe(`Leads of status ${openStatuses.join(', ')}`),
  close_leads: z.object({ leads_count: leadsCount, close_leads: page, offset: nextOffset }).describe(`Leads of status ${CLOSED_LEAD_STATUSES.join(' or ')} (our choice: a converted lead is no open work); paged with the same limit and offset`),
  totals: z.object({
    count: z.number().int().describe('Every lead of the filtered set, both sections'),
    unworked_over_a_week: z.number().int().describe(`Open leads of the set with no event (edit, comment, attachment) for more than ${UNWORKED_DAYS} days`),
  }),
})

export const LeadDetail = z.object({
  lead_obj: Lead,
  attachments: z.array(AttachmentView).describe('Live attachments, oldest first'),
  comments: z.array(CommentView).describe('Live comments, oldest first'),
  users_mention: z.array(z.object({ user__email: z.string() })).describe('Every active member for an admin; only the creator otherwise'),
  assigned_data: z.array(z.object({ id: z.uuid(), name: z.string() })).describe("The lead's assignees: profile id and email"),
  users: z.array(Profile).describe("For the assignee picker (the original's phone app reads them here): every active member for an admin, the active admins otherwise"),
  custom_field_definitions: z.array(CustomField).describe("The organization's active custom fields for leads, in display order"),
})

const ConvertedIds = z.object({ account_id: z.uuid(), contact_id: z.uuid(), opportunity_id: z.uuid() }).partial()
export const LeadCreated = z.object({ error: z.literal(false), message: z.string(), id: z.uuid(), ...ConvertedIds.shape }).describe('Also account_id, contact_id and opportunity_id when created as converted')
export const LeadUpdated = z.object({ error: z.literal(false), message: z.string(), ...ConvertedIds.shape }).describe('Also account_id, contact_id and opportunity_id when this request converted the lead')

export const LeadNoteAnswer = z.object({ lead_obj: Lead, attachments: z.array(AttachmentView), comments: z.array(CommentView) })

// The lead board (GET /api/leads/kanban/, PATCH /api/leads/{id}/move/): the deal board's shapes (§2.4, §4.6, §4.7) adapted to leads.
export const BOARD_MODES = ['pipeline', 'status'] as const
export const LeadBoardQuery = LeadListQuery.extend({
  pipeline: text("A lead pipeline of the organization (another organization's id or a malformed one: 404); the default lead pipeline when absent"),
  mode: z
    .enum(BOARD_MODES)
    .default('pipeline')
    .describe('`pipeline`: a column per stage of the pipeline. `status`: a column per lead status (§2.5), every lead of the filtered set, or only those on the board of the `pipeline` given; read-only (a status changes by PATCH /api/leads/{id}/)'),
})

export const LeadCard = Lead.extend({
  pipeline: z.uuid().nullable().describe('The lead pipeline of the column the card shows in (a lead never moved shows in the default lead pipeline\'s first open stage)'),
  stage: z.string().nullable().describe('The stage code of that column; null on a status board for a lead never moved'),
  stage_label: z.string().nullable(),
  stage_kind: z.enum(STAGE_KINDS).nullable(),
  days_in_stage: z.number().int().nullable().describe('Whole days since stage_changed_at (since creation for a lead never moved)'),
  aging_status: z.enum(['green', 'yellow', 'red']).nullable().describe("§3.2 by the stage's thresholds; null outside open stages"),
  can_move: z.boolean().describe('Whether the caller may move the card: admin, creator or assignee'),
})

export const LeadColumn = Column.extend({
  id: z.string().describe('The stage code, or the status on a status board'),
  name: z.string().describe('The stage label, or the status'),
  items: z.array(LeadCard).describe('At most 100 cards, by kanban_order'),
})

export const LeadBoard = z.object({
  mode: z.enum(BOARD_MODES),
  pipeline: z.object({ id: z.uuid(), name: z.string(), is_default: z.boolean() }).nullable().describe('Null on a status board of every lead'),
  columns: z.array(LeadColumn),
  total_items: z.number().int(),
})

export const LeadMoveBody = MoveBody.extend({
  column_id: z.string().describe("A stage code of the target pipeline: the lead's own, the default lead pipeline for a lead never moved, or the one named by `pipeline`"),
  pipeline: z.uuid().optional().describe('Move the lead into this lead pipeline of the organization (400 otherwise); unlike a deal, a lead changes pipeline on the board, as its edit form has no pipeline field'),
})
export const LeadMoveAnswer = z.object({ error: z.literal(false), message: z.string(), lead: LeadCard })

registerComponents({ Lead, LeadCard })
