import { z } from 'zod'
import type { AccountEvent } from '../commands/account/account.ts'
import { BOARD_ROLES, CARD_PRIORITIES } from '../commands/board/board.ts'
import type { BoardEvent } from '../commands/board/board.ts'
import type { ContactEvent } from '../commands/contact/contact.ts'
import { CUSTOM_FIELD_MODULES, CUSTOM_FIELD_TYPES } from '../commands/custom-field/custom-field.ts'
import type { CustomFieldEvent } from '../commands/custom-field/custom-field.ts'
import { GOAL_TYPES, OWNER_TYPES, PERIOD_TYPES } from '../commands/goal/goal.ts'
import type { GoalEvent } from '../commands/goal/goal.ts'
import { LEAD_RATINGS, LEAD_SOURCES as LEAD_LEAD_SOURCES, LEAD_STATUSES } from '../commands/lead/lead.ts'
import type { LeadEvent } from '../commands/lead/lead.ts'
import type { NameClaimEvent } from '../commands/name-claim.ts'
import { LEAD_SOURCES, OPPORTUNITY_TYPES } from '../commands/opportunity/enums.ts'
import { DISCOUNT_TYPES } from '../commands/opportunity/line-items.ts'
import type { OpportunityEvent } from '../commands/opportunity/opportunity.ts'
import type { PipelineEvent } from '../commands/pipeline/pipeline.ts'
import { SOLUTION_STATUSES } from '../commands/solution/solution.ts'
import type { SolutionEvent } from '../commands/solution/solution.ts'
import { STAGE_KINDS } from '../commands/pipeline/stage-rules.ts'
import type { NotificationEvent } from '../commands/notification/notification.ts'
import { TASK_PRIORITIES, TASK_STATUSES } from '../commands/task/fields.ts'
import type { TaskEvent } from '../commands/task/task.ts'
import type { TeamEvent } from '../commands/team/team.ts'
import type { WebhookEvent } from '../commands/webhook/webhook.ts'
import type { CredentialAuditEvent } from '../identity/audit.ts'
import { MODULES } from '../modules/modules.ts'
import { At, By, CustomValues, Day, Decimal, Id, Ids, at, changesOf, texts } from './event-schemas.ts'
import type { EventDeclaration } from './event-schemas.ts'
import { currentVersion, upcast } from './versions.ts'

/**
 * The event catalogue (issue 8, "Event hygiene"): every stored event type with the stream category
 * it is written to, its current schema version (versions.ts) and a zod schema of its `data` at that
 * version. The schemas mirror the event unions of the command modules; the compile-time check at
 * the bottom fails when one drifts from its TypeScript type. Published as a JSON Schema document
 * (`eventCatalogueDocument`, served at GET /api/events/schema/).
 */

// Deals (opportunity-<id>).
const dealShape = {
  name: z.string(),
  account: Id.nullable(),
  opportunity_type: z.enum(OPPORTUNITY_TYPES).nullable(),
  currency: z.string().nullable(),
  amount: Decimal.nullable(),
  probability: z.number().min(0).max(100).nullable(),
  closed_on: Day.nullable(),
  lead_source: z.enum(LEAD_SOURCES).nullable(),
  description: z.string().nullable(),
  is_active: z.boolean(),
  contacts: Ids,
  tags: Ids,
  teams: Ids,
  assigned_to: Ids,
  closed_by: By,
  custom_fields: CustomValues,
}
const placementShape = { pipeline_id: Id, stage: z.string(), stage_id: Id, stage_kind: z.enum(STAGE_KINDS) }
const Placement = z.strictObject(placementShape)
const attachmentShape = { attachment_id: Id, file_name: z.string(), content_type: z.string(), size: z.number().int().min(0), storage_key: z.string() }
const lineItemInputShape = { name: z.string(), description: z.string().nullable(), quantity: Decimal, unit_price: Decimal, discount_type: z.enum(DISCOUNT_TYPES).nullable(), discount_value: Decimal.nullable() }

