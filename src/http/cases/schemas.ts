import { z } from 'zod'
import { CASE_PRIORITIES, CASE_STATUSES, CASE_TYPES } from '../../commands/case/fields.ts'
import { CASE_ORDERINGS } from '../../projections/case/queries.ts'
import { Choices, RelationList, UserChoice, blankable } from '../accounts/schemas.ts'
import { CustomField } from '../custom-fields/schemas.ts'
import { IdFilter, PrimaryEmailContactRef, optionalText } from '../kernel/relations.ts'
import { formBoolean, formNumber } from '../kernel/schemas/form-values.ts'
import { PageQuery } from '../kernel/schemas/common.ts'
import { AttachmentView, CommentView } from '../kernel/schemas/notes.ts'
import { CUSTOM_FIELD_ENTRIES } from '../kernel/unknown-fields.ts'
import { OpportunityBody } from '../opportunities/schemas.ts'
import { Solution } from '../solutions/views.ts'
import { Case } from './case-views.ts'

/** The bodies, filters and answers of /api/cases/ (the original's CaseListView, CaseDetailView). */

const CaseFieldsBody = z
  .object({
    name: z.string().trim().min(1, 'This field may not be blank.').max(64),
    status: z.enum(CASE_STATUSES).optional().describe('Default New. Closed needs closed_on (given, or already on the case)'),
    priority: z.enum(CASE_PRIORITIES).optional().describe('Default Normal; sets the SLA targets when the case opens'),
    case_type: blankable(z.enum(CASE_TYPES)).describe('Question, Incident or Problem; blank or null for none'),
    closed_on: blankable(z.iso.date('Expected a date, YYYY-MM-DD.')).describe('YYYY-MM-DD; required to close'),
    description: optionalText(10_000),
    account: blankable(z.uuid()).describe("An account of this organization. Set on creation only: an update's account is ignored, as the original's"),
    contacts: RelationList('live contacts').optional(),
    teams: RelationList('teams').optional(),
    assigned_to: RelationList('active profiles').optional(),
    tags: RelationList('live tags').optional(),
    parent: blankable(z.uuid()).describe('The case above this one (a live case of this organization; no cycle, at most 3 levels, not a merged case); a PUT that leaves it out keeps it'),
    is_problem: formBoolean(z.boolean()).optional().describe('Marks the case as a problem (an umbrella ticket)'),
    custom_fields: OpportunityBody.shape.custom_fields.describe("Values of the organization's custom fields for cases, by key (an object, or its JSON text in a form body); wins over cf_<key>. 400 with errors.custom_fields.<key>"),
  })
  .catchall(CUSTOM_FIELD_ENTRIES)
  .describe('Also `cf_<key>`: a custom field value. Any other key is refused (400 naming it)')
export const CaseBodySchema = CaseFieldsBody
export const CasePatch = CaseFieldsBody.partial()

const Text = z.string().optional()
export const CaseFilterQuery = z
  .object({
    name: Text.describe('Case-insensitive contains on the name'),
    search: Text.describe('Case-insensitive contains on the name or the description'),
    status: z.union([z.string(), z.array(z.string())]).optional().describe('Repeatable (any of): New, Assigned, Pending, Closed, Rejected, Duplicate; `?status=New&status=Assigned&status=Pending` is "open"'),
    priority: Text.describe('Low, Normal, High or Urgent'),
    case_type: Text.describe('Question, Incident or Problem'),
    account: Text.describe('Cases of an account (its id); a malformed id matches nothing'),
    assigned_to: IdFilter('cases assigned to a profile'),
    tags: IdFilter('cases carrying a tag'),
    created_at__gte: Text.describe('YYYY-MM-DD (UTC day) or an ISO instant'),
    created_at__lte: Text.describe('YYYY-MM-DD, the whole day included, or an ISO instant'),
    sla_breached: Text.describe('`true`: only cases past a first-response or resolution deadline now'),
    show_merged: Text.describe('`true` also lists merged duplicates (status Duplicate), which are left out by default'),
    ordering: z.enum(CASE_ORDERINGS).optional().describe('Default -created_at; priority orders by rank (Urgent highest)'),
  })
  .catchall(z.union([z.string(), z.array(z.string())]))
  .describe("Also cf_<key>=value: the case's custom field equals the value; an unknown key or a malformed value matches nothing. Blank values are no filter")
export const CaseListQuery = PageQuery.extend(CaseFilterQuery.shape)
  .extend({ slim: Text.describe('`true` leaves out accounts_list and contacts_list (the form pickers)') })
  .catchall(z.union([z.string(), z.array(z.string())]))

const AccountChoice = z.object({ id: z.uuid(), name: z.string() })

export const CaseList = z
  .object({
    count: z.number().int(),
    offset: z.number().int().nullable().describe("Where the next page starts; null after the last page (the original's meaning of `offset` here)"),
    limit: z.number().int(),
    results: z.array(Case),
    cases_count: z.number().int().describe('How many cases match'),
    cases: z.array(Case).describe('The page, newest first'),
    open_count: z.number().int().describe('Open cases (New, Assigned, Pending) of the whole filtered set, not the page'),
    urgent_count: z.number().int().describe('Open Urgent cases of the filtered set'),
    awaiting_first_reply: z.number().int().describe('Open cases of the filtered set nobody has answered yet'),
    status: Choices,
    priority: Choices,
    type_of_case: Choices,
    users: z.array(UserChoice).describe('Whom a case may be assigned to, as the original offers it: every active member to an admin, the admins to anyone else'),
    accounts_list: z.array(AccountChoice).optional().describe('Left out with slim=true'),
    contacts_list: z.array(PrimaryEmailContactRef).optional().describe('Left out with slim=true'),
  })
  .describe('A non-admin sees (and counts) only cases they created, are assigned to or watch')

