import { z } from 'zod'
import { LEAD_SOURCES, OPPORTUNITY_TYPES } from '../../commands/opportunity/enums.ts'
import { DISCOUNT_TYPES } from '../../commands/opportunity/line-items.ts'
import { STAGE_KINDS } from '../../commands/pipeline/stage-rules.ts'
import { isCurrency } from '../../identity/organizations.ts'
import { ContactRef, IdFilter, IdList, ProfileRef, TagRef, optionalText } from '../kernel/relations.ts'
import { formBoolean, formNumber } from '../kernel/schemas/form-values.ts'
import { CustomField } from '../custom-fields/schemas.ts'
import { Account, Contact } from '../kernel/schemas/records.ts'
import { AttachmentView, CommentView, UploadedFileSchema } from '../kernel/schemas/notes.ts'
import { registerComponents } from '../kernel/schemas/components.ts'

/** Request and response shapes of the deal routes (§2.1, §2.4, §4.2, §4.4, §4.7). */

const blankIsNull = (v: unknown) => (v === '' ? null : v)
const nullable = <T extends z.ZodType>(schema: T) => z.preprocess(blankIsNull, schema.nullable()).optional()

/** A decimal with at most 2 places, from a JSON number or string, kept as a canonical string (no floating point). */
export const Amount = z
  .union([z.number(), z.string().trim()])
  .transform((v) => (typeof v === 'number' ? String(v) : v))
  .refine((v) => /^\d{1,13}(\.\d{1,2})?$/.test(v), 'Expected a non-negative decimal with at most 13 digits before and 2 after the point.')
  .transform((v) => {
    const [whole, fraction = ''] = v.split('.')
    return `${BigInt(whole!)}.${fraction.padEnd(2, '0')}`
  })


export const OpportunityBody = z.object({
  name: z.string().trim().min(1, 'This field may not be blank.').max(255).describe('Unique per organization, case-insensitively'),
  account: nullable(z.uuid().transform((id) => id.toLowerCase())).describe('An account of this organization'),
  pipeline: z.uuid().transform((id) => id.toLowerCase()).optional().describe("One of the organization's pipelines; defaults to the deal's current one, or the default pipeline on create. Changing it requires `stage`"),
  stage: z.string().trim().min(1).optional().describe("A stage code of the deal's pipeline; defaults on create to its first open stage"),
  opportunity_type: nullable(z.enum(OPPORTUNITY_TYPES)),
  currency: nullable(z.string().trim().toUpperCase().refine(isCurrency, 'Expected an ISO 4217 currency code, such as "USD".')).describe("Defaults to the organization's default currency"),
  amount: nullable(Amount).describe('Non-negative decimal (string or number); required, and above 0, in a won stage. Answered as a string with 2 decimals'),
  probability: nullable(formNumber(z.number().int('Expected an integer from 0 to 100.').min(0).max(100))).describe("0 to 100; 0 or unset takes the stage's default (100 won, 0 lost, 10/25/50/75 for the seeded open stages)"),
  closed_on: nullable(z.iso.date('Expected a date as YYYY-MM-DD.')).describe('Required in a won or lost stage'),
  lead_source: nullable(z.enum(LEAD_SOURCES)),
  description: optionalText(10_000),
  is_active: formBoolean(z.boolean()).optional(),
  contacts: IdList('contacts').optional(),
  tags: IdList('live tags').optional(),
  teams: IdList('teams').optional(),
  assigned_to: IdList('active profiles').optional(),
  opportunity_attachment: UploadedFileSchema.optional().describe('multipart/form-data only: a file attached to the deal (at most MAX_UPLOAD_BYTES, else 413)'),
  custom_fields: z.unknown().optional().describe('Custom field values by key (an object, or its JSON text in a form body); wins over cf_<key>. Checked against the definitions: 400 with errors.custom_fields.<key>'),
}).catchall(z.unknown()).describe('Also `cf_<key>`: a custom field value; other keys (output-only fields) are ignored')
export const OpportunityPatch = OpportunityBody.partial()

export const MoveBody = z.object({
  column_id: z.string().describe("A stage code of the deal's own pipeline"),
  above_id: z.uuid().optional().describe('Place the card right below this card of the column'),
  below_id: z.uuid().optional().describe('Place the card right above this card of the column'),
  kanban_order: formNumber(z.number().finite()).optional().describe('An explicit position; wins over above_id and below_id'),
})

const Ref = z.object({ id: z.uuid(), name: z.string() })
const Decimal = z.string().describe('Decimal string with two places')
export const LineItemView = z.object({
  id: z.uuid(),
  name: z.string(),
  description: z.string().nullable(),
  quantity: Decimal,
  unit_price: Decimal,
  discount_type: z.enum(DISCOUNT_TYPES).nullable(),
  discount_value: Decimal.nullable().describe('A percentage (0-100) or a fixed amount, per discount_type'),
  discount_amount: Decimal.describe('The discount in money (at most quantity × unit_price)'),
  total: Decimal.describe('quantity × unit_price less the discount, never below 0'),
  created_at: z.string(),
  updated_at: z.string(),
})
const AgingStatus = z.enum(['green', 'yellow', 'red']).nullable().describe('Open stages only (§3.2); null in won and lost stages')