/** The comment and attachment events of a record's own stream: `<Prefix>CommentAdded` … (commands/notes.ts). */
const noteData = {
  CommentAdded: z.strictObject({ comment_id: Id, comment: z.string(), by: By, mentions: Ids.optional().describe('The profiles its `@name`s named when it was written; absent when none'), ...at }),
  CommentEdited: z.strictObject({ comment_id: Id, comment: z.string(), ...at }),
  CommentDeleted: z.strictObject({ comment_id: Id, ...at }),
  AttachmentAdded: z.strictObject({ ...attachmentShape, by: By, ...at }),
  AttachmentRemoved: z.strictObject({ attachment_id: Id, ...at }),
}
type NoteSuffix = keyof typeof noteData
const noteMeanings: Record<NoteSuffix, (record: string) => string> = {
  CommentAdded: (record) => `A comment was added to a ${record}.`,
  CommentEdited: (record) => `A ${record}'s comment was edited by its author or an admin.`,
  CommentDeleted: (record) => `A ${record}'s comment was removed.`,
  AttachmentAdded: (record) => `A file was attached to a ${record} (\`storage_key\` names it in the file store; the bytes never enter the log).`,
  AttachmentRemoved: (record) => `A ${record}'s attachment was removed.`,
}
/** The definitions of one record module's note events, e.g. `LeadCommentAdded` on `lead-<id>`. */
function noteDefinitions<P extends string>(prefix: P, stream: string, record: string) {
  const entries = (Object.keys(noteData) as NoteSuffix[]).map((suffix) => [`${prefix}${suffix}`, { stream, description: noteMeanings[suffix](record), data: noteData[suffix] }])
  return Object.fromEntries(entries) as { [S in NoteSuffix as `${P}${S}`]: { stream: string; description: string; data: (typeof noteData)[S] } }
}

// Pipelines (pipeline-<id>).
const Stage = z.strictObject({
  id: Id,
  code: z.string(),
  label: z.string(),
  order: z.number().int().min(1),
  kind: z.enum(STAGE_KINDS),
  expected_days: z.number().int().nullable(),
  warning_days: z.number().int().nullable(),
  probability: z.number().min(0).max(100).nullable(),
})

// Accounts and contacts (account-<id>, contact-<id>): commands/record.ts events.
const accountShape = {
  name: z.string(),
  ...texts('email', 'phone', 'website', 'industry', 'address_line', 'city', 'state', 'postcode', 'country', 'description'),
  // v2 (issue 22): the original's business fields.
  number_of_employees: z.number().int().min(0).nullable(),
  annual_revenue: Decimal.nullable(),
  currency: z.string().nullable(),
  is_active: z.boolean(),
  assigned_to: Ids,
  tags: Ids,
}
const contactShape = {
  first_name: z.string(),
  ...texts('last_name', 'email', 'phone', 'title', 'description'),
  // v2 (issue 22): the original's professional, communication and address fields.
  ...texts('organization', 'department', 'linkedin_url', 'address_line', 'city', 'state', 'postcode', 'country'),
  do_not_call: z.boolean(),
  is_active: z.boolean(),
  account: Id.nullable(),
  assigned_to: Ids,
  tags: Ids,
}

// Solutions (solution-<id>): knowledge-base articles, commands/record.ts events.
const solutionShape = { title: z.string(), description: z.string().nullable(), status: z.enum(SOLUTION_STATUSES), is_published: z.boolean() }

// Tasks (task-<id>).
const taskShape = {
  title: z.string(),
  status: z.enum(TASK_STATUSES),
  priority: z.enum(TASK_PRIORITIES),
  due_date: Day.nullable(),
  description: z.string().nullable(),
  account: Id.nullable(),
  opportunity: Id.nullable(),
  case: Id.nullable(),
  lead: Id.nullable(),
  contacts: Ids,
  teams: Ids,
  assigned_to: Ids,
  tags: Ids,
  custom_fields: CustomValues,
}
const TaskSummary = z.strictObject({ title: taskShape.title, status: taskShape.status, priority: taskShape.priority, due_date: taskShape.due_date, assigned_to: Ids, account: taskShape.account, opportunity: taskShape.opportunity, case: taskShape.case, lead: taskShape.lead }).describe('The task after the event: title, state, assignees and parent')

// Leads (lead-<id>).
const leadShape = {
  first_name: z.string(),
  ...texts('salutation', 'last_name', 'title', 'email', 'phone', 'company_name', 'industry', 'website', 'address_line', 'city', 'state', 'postcode', 'country', 'description'),
  status: z.enum(LEAD_STATUSES),
  source: z.enum(LEAD_LEAD_SOURCES).nullable(),
  rating: z.enum(LEAD_RATINGS).nullable(),
  opportunity_amount: Decimal.nullable(),
  currency: z.string().nullable(),
  probability: z.number().min(0).max(100).nullable(),
  close_date: Day.nullable(),
  account: Id.nullable(),
  contacts: Ids,
  tags: Ids,
  teams: Ids,
  assigned_to: Ids,
  custom_fields: CustomValues,
}

