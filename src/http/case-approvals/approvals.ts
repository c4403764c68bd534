import type { FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { APPROVAL_STATES } from '../../commands/case-approval/approval.ts'
import { APPROVER_ROLES, TRIGGER_EVENTS } from '../../commands/case-approval/rules.ts'
import type { ApprovalRuleFields } from '../../commands/case-approval/rules.ts'
import { changeApprovalRule, createApprovalRule, decideApproval, deleteApprovalRule, requestApproval } from '../../commands/case-approval/write-approval.ts'
import type { ApprovalDecision } from '../../commands/case-approval/write-approval.ts'
import { CASE_PRIORITIES, CASE_TYPES } from '../../commands/case/fields.ts'
import type { Deps } from '../../deps.ts'
import { NotFoundError, orNotFound } from '../../errors.ts'
import { approvalOf, approvalRuleOf, approvalRulesOf, approvalsOf, pendingByRule } from '../../projections/case-approval/queries.ts'
import { callerOf, settle } from '../kernel/commands.ts'
import { isUuid } from '../kernel/relations.ts'
import { ErrorBody, IdParams, authErrors } from '../kernel/schemas/common.ts'
import { Approval, ApprovalRule, approvalViews, ruleViews } from './views.ts'

const TAGS = ['cases']
const errors = { 400: ErrorBody, ...authErrors, 404: ErrorBody, 409: ErrorBody } as const
/** The queue answers every row at once, as the original's (no paging): this bounds it. */
const QUEUE_LIMIT = 500

const RuleFields = z.object({
  name: z.string().trim().min(1, 'This field may not be blank.').max(128),
  trigger_event: z.enum(TRIGGER_EVENTS).optional().describe('When the rule gates: `pre_close`, the one trigger'),
  match_priority: z.enum(CASE_PRIORITIES).nullable().optional().describe('Only cases of this priority (null: any)'),
  match_case_type: z.enum(CASE_TYPES).nullable().optional().describe('Only cases of this type (null: any)'),
  match_team_id: z.uuid().nullable().optional().describe('Only cases of this team (null: any)'),
  approver_role: z.enum(APPROVER_ROLES).optional().describe('Everyone of this role may approve (ADMIN: the admins; MANAGER: nobody yet)'),
  approver_ids: z.array(z.uuid()).optional().describe('Profiles who may approve, besides the role'),
  is_active: z.boolean().optional(),
})

/** The body's fields, as the rule's (only those given: a PUT is partial). */
function ruleFields(body: Partial<z.infer<typeof RuleFields>>): Partial<ApprovalRuleFields> {
  const { match_team_id, approver_ids, ...rest } = body
  const fields: Partial<ApprovalRuleFields> = { ...rest }
  if (match_team_id !== undefined) fields.match_team = match_team_id
  if (approver_ids !== undefined) fields.approvers = [...new Set(approver_ids.map((id) => id.toLowerCase()))]
  return fields
}

/**
 * Approvals (the original's approval_views.py): admins keep the rules that gate closing a case; a
 * member who may change a case files a request; an approver of the rule's pool approves or rejects
 * it, its requester (or an admin) cancels it. The queue shows whoever may see each request.
 */
export function caseApprovalRoutes(deps: Deps): FastifyPluginAsyncZod {
  const { db } = deps
  const ruleView = async (request: FastifyRequest, id: string) => {
    const { orgId } = callerOf(request)
    const [view] = await ruleViews(db, orgId, [await orNotFound(approvalRuleOf(db, orgId, id))], await pendingByRule(db, orgId))
    return view!
  }
  const approvalView = async (request: FastifyRequest, id: string) => {
    const caller = callerOf(request)
    const row = await orNotFound(approvalOf(db, caller.orgId, id))
    const rule = await approvalRuleOf(db, caller.orgId, row.rule_id)
    const [view] = await approvalViews(db, caller, [row], new Map(rule ? [[rule.id, rule]] : []))
    if (!view) throw new NotFoundError('Approval not found')
    return view
  }

  return async (app) => {
    app.get('/api/cases/approval-rules/', { schema: { tags: TAGS, summary: 'The approval rules that gate closing cases, newest first, each with its pending requests; totals', response: { 200: z.object({ rules: z.array(ApprovalRule), totals: z.object({ count: z.number().int(), active: z.number().int(), pending: z.number().int() }) }), ...errors } } }, async (request) => {
      const { orgId } = callerOf(request)
      const pending = await pendingByRule(db, orgId)
      const rules = await ruleViews(db, orgId, await approvalRulesOf(db, orgId), pending)
      return { rules, totals: { count: rules.length, active: rules.filter((rule) => rule.is_active).length, pending: [...pending.values()].reduce((a, b) => a + b, 0) } }
    })

    app.post('/api/cases/approval-rules/', { schema: { tags: TAGS, summary: 'Create an approval rule (admins); answers 201 with it', body: RuleFields, response: { 201: ApprovalRule, ...errors } } }, async (request, reply) => {
      const { trigger_event = 'pre_close', match_priority = null, match_case_type = null, approver_role = 'ADMIN', is_active = true, name } = request.body
      const fields = { trigger_event, match_priority, match_case_type, approver_role, is_active, name, match_team: null, approvers: [], ...ruleFields(request.body) } as ApprovalRuleFields
      const { id, position } = await createApprovalRule(deps, callerOf(request), fields)
      await settle(deps, reply, position)
      return reply.code(201).send(await ruleView(request, id))
    })

    app.get('/api/cases/approval-rules/:id/', { schema: { tags: TAGS, summary: 'One approval rule', params: IdParams, response: { 200: ApprovalRule, ...errors } } }, (request) => ruleView(request, request.params.id))

    app.put('/api/cases/approval-rules/:id/', { schema: { tags: TAGS, summary: "Change an approval rule's named fields (admins)", params: IdParams, body: RuleFields.partial(), response: { 200: ApprovalRule, ...errors } } }, async (request, reply) => {
      await settle(deps, reply, (await changeApprovalRule(deps, callerOf(request), request.params.id, ruleFields(request.body))).position)
      return ruleView(request, request.params.id)
    })

    app.delete('/api/cases/approval-rules/:id/', { schema: { tags: TAGS, summary: 'Delete an approval rule (admins): 204; a rule any request was filed under is turned off instead: 200 with `is_active` false', params: IdParams, response: { 200: z.object({ id: z.uuid(), is_active: z.literal(false) }), 204: z.null().describe('No content'), ...errors } } }, async (request, reply) => {
      const { turnedOff, position } = await deleteApprovalRule(deps, callerOf(request), request.params.id)
      await settle(deps, reply, position)
      return turnedOff ? reply.code(200).send({ id: request.params.id, is_active: false as const }) : reply.code(204).send(null)
    })

    const QueueQuery = z.object({
      state: z.string().optional().describe(`One of ${APPROVAL_STATES.join(', ')}, or all (default pending)`),
      case: z.string().optional().describe("One case's requests (a case id)"),
      mine: z.string().optional().describe('true: only the requests the caller may decide now'),
    })
    app.get('/api/cases/approvals/', { schema: { tags: TAGS, summary: 'The approval queue: the requests the caller may see (every one for an admin; else those of a case they see, under a rule naming them, or filed by them), newest first; at most 500', querystring: QueueQuery, response: { 200: z.object({ approvals: z.array(Approval) }), ...errors } } }, async (request) => {
      const caller = callerOf(request)
      const state = (request.query.state || 'pending').toLowerCase()
      if (state !== 'all' && !(APPROVAL_STATES as readonly string[]).includes(state)) return { approvals: [] }
      const caseId = request.query.case && isUuid(request.query.case) ? request.query.case : undefined
      const rows = await approvalsOf(db, caller.orgId, { state: state === 'all' ? undefined : state, caseId, limit: QUEUE_LIMIT })
      const rules = new Map((await approvalRulesOf(db, caller.orgId)).map((rule) => [rule.id, rule]))
      return { approvals: await approvalViews(db, caller, rows, rules, { mine: ['true', '1', 'yes'].includes((request.query.mine ?? '').toLowerCase()) }) }
    })

    app.post('/api/cases/:id/request-approval/', { schema: { tags: TAGS, summary: 'Request approval to close a case (whoever may change it): under the rule named, else the rule that gates the case; 201 with the request, 409 when one is pending under the rule', params: IdParams, body: z.object({ rule_id: z.uuid().nullable().optional(), note: z.string().max(4096).optional() }), response: { 201: Approval, ...errors } } }, async (request, reply) => {
      const { id, position } = await requestApproval(deps, callerOf(request), request.params.id, { ruleId: request.body.rule_id, note: request.body.note ?? '' })
      await settle(deps, reply, position)
      return reply.code(201).send(await approvalView(request, id))
    })

    const decide = (request: FastifyRequest, id: string, decision: ApprovalDecision) => decideApproval(deps, callerOf(request), id, decision)
    app.post('/api/cases/approvals/:id/approve/', { schema: { tags: TAGS, summary: 'Approve a pending request (an approver of its rule, not its requester); the rule must still apply to the case as it is now (409 otherwise)', params: IdParams, body: z.object({ note: z.string().max(4096).optional() }).optional(), response: { 200: Approval, ...errors } } }, async (request, reply) => {
      await settle(deps, reply, (await decide(request, request.params.id, { kind: 'approve', note: request.body?.note })).position)
      return approvalView(request, request.params.id)
    })
    app.post('/api/cases/approvals/:id/reject/', { schema: { tags: TAGS, summary: 'Reject a pending request with a reason (an approver of its rule, not its requester)', params: IdParams, body: z.object({ reason: z.string().max(4096).optional() }).optional(), response: { 200: Approval, ...errors } } }, async (request, reply) => {
      await settle(deps, reply, (await decide(request, request.params.id, { kind: 'reject', reason: request.body?.reason ?? '' })).position)
      return approvalView(request, request.params.id)
    })
    app.post('/api/cases/approvals/:id/cancel/', { schema: { tags: TAGS, summary: 'Withdraw a pending request (its requester or an admin)', params: IdParams, body: z.object({}).optional(), response: { 200: Approval, ...errors } } }, async (request, reply) => {
      await settle(deps, reply, (await decide(request, request.params.id, { kind: 'cancel' })).position)
      return approvalView(request, request.params.id)
    })
  }
}