export const Card = z.object({
  id: z.uuid(),
  name: z.string(),
  pipeline: z.uuid(),
  stage: z.string(),
  stage_label: z.string().nullable(),
  stage_kind: z.enum(STAGE_KINDS),
  amount: z.string().nullable(),
  opportunity_amount: z.string().nullable().describe('The same as amount (older clients read this name)'),
  currency: z.string().nullable(),
  probability: z.number().int().nullable(),
  closed_on: z.string().nullable(),
  kanban_order: z.number(),
  account: Ref.nullable(),
  assigned_to: z.array(ProfileRef),
  tags: z.array(TagRef),
  line_items: z.array(z.object({ id: z.uuid(), name: z.string(), quantity: z.string(), unit_price: z.string(), discount_type: z.string().nullable(), discount_value: z.string().nullable() })).describe('Plain rows of the live line items'),
  days_in_stage: z.number().int().nullable(),
  aging_status: AgingStatus,
  stage_changed_at: z.string().nullable(),
  next_activity: z.null().describe('Activities are not built yet: always null'),
  can_move: z.boolean().describe("Whether the caller may move the card (admin, creator or assignee)"),
  created_at: z.string(),
  updated_at: z.string(),
})

export const Opportunity = z.object({
  id: z.uuid(),
  name: z.string(),
  account: Ref.nullable(),
  pipeline: z.uuid(),
  stage: z.string(),
  opportunity_type: z.enum(OPPORTUNITY_TYPES).nullable(),
  currency: z.string().nullable(),
  amount: z.string().nullable(),
  probability: z.number().int().nullable(),
  closed_on: z.string().nullable(),
  lead_source: z.enum(LEAD_SOURCES).nullable(),
  description: z.string().nullable(),
  is_active: z.boolean(),
  contacts: z.array(ContactRef),
  tags: z.array(TagRef),
  teams: z.array(Ref),
  assigned_to: z.array(ProfileRef),
  closed_by: ProfileRef.nullable(),
  created_by: ProfileRef.nullable(),
  created_at: z.string(),
  org: Ref,
  created_on_arrow: z.string().describe('How long ago it was created, e.g. "3 days ago"'),
  amount_source: z.enum(['MANUAL', 'CALCULATED']).describe('CALCULATED while the deal has line items: their total is its amount, and an edit sending another amount (or null) is 400'),
  stage_label: z.string().nullable(),
  stage_kind: z.enum(STAGE_KINDS),
  stage_changed_at: z.string().nullable(),
  days_in_stage: z.number().int().nullable(),
  aging_status: AgingStatus,
  line_items: z.array(LineItemView).describe('Live line items, in the order they were added'),
  line_items_total: z.string().describe('Sum of the line items\' totals; "0" without line items'),
  custom_fields: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).describe("Values of the organization's active custom fields for deals, by key (no value: no key)"),
})


const Pairs = z.array(z.tuple([z.string(), z.string()]))
export const OpportunityDetail = z.object({
  opportunity_obj: Opportunity,
  comments: z.array(CommentView).describe('Live comments, oldest first'),
  attachments: z.array(AttachmentView).describe('Live attachments, oldest first'),
  contacts: z.array(ContactRef).describe("The organization's live contacts, for the form's picker"),
  users: z.array(ProfileRef).describe("The organization's active members"),
  stage: Pairs.describe("`[code, label]` pairs of the deal's own pipeline, in order"),
  lead_source: Pairs,
  currency: Pairs,
  comment_permission: z.boolean().describe('True for the creator or an admin'),
  users_mention: z.array(z.object({ user__email: z.string() })).describe('Every active member for an admin; only the creator otherwise'),
  custom_field_definitions: z.array(CustomField).describe("The organization's active custom fields for deals"),
})

export const MoveAnswer = z.object({ error: z.literal(false), message: z.string(), opportunity: Card })

/** A filter value that never errors: a repeated scalar takes its last value; blank means no filter. */
const Scalar = z
  .union([z.string(), z.array(z.string())])
  .optional()
  .transform((v) => (Array.isArray(v) ? v.at(-1) : v))
  .transform((v) => (v?.trim() ? v : undefined))
const Flag = (what: string) => Scalar.describe(`\`true\` keeps only ${what}; anything else is no filter`)