// Custom fields (custom_field-<id>): a select field's choice.
const FieldOption = z.strictObject({ value: z.string(), label: z.string() })

// Goals (goal-<id>).
const goalShape = {
  name: z.string(),
  goal_type: z.enum(GOAL_TYPES),
  owner_type: z.enum(OWNER_TYPES),
  owner_id: Id.nullable(),
  period_type: z.enum(PERIOD_TYPES),
  period_start: Day,
  period_end: Day,
  target_amount: Decimal,
  currency: z.string(),
  is_active: z.boolean(),
}

const BoardColumn = z.strictObject({ column_id: Id, name: z.string(), order: z.number().int(), color: z.string(), limit: z.number().int().nullable() })
const BoardCardContent = z.strictObject({ title: z.string(), description: z.string().nullable(), priority: z.enum(CARD_PRIORITIES), due_date: At.nullable(), assigned_to: Ids })

/** Every stored event type: where it is written, what it means, and its data's schema at the current version. */
const DEFINITIONS = {
  // opportunity-<id>
  OpportunityCreated: { stream: 'opportunity', description: 'A deal was created in a stage of a pipeline (v2: with its custom field values).', data: z.strictObject({ opportunity_id: Id, org_id: Id, ...dealShape, ...placementShape, created_by: By, kanban_order: z.number(), ...at }) },
  OpportunityUpdated: { stream: 'opportunity', description: "Fields of a deal changed: only those, each with its value before and after.", data: z.strictObject({ changes: changesOf(dealShape), ...at }) },
  OpportunityStageChanged: { stream: 'opportunity', description: 'A deal moved to another stage (or pipeline); `by` moved it.', data: z.strictObject({ from: Placement, to: Placement, by: By, ...at }) },
  OpportunityPositioned: { stream: 'opportunity', description: "A deal's card moved within its kanban column.", data: z.strictObject({ kanban_order: z.number(), ...at }) },
  OpportunityDeleted: { stream: 'opportunity', description: 'A deal was (soft) deleted.', data: z.strictObject(at) },
  ...noteDefinitions('Opportunity', 'opportunity', 'deal'),
  OpportunityLineItemAdded: { stream: 'opportunity', description: 'A line item was added to a deal (its amount follows in OpportunityUpdated).', data: z.strictObject({ line_item: z.strictObject({ id: Id, ...lineItemInputShape }), ...at }) },
  OpportunityLineItemChanged: { stream: 'opportunity', description: "A deal's line item changed: only the changed values.", data: z.strictObject({ line_item_id: Id, changes: z.strictObject(lineItemInputShape).partial(), ...at }) },
  OpportunityLineItemRemoved: { stream: 'opportunity', description: "A deal's line item was removed.", data: z.strictObject({ line_item_id: Id, ...at }) },
  // pipeline-<id>; lead pipelines write the same events to lead_pipeline-<id>
  PipelineCreated: { stream: 'pipeline', description: 'A pipeline was created with its stages (whole snapshots).', data: z.strictObject({ pipeline_id: Id, org_id: Id, name: z.string(), is_default: z.boolean(), stages: z.array(Stage), created_by: By, ...at }) },
  PipelineRenamed: { stream: 'pipeline', description: 'A pipeline was renamed.', data: z.strictObject({ name: z.string(), ...at }) },
  StageAdded: { stream: 'pipeline', description: 'A stage was added at the end of a pipeline.', data: z.strictObject({ stage: Stage, ...at }) },
  StageUpdated: {
    stream: 'pipeline',
    description: 'A stage changed label, kind, thresholds or default probability: only the changed values.',
    data: z.strictObject({ stage_id: Id, label: z.string().optional(), kind: z.enum(STAGE_KINDS).optional(), expected_days: z.number().int().nullable().optional(), warning_days: z.number().int().nullable().optional(), probability: z.number().min(0).max(100).nullable().optional(), ...at }),
  },
  StagesReordered: { stream: 'pipeline', description: "A pipeline's stages were put in a new order (every stage id, in order).", data: z.strictObject({ stage_ids: Ids, ...at }) },
  StageRemoved: { stream: 'pipeline', description: 'A stage with no deals was removed.', data: z.strictObject({ stage_id: Id, ...at }) },
  PipelineDeleted: { stream: 'pipeline', description: 'A pipeline with no deals was deleted.', data: z.strictObject(at) },
  StageLocked: { stream: 'pipeline', description: 'A stage was closed to deals while its deals are counted (before a removal or kind change).', data: z.strictObject({ stage_id: Id, ...at }) },
  StageUnlocked: { stream: 'pipeline', description: 'A locked stage was opened to deals again.', data: z.strictObject({ stage_id: Id, ...at }) },
  PipelineLocked: { stream: 'pipeline', description: 'A whole pipeline was closed to deals while its deals are counted (before deletion).', data: z.strictObject(at) },
  PipelineUnlocked: { stream: 'pipeline', description: 'A locked pipeline was opened to deals again.', data: z.strictObject(at) },
  // account-<id>, contact-<id>
  AccountCreated: { stream: 'account', description: 'An account (customer organization) was created (v2: with employees, annual revenue and currency).', data: z.strictObject({ account_id: Id, org_id: Id, ...accountShape, created_by: By, ...at }) },
  AccountUpdated: { stream: 'account', description: 'Fields of an account changed: the new values of those only.', data: z.strictObject({ ...z.object(accountShape).partial().shape, ...at }) },
  AccountDeleted: { stream: 'account', description: 'An account was (soft) deleted.', data: z.strictObject(at) },
  ContactCreated: { stream: 'contact', description: 'A contact (a person) was created (v2: with organization, department, LinkedIn, address, do_not_call and is_active).', data: z.strictObject({ contact_id: Id, org_id: Id, ...contactShape, created_by: By, ...at }) },
  ContactUpdated: { stream: 'contact', description: 'Fields of a contact changed: the new values of those only.', data: z.strictObject({ ...z.object(contactShape).partial().shape, ...at }) },
  ContactDeleted: { stream: 'contact', description: 'A contact was (soft) deleted.', data: z.strictObject(at) },
  ...noteDefinitions('Account', 'account', 'account'),
  ...noteDefinitions('Contact', 'contact', 'contact'),
  AccountEmailSent: {
    stream: 'account',
    description: 'Mail was sent from an account to some of its organization\'s contacts (their ids, not their addresses) and handed to the mailer.',
    data: z.strictObject({ email_id: Id, subject: z.string(), body: z.string(), recipients: Ids, by: By, ...at }),
  },
  // solution-<id>
  SolutionCreated: { stream: 'solution', description: 'A knowledge-base solution (article) was created.', data: z.strictObject({ solution_id: Id, org_id: Id, ...solutionShape, created_by: By, ...at }) },
  SolutionUpdated: { stream: 'solution', description: 'Fields of a solution changed (review status, publication, text): the new values of those only.', data: z.strictObject({ ...z.object(solutionShape).partial().shape, ...at }) },
  SolutionDeleted: { stream: 'solution', description: 'A solution was (soft) deleted.', data: z.strictObject(at) },
  // lead-<id>
  LeadCreated: { stream: 'lead', description: 'A lead (prospective customer) was created.', data: z.strictObject({ lead_id: Id, org_id: Id, ...leadShape, created_by: By, ...at }) },
  LeadUpdated: { stream: 'lead', description: 'Fields of a lead changed: only those, each with its value before and after.', data: z.strictObject({ changes: changesOf(leadShape), ...at }) },
  LeadConverted: { stream: 'lead', description: 'A lead was converted into the account, contact and deal named (status `converted`).', data: z.strictObject({ account_id: Id, contact_id: Id, opportunity_id: Id, by: By, ...at }) },
  LeadDeleted: { stream: 'lead', description: 'A lead was (soft) deleted.', data: z.strictObject(at) },
  LeadMoved: { stream: 'lead', description: 'A lead card was placed or moved on the lead board: a stage of a lead pipeline (`from` null on its first placement) and its order in the column.', data: z.strictObject({ from: Placement.nullable(), to: Placement, kanban_order: z.number(), by: By, ...at }) },
  ...noteDefinitions('Lead', 'lead', 'lead'),
  // task-<id>
  TaskCreated: { stream: 'task', description: 'A task was created: its title, status, priority, due date, assignees and at most one parent (account, opportunity, case or lead) (v2: with its custom field values).', data: z.strictObject({ task_id: Id, org_id: Id, ...taskShape, created_by: By, ...at }) },
  TaskUpdated: { stream: 'task', description: 'Fields of a task changed: only those, each before and after (custom_fields as the whole object of values), with the task as it now is (`task`).', data: z.strictObject({ changes: changesOf(taskShape), task: TaskSummary, by: By, ...at }) },
  TaskDeleted: { stream: 'task', description: 'A task was (soft) deleted.', data: z.strictObject({ by: By, ...at }) },
  TaskMoved: { stream: 'task', description: 'A task card was moved on the task board: into a stage of a task pipeline (`to`), or onto the status board (`to` null); `status` when the move changed it; its order in the column.', data: z.strictObject({ from: Placement.nullable(), to: Placement.nullable(), status: z.strictObject({ from: taskShape.status, to: taskShape.status }).optional(), kanban_order: z.number(), task: TaskSummary, by: By, ...at }) },
  ...noteDefinitions('Task', 'task', 'task'),
  // team-<id>
  TeamCreated: { stream: 'team', description: 'A team was created with its members (sorted, whole).', data: z.strictObject({ team_id: Id, org_id: Id, name: z.string(), description: z.string().nullable(), users: Ids, created_by: By, ...at }) },
  TeamUpdated: { stream: 'team', description: 'A team was renamed or redescribed: only the changed values.', data: z.strictObject({ name: z.string().optional(), description: z.string().nullable().optional(), ...at }) },
  TeamMembersChanged: { stream: 'team', description: "A team's members changed (the whole new set, sorted).", data: z.strictObject({ users: Ids, ...at }) },
  TeamDeleted: { stream: 'team', description: 'A team was deleted for good.', data: z.strictObject(at) },
  // goal-<id>
  GoalSet: { stream: 'goal', description: 'A sales goal was set for a profile, a team or the organization (v2: with its goal type, period type and active flag).', data: z.strictObject({ goal_id: Id, org_id: Id, ...goalShape, created_by: By, ...at }) },
  GoalChanged: { stream: 'goal', description: 'A goal changed: the new values of the changed fields.', data: z.strictObject({ changes: z.strictObject(goalShape).partial(), ...at }) },
  GoalDeleted: { stream: 'goal', description: 'A goal was deleted.', data: z.strictObject(at) },
  // custom_field-<id>
  CustomFieldDefined: {
    stream: 'custom_field',
    description: 'A custom field was defined for a module (key, module and type never change; v2: options as {value, label} pairs, is_filterable, display_order).',
    data: z.strictObject({ field_id: Id, org_id: Id, module: z.enum(CUSTOM_FIELD_MODULES), key: z.string(), label: z.string(), type: z.enum(CUSTOM_FIELD_TYPES), options: z.array(FieldOption), required: z.boolean(), is_filterable: z.boolean(), display_order: z.number().int().min(0), is_active: z.boolean(), created_by: By, ...at }),
  },
  CustomFieldChanged: { stream: 'custom_field', description: 'A custom field changed label, required, options, filterable, display order or active: only the changed values (v2: options as pairs).', data: z.strictObject({ label: z.string().optional(), required: z.boolean().optional(), options: z.array(FieldOption).optional(), is_filterable: z.boolean().optional(), display_order: z.number().int().min(0).optional(), is_active: z.boolean().optional(), ...at }) },
  CustomFieldRemoved: { stream: 'custom_field', description: 'A custom field was (soft, finally) deleted.', data: z.strictObject(at) },
  // webhook-<id>
  WebhookCreated: { stream: 'webhook', description: "A webhook subscription was created: where the organization's events are POSTed, and which types (never its secret).", data: z.strictObject({ webhook_id: Id, org_id: Id, url: z.string(), event_types: z.array(z.string()), created_by: By, ...at }) },
  WebhookChanged: { stream: 'webhook', description: 'A webhook changed URL, event types or active flag: only the changed values.', data: z.strictObject({ url: z.string().optional(), event_types: z.array(z.string()).optional(), is_active: z.boolean().optional(), ...at }) },
  WebhookDisabled: { stream: 'webhook', description: 'The delivery worker disabled a webhook after a streak of failed deliveries.', data: z.strictObject({ reason: z.string(), failures: z.number().int().min(0), ...at }) },
  WebhookDeleted: { stream: 'webhook', description: 'A webhook subscription was deleted.', data: z.strictObject(at) },
  // notifications-<profile id>
  NotificationRaised: {
    stream: 'notifications',
    description: "A scheduled process raised a notification for the stream's member (a task due or overdue, a deal turned red), under an id derived from its cause.",
    data: z.strictObject({ notification_id: Id, org_id: Id, recipient_id: Id, verb: z.string(), entity_type: z.string(), entity_id: Id, data: z.record(z.string(), z.union([z.string(), z.number(), z.null()])), ...at }),
  },
  NotificationRead: { stream: 'notifications', description: 'The member read one of their notifications.', data: z.strictObject({ notification_id: Id, ...at }) },
  NotificationsReadAll: { stream: 'notifications', description: 'The member read all their notifications up to `before`: those that were unread then.', data: z.strictObject({ notification_ids: Ids, before: At, ...at }) },
  NotificationDeleted: { stream: 'notifications', description: 'The member deleted one of their notifications.', data: z.strictObject({ notification_id: Id, ...at }) },
  // board-<id>: the board, its columns and its cards
  BoardCreated: { stream: 'board', description: 'A kanban board was created with its first columns; its owner is the creator.', data: z.strictObject({ board_id: Id, org_id: Id, name: z.string(), description: z.string().nullable(), is_archived: z.boolean(), owner_id: By, columns: z.array(BoardColumn), ...at }) },
  BoardUpdated: { stream: 'board', description: 'A board was renamed, redescribed, archived or unarchived: only the changed values.', data: z.strictObject({ name: z.string().optional(), description: z.string().nullable().optional(), is_archived: z.boolean().optional(), ...at }) },
  BoardMembersChanged: { stream: 'board', description: "A board's members changed (the whole new set besides the owner, sorted by profile).", data: z.strictObject({ members: z.array(z.strictObject({ profile_id: Id, role: z.enum(BOARD_ROLES).exclude(['owner']) })), ...at }) },
  BoardDeleted: { stream: 'board', description: 'A board was deleted with its columns and cards.', data: z.strictObject(at) },
  BoardColumnAdded: { stream: 'board', description: 'A column was added to a board.', data: z.strictObject({ column: BoardColumn, ...at }) },
  BoardCardAdded: { stream: 'board', description: 'A card was added to a column at a rank (cards sort by rank).', data: z.strictObject({ card_id: Id, column_id: Id, rank: z.number(), content: BoardCardContent, created_by: By, ...at }) },
  BoardCardChanged: { stream: 'board', description: "A card's content, assignees or completion changed: only the changed values.", data: z.strictObject({ card_id: Id, changes: BoardCardContent.extend({ completed_at: At.nullable() }).partial(), ...at }) },
  BoardCardMoved: { stream: 'board', description: 'A card moved within its column or to another column of the board, to a new rank.', data: z.strictObject({ card_id: Id, column_id: Id, rank: z.number(), ...at }) },
  BoardCardsRanked: { stream: 'board', description: "A column's cards were renumbered, in the order listed, a step apart (when a drop found no room between two ranks).", data: z.strictObject({ column_id: Id, card_ids: Ids, ...at }) },
  BoardCardRemoved: { stream: 'board', description: 'A card was deleted from its board.', data: z.strictObject({ card_id: Id, ...at }) },
  // name_claim-<scope>-<org>-<hash>
  NameClaimed: { stream: 'name_claim', description: 'A unique name (per organization and scope, case-insensitive) was claimed by a record.', data: z.strictObject({ owner_id: Id, name: z.string() }) },
  NameReleased: { stream: 'name_claim', description: 'A claimed name was freed by its owner.', data: z.strictObject({ owner_id: Id }) },
  // org_audit-<org id>
  PersonalAccessTokenCreated: { stream: 'org_audit', description: 'A personal access token was created (never its secret or hash).', data: z.strictObject({ token_id: Id, profile_id: Id, name: z.string(), token_prefix: z.string(), scopes: z.array(z.string()), expires_at: z.string().nullable() }) },
  PersonalAccessTokenFirstUsed: { stream: 'org_audit', description: 'A personal access token was used for the first time.', data: z.strictObject({ token_id: Id, profile_id: Id }) },
  PersonalAccessTokenRevoked: { stream: 'org_audit', description: 'A personal access token was revoked.', data: z.strictObject({ token_id: Id, profile_id: Id, revoked_by: By }) },
  OrganizationApiKeyRotated: { stream: 'org_audit', description: "The organization's API key was rotated.", data: z.strictObject({ key_prefix: z.string(), rotated_by: By }) },
} satisfies Record<StoredEvent['type'], { stream: string; description: string; data: z.ZodType }>

