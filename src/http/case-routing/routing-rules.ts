import type { FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { CONDITION_OPS, MAX_PATTERN, isConditionField } from '../../commands/case-routing/conditions.ts'
import { planRouting, routedCaseOf } from '../../commands/case-routing/route-case.ts'
import { STRATEGIES } from '../../commands/case-routing/routing-rule.ts'
import type { RoutingRuleFields } from '../../commands/case-routing/routing-rule.ts'
import { changeRoutingRule, createRoutingRule, deleteRoutingRule } from '../../commands/case-routing/write-routing-rule.ts'
import { requireAdmin } from '../../commands/case-approval/org-refs.ts'
import type { Deps } from '../../deps.ts'
import { NotFoundError, orNotFound } from '../../errors.ts'
import { caseOf, casesCreatedSince } from '../../projections/case/queries.ts'
import { routedSince, routingRuleOf, routingRulesOf } from '../../projections/case-routing/queries.ts'
import type { RoutingRuleRow } from '../../projections/case-routing/queries.ts'
import { callerOf, settle } from '../kernel/commands.ts'
import { ProfileRef, nameRefs, profileRefs } from '../kernel/relations.ts'
import { ErrorBody, IdParams, Message, authErrors } from '../kernel/schemas/common.ts'

const TAGS = ['cases']
const errors = { 400: ErrorBody, ...authErrors, 404: ErrorBody } as const
/** The window the page's match and unrouted counts cover (the original's ROUTING_WINDOW_DAYS). */
const WINDOW_MS = 30 * 86_400_000

const Scalar = z.union([z.string().max(1000), z.number(), z.boolean(), z.null()])
const ConditionBody = z
  .object({ field: z.string().refine(isConditionField, 'Expected priority, case_type, account, tags, from_email_domain, mailbox_id or custom_fields.<key>.'), op: z.enum(CONDITION_OPS).default('eq'), value: z.union([Scalar, z.array(Scalar).max(100)]) })
  .refine(({ op, value }) => op !== 'regex' || (typeof value === 'string' && value.length <= MAX_PATTERN && compiles(value)), { message: `A regex value is a valid pattern of at most ${MAX_PATTERN} characters.`, path: ['value'] })
function compiles(pattern: string): boolean {
  try {
    new RegExp(pattern)
    return true
  } catch {
    return false
  }
}

const RuleBody = z.object({
  name: z.string().trim().min(1, 'This field may not be blank.').max(255),
  priority_order: z.number().int().min(0).max(1_000_000).optional().describe('Lower runs first (default 100); ties: the oldest first'),
  is_active: z.boolean().optional(),
  conditions: z.array(ConditionBody).max(50).nullable().optional().describe('All must hold (AND); none: every case'),
  strategy: z.enum(STRATEGIES).optional().describe('direct (default): the first of its people; round_robin: each in turn; least_busy: the fewest open cases; by_team: its team'),
  stop_processing: z.boolean().optional().describe('When it matches, try no later rule (default true)'),
  target_assignee_ids: z.array(z.uuid()).max(200).optional(),
  target_team_id: z.uuid().nullable().optional(),
})

function ruleFields(body: Partial<z.infer<typeof RuleBody>>): Partial<RoutingRuleFields> {
  const { conditions, target_assignee_ids, target_team_id, ...rest } = body
  return {
    ...rest,
    ...(conditions !== undefined && { conditions: conditions ?? [] }),
    ...(target_assignee_ids !== undefined && { target_assignees: [...new Set(target_assignee_ids.map((id) => id.toLowerCase()))] }),
    ...(target_team_id !== undefined && { target_team: target_team_id }),
  }
}

const RoutingRule = z.object({
  id: z.uuid(),
  name: z.string(),
  priority_order: z.number().int(),
  is_active: z.boolean(),
  conditions: z.array(z.object({ field: z.string(), op: z.enum(CONDITION_OPS), value: z.unknown() })),
  strategy: z.enum(STRATEGIES),
  stop_processing: z.boolean(),
  target_assignees: z.array(ProfileRef),
  target_team: z.object({ id: z.uuid(), name: z.string() }).nullable(),
  matched_last_30d: z.number().int().describe('Cases it routed in the last 30 days'),
  state: z.object({ last_assigned_index: z.number().int().describe("The round-robin cursor: the index (among its active people, by id) of who is next") }).nullable(),
  created_at: z.string(),
  updated_at: z.string(),
})

async function ruleViews(db: Deps['db'], orgId: string, rows: readonly RoutingRuleRow[], matched: Map<string, number>): Promise<z.infer<typeof RoutingRule>[]> {
  const [people, teams] = await Promise.all([profileRefs(db, orgId, [...new Set(rows.flatMap((row) => row.target_assignees))]), nameRefs(db, 'teams', orgId, rows.flatMap((row) => (row.target_team ? [row.target_team] : [])))])
  const byId = new Map(people.map((person) => [person.id, person]))
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    priority_order: row.priority_order,
    is_active: row.is_active,
    conditions: row.conditions,
    strategy: row.strategy,
    stop_processing: row.stop_processing,
    target_assignees: row.target_assignees.flatMap((id) => byId.get(id) ?? []),
    target_team: (row.target_team && teams.get(row.target_team)) || null,
    matched_last_30d: matched.get(row.id) ?? 0,
    state: row.next_index === null ? null : { last_assigned_index: row.next_index },
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  }))
}