export const DealFilterQuery = z
  .object({
    name: Scalar.describe('Case-insensitive contains on the name'),
    search: Scalar.describe('The same as name: case-insensitive contains on the name only'),
    account: IdFilter('deals of an account'),
    stage: Scalar.describe('Case-sensitive contains on the stage code: CLOSED matches CLOSED_WON and CLOSED_LOST'),
    lead_source: Scalar.describe('Case-sensitive contains on the lead source'),
    tags: IdFilter('deals carrying a tag'),
    assigned_to: IdFilter('deals assigned to a profile'),
    created_at__gte: Scalar.describe('YYYY-MM-DD (UTC day); malformed matches nothing'),
    created_at__lte: Scalar.describe('YYYY-MM-DD, the whole day included'),
    closed_on__gte: Scalar.describe('YYYY-MM-DD'),
    closed_on__lte: Scalar.describe('YYYY-MM-DD'),
    amount__gte: Scalar.describe('Decimal; malformed matches nothing'),
    amount__lte: Scalar.describe('Decimal'),
    open: Flag('deals in open stages'),
    rotten: Flag('stalled deals (§3.2)'),
  })
  .catchall(z.union([z.string(), z.array(z.string())]))
  .describe('Also cf_<key>=value: the custom field equals the value (read by its type: a number, true/false, a date); an unknown key or a malformed value matches nothing')

export const DealListQuery = DealFilterQuery.extend({
  pipeline: IdFilter('deals of a pipeline'),
  limit: z.coerce.number().int().min(0).default(10),
  offset: z.coerce.number().int().min(0).default(0),
})
export const BoardQuery = DealFilterQuery.extend({
  pipeline: Scalar.describe('A pipeline of the organization (another id: 404); the default pipeline when absent'),
  as_of: z.iso
    .datetime({ offset: true })
    .transform((value) => new Date(value))
    .optional()
    .describe('ISO 8601 date-time: the board as it stood then, replayed from the events (at most AS_OF_EVENT_BUDGET of them, else 400)'),
})

const Money = z.string().describe('Decimal string, computed in SQL numeric')
export const Totals = z.object({
  count: z.number().int(),
  amount_sum: Money.nullable().describe('Null when the filtered deals use more than one currency; "0" when nothing is priced'),
  weighted_sum: Money.nullable().describe('Sum of amount × probability / 100; null when more than one currency'),
  by_currency: z.array(z.object({ currency: z.string(), amount_sum: Money, weighted_sum: Money })).describe('One entry per currency, by code; no currency counts in the default'),
  stalled_count: z.number().int(),
})

export const DealList = z.object({
  opportunities_count: z.number().int(),
  totals: Totals,
  offset: z.number().int(),
  per_page: z.number().int(),
  page_number: z.array(z.number().int()).describe('Every page number of the filtered set, from 1'),
  opportunities: z.array(Opportunity),
  accounts_list: z.array(Account),
  contacts_list: z.array(Contact),
  tags: z.array(TagRef),
  stage: Pairs.describe("`[code, label]` pairs of the default pipeline"),
  lead_source: Pairs,
  currency: Pairs,
})

export const Column = z.object({
  id: z.string().describe('The stage code'),
  name: z.string().describe('The stage label'),
  order: z.number().int(),
  kind: z.enum(STAGE_KINDS),
  color: z.string().nullable().describe('Stages have no color yet: always null'),
  stage_type: z.enum(STAGE_KINDS).describe('The same as kind'),
  expected_days: z.number().int().nullable(),
  warning_days: z.number().int().nullable(),
  is_status_column: z.boolean(),
  wip_limit: z.number().int().nullable().describe('No WIP limits yet: always null'),
  item_count: z.number().int().describe("The column's full count under the filters"),
  items: z.array(Card).describe('At most 100 cards, by kanban_order'),
})
export const Board = z.object({ mode: z.literal('status'), pipeline: z.object({ id: z.uuid(), name: z.string(), is_default: z.boolean() }), columns: z.array(Column), total_items: z.number().int() })

export const NoteAnswer = z.object({ opportunity_obj: Opportunity, attachments: z.array(AttachmentView), comments: z.array(CommentView) })

export const LineItemParams = z.object({ opportunity_id: z.uuid(), line_item_id: z.uuid() })
export const DealParams = LineItemParams.pick({ opportunity_id: true })
export const LineItemBody = z.object({
  name: z.string().trim().min(1, 'This field may not be blank.').max(255),
  description: optionalText(10_000),
  quantity: Amount.refine((v) => v !== '0.00', 'Expected a quantity above 0.').describe('Above 0, at most 2 decimals'),
  unit_price: Amount.describe('Non-negative, at most 2 decimals'),
  discount_type: nullable(z.enum(DISCOUNT_TYPES)),
  discount_value: nullable(Amount).describe('With discount_type: a percentage (at most 100) or an amount'),
})
export const LineItemList = z.object({ line_items: z.array(LineItemView), line_items_total: z.string(), amount_source: z.enum(['MANUAL', 'CALCULATED']) })

registerComponents({ Opportunity, Card, Totals, LineItemView, Column, CommentView, AttachmentView })