/** The event unions declared here, not yet in their modules' manifests (src/modules/), and the service's own (name claims, credential audit). */
export type StoredEvent = BoardEvent | OpportunityEvent | PipelineEvent | AccountEvent | ContactEvent | LeadEvent | TeamEvent | GoalEvent | CustomFieldEvent | SolutionEvent | WebhookEvent | NameClaimEvent | CredentialAuditEvent | TaskEvent | NotificationEvent
type EventType = StoredEvent['type']

// Compile-time: each schema's data is exactly its TypeScript type, both ways (what the deciders write parses; what parses is what they fold).
type DataOf = { [E in StoredEvent as E['type']]: E['data'] }
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
type Drifted = { [T in EventType]: Same<DataOf[T], z.output<(typeof DEFINITIONS)[T]['data']>> extends true ? never : T }[EventType]
const _inStep: [Drifted] extends [never] ? true : { drifted: Drifted } = true

export type EventDefinition = Readonly<{ type: string; stream: string; version: number; description: string; data: z.ZodType }>

/** Every stored event type: those declared here and every module's (src/modules/<module>.ts `events`). */
const ALL_DEFINITIONS: Readonly<Record<string, EventDeclaration>> = Object.assign({}, DEFINITIONS, ...MODULES.map((module) => module.events ?? {}))

