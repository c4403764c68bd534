import { randomUUID } from 'node:crypto'
import type { FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { goalDecider, goalStreams } from '../../commands/goal/goal.ts'
import type { GoalFields } from '../../commands/goal/goal.ts'
import { ValidationError, orNotFound } from '../../errors.ts'
import { isCurrency, organizationById } from '../../identity/organizations.ts'
import { goalOf, leaderboard, listGoals } from '../../projections/goals.ts'
import type { GoalView } from '../../projections/goals.ts'
import type { Deps } from '../../deps.ts'
import { requestCommands } from '../kernel/commands.ts'
import { identityOf, requireAdmin } from '../kernel/auth.ts'
import { relationErrors } from '../../projections/relations.ts'
import { ErrorBody, IdParams, Message, PageQuery, authErrors, pageOf } from '../kernel/schemas/common.ts'
import { Amount } from '../opportunities/schemas.ts'

const TAGS = ['goals']
const Day = z.iso.date('Expected a date as YYYY-MM-DD.')
const Currency = z.string().trim().toUpperCase().refine(isCurrency, 'Expected an ISO 4217 currency code, such as "USD".')
const OwnerId = z.uuid('Expected an id (uuid).').transform((id) => id.toLowerCase())
const ONE_OWNER = 'Expected exactly one of profile or team.'
const Money = z.string().describe('Decimal string with 2 places, summed in SQL numeric (no floating point)')

const GoalBody = z
  .object({
    name: z.string().trim().min(1, 'This field may not be blank.').max(255),
    profile: OwnerId.nullable().optional().describe('The owner when it is a profile: an active profile of this organization (one already owning the goal may stay after deactivation). Exactly one of profile and team'),
    team: OwnerId.nullable().optional().describe('The owner when it is a team of this organization. Exactly one of profile and team'),
    period_start: Day.describe('First day of the period (inclusive)'),
    period_end: Day.describe('Last day of the period (inclusive); on or after period_start'),
    target_amount: Amount.refine((v) => !/^0+\.00$/.test(v), 'Expected an amount above 0.').describe('Decimal above 0 (string or number, at most 2 places); answered as a string with 2 places'),
    currency: Currency.nullable().optional().describe("ISO 4217 code; omitted or null: the organization's default currency (on PUT too: PUT replaces the whole goal)"),
  })
  .describe('A sales goal. PUT takes the same body and replaces the goal whole')

const Goal = z.object({
  id: z.uuid(),
  name: z.string(),
  owner_type: z.enum(['profile', 'team']),
  owner: z.object({ id: z.uuid(), name: z.string().nullable().describe("A profile's first and last name (its email while both are blank); a team's name; null once the team was deleted") }),
  period_start: z.string(),
  period_end: z.string(),
  target_amount: Money,
  currency: z.string(),
  achieved_amount: Money.describe(
    "Sum of the amounts of the deals now in a won-KIND stage (any won stage, whatever its code) with closed_on inside the period, in the goal's currency (a deal without one counts in the organization's default), not deleted, credited to the owner. A deal is credited to its assignees, or to its creator while nobody is assigned; a team goal counts each deal credited to any of the team's current members once. A deal moved out of won stops counting",
  ),
  progress_percent: z.string().describe('achieved_amount / target_amount × 100, rounded half away from zero to one decimal, as a decimal string ("62.5"); may exceed 100'),
  won_deals_count: z.number().int().describe('How many deals achieved_amount sums'),
})
const LeaderboardQuery = z
  .object({
    period_start: Day.describe('First closed_on counted (inclusive); required'),
    period_end: Day.describe('Last closed_on counted (inclusive); required, on or after period_start'),
    currency: Currency.optional().describe("Only deals in this currency; default: the organization's default currency"),
  })
  .refine((q) => q.period_start <= q.period_end, { path: ['period_end'], message: 'Expected a date on or after period_start.' })
const Leaderboard = z.object({
  period_start: z.string(),
  period_end: z.string(),
  currency: z.string(),
  results: z
    .array(z.object({ rank: z.number().int().describe('Position in this list, from 1'), profile: z.object({ id: z.uuid(), name: z.string() }), won_amount: Money, won_deals_count: z.number().int() }))
    .describe('Profiles credited with at least one won deal closed in the period in the currency (same crediting as goals; a deal with several assignees counts in full for each), highest won amount first, ties by name (case-insensitive) then id'),
})
const errors = { 400: ErrorBody, ...authErrors, 404: ErrorBody } as const

const goalBody = (row: GoalView) => ({
  id: row.id,
  name: row.name,
  owner_type: row.owner_type,
  owner: { id: row.owner_id, name: row.owner_name },
  period_start: row.period_start,
  period_end: row.period_end,
  target_amount: row.target_amount,
  currency: row.currency,
  achieved_amount: row.achieved_amount,
  progress_percent: row.progress_percent,
  won_deals_count: row.won_deals_count,
})

/** Today in the organization's time zone, YYYY-MM-DD: a goal whose period_end is before it has ended. */
const dateIn = (timeZone: string, now: Date) => new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(now)

/**
 * Sales goals: every member reads them (with their progress); admins set, replace and delete them.
 * Static paths under /api/opportunities/goals/, registered before the deal routes' `:id` paths.
 */
export function goalRoutes(deps: Deps): FastifyPluginAsyncZod {
  const { db, clock } = deps
  const found = (orgId: string, id: string) => orNotFound(goalOf(db, orgId, id))

  /** The goal's fields from a body: the owner must be of the organization (400 naming profile or team), the currency defaults to the org's. */
  const fieldsOf = async (orgId: string, body: z.infer<typeof GoalBody>, current?: GoalView): Promise<GoalFields> => {
    // Checked here rather than in the schema, so the role (403) and the id (404) are answered first.
    const problems: Record<string, string[]> = {}
    if (Boolean(body.profile) === Boolean(body.team)) problems.profile = problems.team = [ONE_OWNER]
    if (body.period_start > body.period_end) problems.period_end = ['Expected a date on or after period_start.']
    if (Object.keys(problems).length) throw new ValidationError(problems)
    const [owner_type, owner_id] = body.profile ? (['profile', body.profile] as const) : (['team', body.team!] as const)
    const kept = current && current.owner_type === owner_type ? [current.owner_id] : []
    const problem = await relationErrors(db, orgId, owner_type === 'profile' ? 'profiles' : 'teams', [owner_id], kept)
    if (problem) throw new ValidationError({ [owner_type]: problem })
    const currency = body.currency ?? (await organizationById(db, orgId)).default_currency
    return { name: body.name, owner_type, owner_id, period_start: body.period_start, period_end: body.period_end, target_amount: body.target_amount, currency }
  }

  const page = async (request: FastifyRequest, query: { limit: number; offset: number }, ended: boolean) => {
    const { orgId } = identityOf(request)
    const endedBefore = ended ? dateIn((await organizationById(db, orgId)).timezone, clock()) : undefined
    const { count, rows } = await listGoals(db, orgId, { ...query, endedBefore })
    return { count, offset: query.offset, limit: query.limit, results: rows.map(goalBody) }
  }

  return async (app) => {
    app.get('/api/opportunities/goals/', { schema: { tags: TAGS, summary: 'Goals of the organization with their progress, newest period first, then by name (members)', querystring: PageQuery, response: { 200: pageOf(Goal), ...authErrors } } }, async (request) => page(request, request.query, false))

    app.post('/api/opportunities/goals/', { schema: { tags: TAGS, summary: 'Set a goal (admins)', body: GoalBody, response: { 201: Goal, ...errors } } }, async (request, reply) => {
      const identity = requireAdmin(request)
      const fields = await fieldsOf(identity.orgId, request.body)
      const commands = requestCommands(deps, request, reply)
      const goalId = randomUUID()
      await commands.run(goalDecider, goalStreams.stream(goalId), { type: 'SetGoal', goalId, orgId: identity.orgId, fields, actorId: identity.profileId, at: clock().toISOString() })
      await commands.settle()
      return reply.code(201).send(goalBody(await found(identity.orgId, goalId)))
    })

    app.get(
      '/api/opportunities/goals/history/',
      { schema: { tags: TAGS, summary: 'Goals whose period has ended, with their final numbers, latest end first (members)', description: "Ended: period_end before today in the organization's time zone. The numbers are computed like the live ones, so a deal edited afterwards still moves them.", querystring: PageQuery, response: { 200: pageOf(Goal), ...authErrors } } },
      async (request) => page(request, request.query, true),
    )

    app.get('/api/opportunities/goals/leaderboard/', { schema: { tags: TAGS, summary: 'Profiles ranked by won amount in a period (members)', querystring: LeaderboardQuery, response: { 200: Leaderboard, ...errors } } }, async (request) => {
      const { orgId } = identityOf(request)
      const { period_start, period_end } = request.query
      const currency = request.query.currency ?? (await organizationById(db, orgId)).default_currency
      const rows = await leaderboard(db, orgId, { from: period_start, to: period_end, currency })
      return { period_start, period_end, currency, results: rows.map((row, i) => ({ rank: i + 1, profile: { id: row.profile_id, name: row.name }, won_amount: row.won_amount, won_deals_count: row.won_deals_count })) }
    })

    app.get('/api/opportunities/goals/:id/', { schema: { tags: TAGS, summary: 'One goal with its progress (members)', params: IdParams, response: { 200: Goal, ...authErrors, 404: ErrorBody } } }, async (request) => goalBody(await found(identityOf(request).orgId, request.params.id)))

    app.put('/api/opportunities/goals/:id/', { schema: { tags: TAGS, summary: 'Replace a goal (admins)', params: IdParams, body: GoalBody, response: { 200: Goal, ...errors } } }, async (request, reply) => {
      const { orgId } = requireAdmin(request)
      const current = await found(orgId, request.params.id)
      const fields = await fieldsOf(orgId, request.body, current)
      const commands = requestCommands(deps, request, reply)
      await commands.run(goalDecider, goalStreams.stream(current.id), { type: 'ChangeGoal', orgId, fields, at: clock().toISOString() })
      await commands.settle()
      return goalBody(await found(orgId, current.id))
    })

    app.delete('/api/opportunities/goals/:id/', { schema: { tags: TAGS, summary: 'Delete a goal for good (admins)', params: IdParams, response: { 200: Message, ...authErrors, 404: ErrorBody } } }, async (request, reply) => {
      const { orgId } = requireAdmin(request)
      const current = await found(orgId, request.params.id)
      const commands = requestCommands(deps, request, reply)
      await commands.run(goalDecider, goalStreams.stream(current.id), { type: 'DeleteGoal', orgId, at: clock().toISOString() })
      await commands.settle()
      return { error: false as const, message: 'Goal deleted' }
    })
  }
}