export const WatchingList = z.object({ cases: z.array(Case), count: z.number().int() })

const NoteLists = {
  comments: z.array(CommentView).describe('Live public comments, oldest first'),
  internal_notes: z.array(CommentView).describe('Live internal notes (for the team only), oldest first'),
  attachments: z.array(AttachmentView).describe('Live attachments, oldest first'),
}
export const CaseDetail = z.object({
  cases_obj: Case,
  merged_from_cases: z.array(z.object({ id: z.uuid(), name: z.string(), merged_at: z.string() })).describe('The duplicates merged into this case, latest first'),
  solutions: z.array(Solution).describe('The live knowledge-base solutions linked to this case, newest first, as /api/cases/solutions/ answers them'),
  ...NoteLists,
  contacts: z.array(Case.shape.contacts.element),
  comment_permission: z.boolean().describe('Whether the caller may reply (admin, creator or assignee)'),
  users_mention: z.array(z.object({ user__email: z.string() })),
  custom_field_definitions: z.array(CustomField).describe("The organization's active custom fields for cases, in display order"),
  status: Choices,
  priority: Choices,
  type_of_case: Choices,
})
export const CaseNoteAnswer = z.object({ cases_obj: Case, ...NoteLists })

export const WatchAnswer = z.object({ watching: z.literal(true), subscribed_via: z.string() })
export const Watchers = z.object({
  watchers: z.array(z.object({ id: z.string().describe('The case and profile ids joined: one watch'), profile_id: z.uuid(), user_id: z.uuid().nullable(), name: z.string(), email: z.string(), subscribed_via: z.string(), created_at: z.string() })),
  count: z.number().int(),
  is_current_user_watching: z.boolean(),
})

export const LinkBody = z.object({ parent_id: blankable(z.uuid()).describe('The new parent case; null or blank unlinks') })
export const LinkAnswer = z.object({ id: z.uuid(), parent: z.object({ id: z.uuid(), name: z.string(), status: z.enum(CASE_STATUSES) }).nullable() })

const NodeFields = z.object({ id: z.uuid(), name: z.string(), status: z.string(), priority: z.string(), is_problem: z.boolean(), is_active: z.boolean(), assigned_to: z.array(z.uuid()), truncated: z.boolean().optional().describe('true at the depth limit, where children are not shown') })
/** A tree node with `levels` levels of children under it; spelled out level by level, since the tree is at most 3 levels deep and the serializer takes no recursive schema. */
const nodeWith = (levels: number): z.ZodType<z.infer<typeof NodeFields> & { children: unknown[] }> =>
  NodeFields.extend({ children: levels === 0 ? z.array(z.unknown()).max(0).describe('Empty: the depth limit') : z.array(nodeWith(levels - 1)) })
export const TreeNode = nodeWith(3)
export const TreeAnswer = z.object({ root: TreeNode.describe('The topmost ancestor of the case, with its descendants (3 levels at most)'), focus_id: z.uuid() })

/** The board's filters: the list's, and a case pipeline's stages as columns. */
export const CaseBoardQuery = CaseFilterQuery.extend({ pipeline_id: z.string().optional().describe('A case pipeline: its board (a column per stage, its cases only); without it, the status board (a column per status, every case)') })
const CaseColumn = z.object({
  id: z.string().describe('The status on the status board; the stage id on a pipeline board'),
  name: z.string(),
  order: z.number().int(),
  color: z.string().nullable(),
  stage_type: z.enum(['open', 'closed', 'rejected']),
  stage_kind: z.enum(['open', 'won', 'lost']).nullable().describe("The pipeline stage's kind; null on the status board"),
  maps_to_status: z.enum(CASE_STATUSES).describe('The status a case entering the column takes'),
  is_status_column: z.boolean(),
  wip_limit: z.null(),
  case_count: z.number().int().describe('Every case of the column, though at most 100 are shown'),
  cases: z.array(Case).describe('By kanban_order, then id'),
})
export const CaseBoard = z.object({ mode: z.enum(['status', 'pipeline']), pipeline: z.object({ id: z.uuid(), name: z.string(), is_default: z.boolean() }).nullable(), columns: z.array(CaseColumn), total_cases: z.number().int() })
export const CaseMoveBody = z.object({
  stage_id: z.uuid().nullable().optional().describe('A stage of a case pipeline of this organization (its status follows the stage); null takes the case off any pipeline'),
  status: z.enum(CASE_STATUSES).optional().describe("A status board column; wins over the stage's status. Into Closed, the case is dated (closed_on) the day of the move unless it has a date"),
  kanban_order: formNumber(z.number().finite()).optional().describe('The position in the column, as given'),
  above_case_id: z.uuid().nullable().optional().describe('Place right below this card of the target column'),
  below_case_id: z.uuid().nullable().optional().describe('Place right above this card of the target column'),
})
export const CaseMoveAnswer = z.object({ error: z.literal(false), message: z.string(), case: Case })

export const CloseWithChildrenBody = z.object({
  cascade: formBoolean(z.boolean()).optional().describe("Also close every open case under it; left out, the organization's auto_close_children_on_parent_close decides"),
  resolution_comment: z.string().trim().max(1000).optional().describe('Left on each case closed by the cascade as an internal note'),
})
export const CloseWithChildrenAnswer = z.object({ id: z.uuid(), status: z.enum(CASE_STATUSES), cascaded_case_ids: z.array(z.uuid()), resolution_comment: z.string() })