export const EVENT_CATALOGUE: readonly EventDefinition[] = Object.entries(ALL_DEFINITIONS).map(([type, definition]) => ({ type, version: currentVersion(type), ...definition }))

const byType = new Map(EVENT_CATALOGUE.map((definition) => [definition.type as string, definition]))

export const eventDefinition = (type: string): EventDefinition | undefined => byType.get(type)

/** A stored event's data, upcast to the current version and checked against its schema; an unknown type is a failure too. */
export function parseEventData(type: string, schemaVersion: number | undefined, data: unknown): z.ZodSafeParseResult<unknown> {
  const definition = byType.get(type)
  if (!definition) return z.never().safeParse(data, { error: () => `Unknown event type ${type}` })
  return definition.data.safeParse(upcast(type, schemaVersion, data))
}

export const EVENT_SCHEMA_ID = 'urn:crm:events'

/** Categories whose event types another category writes too: lead and task pipelines reuse the pipeline events (commands/pipeline/kinds.ts). */
const SHARING: Readonly<Record<string, readonly string[]>> = { pipeline: ['lead_pipeline', 'task_pipeline'] }
const streamPattern = (stream: string) => (SHARING[stream] ? `^(${[stream, ...SHARING[stream]].join('|')})-` : `^${stream}-`)

