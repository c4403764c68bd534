import { sql } from 'kysely'
import { z } from 'zod'
import { caseStreams } from '../commands/case/case.ts'
import type { CaseEvent } from '../commands/case/case.ts'
import { CASE_PRIORITIES, CASE_STATUSES, CASE_TYPES } from '../commands/case/fields.ts'
import { MAX_ESCALATIONS } from '../commands/case/escalation.ts'
import { ESCALATION_ACTIONS } from '../commands/case-escalation/escalation-policy.ts'
import { PRIORITY_POLICY, SLA_KINDS } from '../commands/case/sla.ts'
import { At, By, CustomValues, Day, Id, Ids, Placement, at, changesOf, eventsOf, noPersonalData, noteDefinitions } from '../events/event-schemas.ts'
import { createCaseEscalator } from '../processes/case-escalator.ts'
import { casesProjector } from '../projections/case/cases.ts'
import { caseMergesProjector } from '../projections/case/merges.ts'
import { caseSolutionsProjector } from '../projections/case/solution-links.ts'
import { created, deleted, noteReadings, updatedChanges } from '../projections/record/record-kinds.ts'
import { str } from '../projections/search/search-documents.ts'
import { caseEmailReceived } from './case-mail-events.ts'
import type { ModuleManifest } from './manifest.ts'

// Cases (case-<id>).
const caseShape = {
  name: z.string(),
  status: z.enum(CASE_STATUSES),
  priority: z.enum(CASE_PRIORITIES),
  case_type: z.enum(CASE_TYPES).nullable(),
  closed_on: Day.nullable(),
  description: z.string().nullable(),
  account: Id.nullable(),
  contacts: Ids,
  teams: Ids,
  assigned_to: Ids,
  tags: Ids,
  parent: Id.nullable(),
  is_problem: z.boolean(),
  custom_fields: CustomValues,
}
const Hours = z.number().int().min(0)
const CaseSummary = z.strictObject({ name: caseShape.name, status: caseShape.status, priority: caseShape.priority, assigned_to: Ids, account: caseShape.account, parent: caseShape.parent }).describe('The case after the event: name, state, assignees, account and parent')
const Watcher = { profile_id: Id, by: By, ...at }
const WatchOf = z.strictObject({ profile_id: Id, subscribed_via: z.enum(['manual', 'mention', 'auto_assignee', 'auto_team']), since: At })
const MovedNote = z.strictObject({ id: Id, by: Id.nullable(), text: z.string().optional(), removed: z.boolean() }).describe('A comment or attachment that moved: its author, text (comments) and whether it was removed')
const Sla = { sla: z.enum(SLA_KINDS).describe('Which SLA instance of the case: its first response or its resolution') }
const SlaTarget = {
  target_minutes: z.number().int().min(0).describe('The target in business minutes of the calendar'),
  policy: z.literal(PRIORITY_POLICY).describe("The policy that set it: the priority defaults (the original's 24/8/4/1 and 72/48/24/4 hours)"),
  priority: caseShape.priority,
}

