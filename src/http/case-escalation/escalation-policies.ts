import type { FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { ESCALATION_ACTIONS } from '../../commands/case-escalation/escalation-policy.ts'
import type { EscalationPolicyFields } from '../../commands/case-escalation/escalation-policy.ts'
import { changeEscalationPolicy, createEscalationPolicy, deleteEscalationPolicy } from '../../commands/case-escalation/write-escalation-policy.ts'
import { CASE_PRIORITIES } from '../../commands/case/fields.ts'
import type { Deps } from '../../deps.ts'
import { orNotFound } from '../../errors.ts'
import { breachCountsSince } from '../../projections/case/queries.ts'
import { escalationPoliciesOf, escalationPolicyOf } from '../../projections/case-escalation/queries.ts'
import type { EscalationPolicyRow } from '../../projections/case-escalation/queries.ts'
import { callerOf, settle } from '../kernel/commands.ts'
import { ProfileRef, nameRefs, profileRefs } from '../kernel/relations.ts'
import { ErrorBody, IdParams, Message, authErrors } from '../kernel/schemas/common.ts'

const TAGS = ['cases']
const errors = { 400: ErrorBody, ...authErrors, 404: ErrorBody } as const
/** The cohort the breach counts cover: cases opened in the last 30 days (the original's BREACH_WINDOW_DAYS). */
const WINDOW_MS = 30 * 86_400_000

const Fields = {
  first_response_action: z.enum(ESCALATION_ACTIONS).optional().describe('On a first-response breach (default notify)'),
  resolution_action: z.enum(ESCALATION_ACTIONS).optional().describe('On a resolution breach (default notify)'),
  first_response_target_id: z.uuid().nullable().optional().describe('Who is notified and/or given the case on a first-response breach'),
  resolution_target_id: z.uuid().nullable().optional().describe('Who is notified and/or given the case on a resolution breach'),
  notify_team_id: z.uuid().nullable().optional().describe('A team also notified on either breach'),
  is_active: z.boolean().optional(),
}
const CreateBody = z.object({ priority: z.enum(CASE_PRIORITIES), ...Fields })
/** A PUT never changes the priority: the key is ignored, as the original's. */
const ChangeBody = z.object({ priority: z.string().optional().describe('Ignored: a policy keeps its priority'), ...Fields })

function policyFields(body: Partial<z.infer<typeof ChangeBody>>): Partial<EscalationPolicyFields> {
  const { priority: _fixed, first_response_target_id, resolution_target_id, notify_team_id, ...rest } = body
  return {
    ...rest,
    ...(first_response_target_id !== undefined && { first_response_target: first_response_target_id }),
    ...(resolution_target_id !== undefined && { resolution_target: resolution_target_id }),
    ...(notify_team_id !== undefined && { notify_team: notify_team_id }),
  }
}

const Breaches = z.object({ first_response: z.number().int(), resolution: z.number().int() })
const Policy = z.object({
  id: z.uuid(),
  priority: z.enum(CASE_PRIORITIES),
  first_response_action: z.enum(ESCALATION_ACTIONS),
  resolution_action: z.enum(ESCALATION_ACTIONS),
  first_response_target: ProfileRef.nullable(),
  resolution_target: ProfileRef.nullable(),
  notify_team: z.object({ id: z.uuid(), name: z.string() }).nullable(),
  is_active: z.boolean(),
  breaches_last_30d: Breaches.describe("Breaches among the priority's cases opened in the last 30 days, whatever the policy did"),
  created_at: z.string(),
  updated_at: z.string(),
})

async function policyViews(deps: Deps, orgId: string, rows: readonly EscalationPolicyRow[]): Promise<z.infer<typeof Policy>[]> {
  const now = deps.clock()
  const targets = rows.flatMap((row) => [row.first_response_target, row.resolution_target].filter((id): id is string => id !== null))
  const [people, teams, breaches] = await Promise.all([profileRefs(deps.db, orgId, [...new Set(targets)]), nameRefs(deps.db, 'teams', orgId, rows.flatMap((row) => (row.notify_team ? [row.notify_team] : []))), breachCountsSince(deps.db, orgId, new Date(now.getTime() - WINDOW_MS), now)])
  const person = (id: string | null) => (id && people.find((p) => p.id === id)) || null
  return rows.map((row) => ({
    id: row.id,
    priority: row.priority as z.infer<typeof Policy>['priority'],
    first_response_action: row.first_response_action,
    resolution_action: row.resolution_action,
    first_response_target: person(row.first_response_target),
    resolution_target: person(row.resolution_target),
    notify_team: (row.notify_team && teams.get(row.notify_team)) || null,
    is_active: row.is_active,
    breaches_last_30d: breaches.get(row.priority) ?? { first_response: 0, resolution: 0 },
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  }))
}

/** Escalation policies (the original's escalation_views.py): per priority, what escalating a breached case does; admins write them. */
export function caseEscalationRoutes(deps: Deps): FastifyPluginAsyncZod {
  const view = async (request: FastifyRequest, id: string) => {
    const { orgId } = callerOf(request)
    const [one] = await policyViews(deps, orgId, [await orNotFound(escalationPolicyOf(deps.db, orgId, id))])
    return one!
  }

  return async (app) => {
    app.get('/api/cases/escalation-policies/', { schema: { tags: TAGS, summary: "The escalation policies by priority, each with its priority's breaches of the last 30 days", response: { 200: z.object({ policies: z.array(Policy) }), ...errors } } }, async (request) => {
      const { orgId } = callerOf(request)
      return { policies: await policyViews(deps, orgId, await escalationPoliciesOf(deps.db, orgId)) }
    })

    app.post('/api/cases/escalation-policies/', { schema: { tags: TAGS, summary: 'Create the policy of a priority (admins); 400 when it has one; answers 201 with it', body: CreateBody, response: { 201: Policy, ...errors } } }, async (request, reply) => {
      const fields: EscalationPolicyFields = { first_response_action: 'notify', resolution_action: 'notify', first_response_target: null, resolution_target: null, notify_team: null, is_active: true, ...policyFields(request.body) }
      const { id, position } = await createEscalationPolicy(deps, callerOf(request), request.body.priority, fields)
      await settle(deps, reply, position)
      return reply.code(201).send(await view(request, id))
    })

    app.get('/api/cases/escalation-policies/:id/', { schema: { tags: TAGS, summary: 'One escalation policy', params: IdParams, response: { 200: Policy, ...errors } } }, (request) => view(request, request.params.id))

    app.put('/api/cases/escalation-policies/:id/', { schema: { tags: TAGS, summary: "Change an escalation policy's named fields (admins); its priority stays", params: IdParams, body: ChangeBody, response: { 200: Policy, ...errors } } }, async (request, reply) => {
      await settle(deps, reply, await changeEscalationPolicy(deps, callerOf(request), request.params.id, policyFields(request.body)))
      return view(request, request.params.id)
    })

    app.delete('/api/cases/escalation-policies/:id/', { schema: { tags: TAGS, summary: 'Delete an escalation policy (admins): its priority then escalates to nobody', params: IdParams, response: { 200: Message, ...errors } } }, async (request, reply) => {
      await settle(deps, reply, await deleteEscalationPolicy(deps, callerOf(request), request.params.id))
      return { error: false as const, message: 'Escalation policy deleted' }
    })
  }
}