/**
 * The catalogue as one JSON Schema (2020-12) document: `$defs.<Type>` describes an event envelope
 * `{ type, stream, schema_version, data }` (other members, such as a feed's position, are allowed),
 * `oneOf` accepts any event of the catalogue. Each definition's `properties.schema_version.const`
 * is the current version and `properties.data` the JSON Schema of its data.
 */
export function eventCatalogueDocument() {
  const defs = Object.fromEntries(
    EVENT_CATALOGUE.map(({ type, stream, version, description, data }) => {
      const { $schema: _draft, ...schema } = z.toJSONSchema(data, { target: 'draft-2020-12' })
      const envelope = {
        title: type,
        description: `${description} Stream: \`${stream}-…\`; schema version ${version}.`,
        type: 'object',
        properties: {
          type: { const: type },
          stream: { type: 'string', pattern: streamPattern(stream) },
          schema_version: { const: version, description: 'Older versions are upcast to this one when read' },
          data: schema,
        },
        required: ['type', 'data'],
      }
      return [type, envelope]
    }),
  )
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: EVENT_SCHEMA_ID,
    title: 'CRM event catalogue',
    description: 'Every event type the CRM stores, at its current schema version. Events of older versions are upcast when read, so every reader sees these shapes.',
    oneOf: EVENT_CATALOGUE.map(({ type }) => ({ $ref: `#/$defs/${type}` })),
    $defs: defs,
  }
}
