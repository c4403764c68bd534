import { z } from 'zod'
import type { CaseApprovalEvent } from '../commands/case-approval/approval.ts'
import { APPROVER_ROLES, TRIGGER_EVENTS } from '../commands/case-approval/rules.ts'
import type { ApprovalRuleEvent } from '../commands/case-approval/rules.ts'
import { CASE_PRIORITIES, CASE_TYPES } from '../commands/case/fields.ts'
import { By, Id, Ids, at, eventsOf, noPersonalData } from '../events/event-schemas.ts'
import { caseApprovalsProjector } from '../projections/case-approval/approvals.ts'
import type { ModuleManifest } from './manifest.ts'

const rule = {
  name: z.string(),
  trigger_event: z.enum(TRIGGER_EVENTS),
  match_priority: z.enum(CASE_PRIORITIES).nullable(),
  match_case_type: z.enum(CASE_TYPES).nullable(),
  match_team: Id.nullable(),
  approver_role: z.enum(APPROVER_ROLES),
  approvers: Ids,
  is_active: z.boolean(),
}
const decided = { approval_id: Id, by: Id, ...at }
const JudgedOn = z.strictObject({ priority: z.enum(CASE_PRIORITIES), case_type: z.enum(CASE_TYPES).nullable(), teams: Ids }).describe('The case as it was when the request was approved: what the rule was judged on')

/** Approvals of case closings: the rules that gate closing (approval_rule-<id>) and each case's requests and decisions (case_approval-<case id>). */
export const caseApprovalModule: ModuleManifest = {
  name: 'case_approval',
  // Rules name members by id; requests carry an agent's note or reason about the organization's case, as its comments do.
  events: noPersonalData({
    ...eventsOf<ApprovalRuleEvent>()({
      CaseApprovalRuleCreated: { stream: 'approval_rule', description: "An admin wrote an approval rule: closing a case matching its priority, type and team (null: any) needs an approval by its approvers (named profiles, or the role's members).", data: z.strictObject({ rule_id: Id, org_id: Id, ...rule, created_by: By, ...at }) },
      CaseApprovalRuleUpdated: { stream: 'approval_rule', description: "An approval rule's fields changed: only those, with their new values. Deleting a rule any request was filed under turns it off (`is_active` false).", data: z.strictObject({ ...z.object(rule).partial().shape, by: By, ...at }) },
      CaseApprovalRuleDeleted: { stream: 'approval_rule', description: 'An approval rule no request was ever filed under was deleted.', data: z.strictObject({ by: By, ...at }) },
    }),
    ...eventsOf<CaseApprovalEvent>()({
      CaseApprovalRequested: { stream: 'case_approval', description: 'A member asked for approval to close the case, under a rule (its name as it then was), with a note.', data: z.strictObject({ approval_id: Id, org_id: Id, case_id: Id, rule_id: Id, rule_name: z.string(), requested_by: Id, note: z.string(), ...at }) },
      CaseApprovalApproved: { stream: 'case_approval', description: "An approver of the rule approved the request; the rule was judged on the case as it then was (`judged_on`).", data: z.strictObject({ ...decided, note: z.string(), judged_on: JudgedOn }) },
      CaseApprovalRejected: { stream: 'case_approval', description: 'An approver of the rule rejected the request, with a reason.', data: z.strictObject({ ...decided, reason: z.string() }) },
      CaseApprovalCancelled: { stream: 'case_approval', description: 'Its requester (or an admin) withdrew the request.', data: z.strictObject(decided) },
    }),
  }),
  routes: async (deps) => {
    const { caseApprovalRoutes } = await import('../http/case-approvals/approvals.ts')
    return [caseApprovalRoutes(deps)]
  },
  projectors: [caseApprovalsProjector],
  idKinds: [
    [/^\/api\/cases\/approval-rules\/\{id\}/, 'approvalRule'],
    [/^\/api\/cases\/approvals\/\{id\}/, 'approval'],
  ],
}