/**
 * Routing rules (the original's routing_views.py): admins keep the rules that assign new cases;
 * test/ answers what the rules would do with a case, writing nothing.
 */
export function caseRoutingRoutes(deps: Deps): FastifyPluginAsyncZod {
  const { db, clock } = deps
  const view = async (request: FastifyRequest, id: string) => {
    const { orgId } = callerOf(request)
    const rule = await orNotFound(routingRuleOf(db, orgId, id))
    const [one] = await ruleViews(db, orgId, [rule], (await routedSince(db, orgId, new Date(clock().getTime() - WINDOW_MS))).byRule)
    return one!
  }

  return async (app) => {
    app.get('/api/cases/routing-rules/', { schema: { tags: TAGS, summary: 'The routing rules in the order they are tried, with what each routed in the last 30 days; totals with the cases no rule routed', response: { 200: z.object({ rules: z.array(RoutingRule), totals: z.object({ count: z.number().int(), active: z.number().int(), unrouted_last_30d: z.number().int() }) }), ...errors } } }, async (request) => {
      const { orgId } = callerOf(request)
      const since = new Date(clock().getTime() - WINDOW_MS)
      const [rows, routed, created] = await Promise.all([routingRulesOf(db, orgId), routedSince(db, orgId, since), casesCreatedSince(db, orgId, since)])
      const rules = await ruleViews(db, orgId, rows, routed.byRule)
      return { rules, totals: { count: rules.length, active: rules.filter((rule) => rule.is_active).length, unrouted_last_30d: Math.max(0, created - routed.cases) } }
    })

    app.post('/api/cases/routing-rules/', { schema: { tags: TAGS, summary: 'Create a routing rule (admins); answers 201 with it', body: RuleBody, response: { 201: RoutingRule, ...errors } } }, async (request, reply) => {
      const fields: RoutingRuleFields = { priority_order: 100, is_active: true, conditions: [], strategy: 'direct', stop_processing: true, target_assignees: [], target_team: null, ...ruleFields(request.body), name: request.body.name }
      const { id, position } = await createRoutingRule(deps, callerOf(request), fields)
      await settle(deps, reply, position)
      return reply.code(201).send(await view(request, id))
    })

    app.get('/api/cases/routing-rules/:id/', { schema: { tags: TAGS, summary: 'One routing rule', params: IdParams, response: { 200: RoutingRule, ...errors } } }, (request) => view(request, request.params.id))

    app.put('/api/cases/routing-rules/:id/', { schema: { tags: TAGS, summary: "Change a routing rule's named fields (admins)", params: IdParams, body: RuleBody.partial(), response: { 200: RoutingRule, ...errors } } }, async (request, reply) => {
      await settle(deps, reply, await changeRoutingRule(deps, callerOf(request), request.params.id, ruleFields(request.body)))
      return view(request, request.params.id)
    })

    app.delete('/api/cases/routing-rules/:id/', { schema: { tags: TAGS, summary: 'Delete a routing rule for good (admins); the cases it routed keep their assignees', params: IdParams, response: { 200: Message, ...errors } } }, async (request, reply) => {
      await settle(deps, reply, await deleteRoutingRule(deps, callerOf(request), request.params.id))
      return { error: false as const, message: 'Routing rule deleted' }
    })

    app.post('/api/cases/routing-rules/:id/test/', { schema: { tags: TAGS, summary: "What the organization's rules would do with a case (admins): the rule that matches last and whom it would pick, without writing (the round-robin cursor does not move)", params: IdParams, body: z.object({ case_id: z.uuid('case_id is required') }), response: { 200: z.object({ matched: z.boolean(), rule_id: z.uuid().nullable(), rule_name: z.string(), strategy: z.string(), would_assign_profile_ids: z.array(z.uuid()), would_assign_team_id: z.uuid().nullable(), reason: z.string() }), ...errors } } }, async (request) => {
      const caller = callerOf(request)
      requireAdmin(caller)
      await orNotFound(routingRuleOf(db, caller.orgId, request.params.id))
      const found = await caseOf(db, caller.orgId, request.body.case_id)
      if (!found) throw new NotFoundError('Case not found')
      const steps = await planRouting(deps, caller.orgId, found.id, await routedCaseOf(db, caller.orgId, found, {}))
      const last = steps.filter((step) => step.routed).at(-1)
      const routed = last?.routed?.data
      return { matched: last !== undefined, rule_id: last?.ruleId ?? null, rule_name: last?.ruleName ?? '', strategy: routed?.strategy ?? '', would_assign_profile_ids: routed?.assigned_to ? [routed.assigned_to] : [], would_assign_team_id: routed?.team ?? null, reason: routed?.reason ?? '' }
    })
  }
}