/** Support cases: tickets with assignees, a problem → incident tree, watchers, comments, internal notes and attachments, and their SLA instances on the one business-hours clock. */
export const caseModule: ModuleManifest = {
  name: 'case',
  // A case is the organization's record of work; the people in it are contacts, by id. An inbound
  // email's sender fields are declared personal (case-mail-events.ts); the portal's will be.
  events: noPersonalData(eventsOf<CaseEvent>()({
    // case-<id>
    CaseCreated: { stream: 'case', description: "A case was opened: its fields, and its SLA targets in hours (first response and resolution), set by its priority when it opened (the original's defaults).", data: z.strictObject({ case_id: Id, org_id: Id, ...caseShape, sla_first_response_hours: Hours, sla_resolution_hours: Hours, created_by: By, ...at }) },
    CaseUpdated: { stream: 'case', description: 'Fields of a case changed: only those, each before and after (custom_fields as the whole object of values), with the case as it now is (`case`). Its SLA effects follow as CaseSla* events (Pending pauses, Closed fulfils the resolution, a new priority retargets); out of Closed clears closed_on.', data: z.strictObject({ changes: changesOf(caseShape), case: CaseSummary, by: By, ...at }) },
    CaseDeleted: { stream: 'case', description: 'A case was (soft) deleted.', data: z.strictObject({ by: By, ...at }) },
    CaseFirstResponded: { stream: 'case', description: "A member's first public comment answered the case: its first response (an internal note does not count).", data: z.strictObject({ comment_id: Id, by: Id, ...at }) },
    CaseWatched: { stream: 'case', description: 'A member started watching a case (`subscribed_via`: how).', data: z.strictObject({ ...Watcher, subscribed_via: z.enum(['manual', 'mention', 'auto_assignee', 'auto_team']) }) },
    CaseUnwatched: { stream: 'case', description: 'A member stopped watching a case.', data: z.strictObject(Watcher) },
    CaseMoved: { stream: 'case', description: 'A case card was moved on the case board: into a stage of a case pipeline (`to`), or onto the status board (`to` null); `status` and `closed_on` when the move changed them (a move into Closed dates it); its order in the column.', data: z.strictObject({ from: Placement.nullable(), to: Placement.nullable(), status: z.strictObject({ from: caseShape.status, to: caseShape.status }).optional(), closed_on: z.strictObject({ from: caseShape.closed_on, to: caseShape.closed_on }).optional(), kanban_order: z.number(), case: CaseSummary, by: By, ...at }) },
    CaseSlaActivated: { stream: 'case', description: "An SLA instance of the case started: when the case opened, or its resolution again when it was reopened. Its target and the version of the organization's business calendar it measures in (a later edit of the calendar does not change it).", data: z.strictObject({ ...Sla, ...SlaTarget, calendar_version: z.number().int().min(0), ...at }) },
    CaseSlaPaused: { stream: 'case', description: 'An SLA instance stopped counting: the case entered Pending (waiting on the customer).', data: z.strictObject({ ...Sla, ...at }) },
    CaseSlaResumed: { stream: 'case', description: 'A paused SLA instance counts again: the case left Pending.', data: z.strictObject({ ...Sla, ...at }) },
    CaseSlaFulfilled: { stream: 'case', description: "An SLA instance was met or ended late: the first public comment of a member (first response), closing (resolution).", data: z.strictObject({ ...Sla, ...at }) },
    CaseSlaRetargeted: { stream: 'case', description: 'An open SLA instance took the target of the priority the case changed to, from this instant on: time already used stays used.', data: z.strictObject({ ...Sla, ...SlaTarget, ...at }) },
    CaseEscalated: { stream: 'case', description: "The escalator found the case open and breached (`breached`: which SLA instances, by the clock): escalation `level` 1 to 3, at least an hour after the last; its id derived from the case and the level. When its priority's active escalation policy names a target for a breached instance: what it did (`actions`: the instance, the action, the target) and the active members it notified (`notify`: the targets of notifying actions and the policy's team); a reassignment is the CaseUpdated that follows.", data: z.strictObject({ escalation_id: Id, level: z.number().int().min(1).max(MAX_ESCALATIONS), breached: z.array(z.enum(SLA_KINDS)).min(1), actions: z.array(z.strictObject({ sla: z.enum(SLA_KINDS), action: z.enum(ESCALATION_ACTIONS), target: Id })).min(1).optional(), notify: Ids.optional(), ...at }) },
    CaseMerged: { stream: 'case', description: 'A case was merged into another as its duplicate (`into_case_id`): every comment, attachment and watcher left it (ids; watchers with how and since when they watched), and the case ids that reached it (`aliases`: duplicates merged into it before) now reach the other. A CaseUpdated to Duplicate, closed on the day, follows.', data: z.strictObject({ into_case_id: Id, comment_ids: Ids, attachment_ids: Ids, watchers: z.array(WatchOf), aliases: Ids, by: By, ...at }) },
    CaseDuplicateAbsorbed: { stream: 'case', description: 'A duplicate case was merged into this one (`source_case_id`): its comments and attachments (as they were: author, text, removed), the watchers this case did not have, and the case ids that now reach this one (`aliases`: the duplicate and its own).', data: z.strictObject({ source_case_id: Id, comments: z.array(MovedNote), attachments: z.array(MovedNote), watchers: z.array(WatchOf), aliases: Ids, by: By, ...at }) },
    CaseUnmerged: { stream: 'case', description: 'A merged duplicate was unmerged from `from_case_id`: what the merge moved comes back (comments and attachments as they are now, watchers as they watched, its aliases). A CaseUpdated back to its status and closing date before the merge follows.', data: z.strictObject({ from_case_id: Id, comments: z.array(MovedNote), attachments: z.array(MovedNote), watchers: z.array(WatchOf), aliases: Ids, by: By, ...at }) },
    CaseDuplicateReleased: { stream: 'case', description: 'A duplicate merged into this case was unmerged (`source_case_id`): the comments, attachments and aliases it brought leave, and the watchers it brought that still watch.', data: z.strictObject({ source_case_id: Id, comment_ids: Ids, attachment_ids: Ids, watchers: Ids, aliases: Ids, by: By, ...at }) },
    CaseSolutionLinked: { stream: 'case', description: 'A knowledge-base solution of the organization was linked to the case (`solution_id`), by a member who may change it.', data: z.strictObject({ solution_id: Id, by: By, ...at }) },
    CaseSolutionUnlinked: { stream: 'case', description: 'A solution linked to the case was unlinked from it (`solution_id`).', data: z.strictObject({ solution_id: Id, by: By, ...at }) },
    ...noteDefinitions('Case', 'case', 'case'),
    ...caseEmailReceived,
  })),
  routes: async (deps, files) => {
    const { caseRoutes } = await import('../http/cases/cases.ts')
    return [caseRoutes(deps, files)]
  },
  projectors: [casesProjector, caseMergesProjector, caseSolutionsProjector],
  // Escalations check once a minute, as the due notifier (DUE_NOTIFY_INTERVAL_MS).
  processes: [({ config, ...deps }) => createCaseEscalator({ ...deps, intervalMs: config.dueNotifyIntervalMs })],
  search: {
    kind: 'case',
    order: 7,
    version: 1,
    streams: caseStreams,
    events: { created: 'CaseCreated', updated: 'CaseUpdated', deleted: 'CaseDeleted' },
    changes: 'fromTo',
    // A move on the case board may change its status.
    alsoUpdatedBy: { CaseMoved: (data) => (data.status ? { status: (data.status as { to: string }).to } : {}) },
    keys: ['name', 'description', 'status', 'priority', 'assigned_to'],
    visibility: 'Case',
    document: (f) => ({ title: str(f.name), subtitle: [str(f.status), str(f.priority)].filter(Boolean).join(' · '), names: str(f.name), terms: str(f.description) }),
  },
  record: {
    entityType: 'Case',
    // 2: escalations notify (CaseEscalated).
    version: 2,
    table: 'cases',
    name: sql<string>`r.name`,
    page: '/tickets',
    noun: 'case',
    activity: {
      CaseCreated: created,
      CaseUpdated: updatedChanges,
      CaseMoved: { action: 'UPDATE', describe: (data) => `Moved the case to ${String((data.to as { stage?: unknown } | null)?.stage ?? (data.status as { to?: unknown } | undefined)?.to ?? 'another place')}` },
      CaseDeleted: deleted,
      ...noteReadings('Case'),
    },
    notifiedBy: { created: 'CaseCreated', updated: 'CaseUpdated', commented: 'CaseCommentAdded', told: { CaseEscalated: 'sla_breached' } },
  },
  idKinds: [
    [/^\/api\/cases\/comment\/\{id\}/, 'caseComment'],
    [/^\/api\/cases\/attachment\/\{id\}/, 'caseAttachment'],
    [/^\/api\/cases\/\{id\}/, 'case'],
  ],
  idParams: { into_id: 'case', solution_pk: 'solution' },
}
