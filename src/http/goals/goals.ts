import { randomUUID } from 'node:crypto'
import type { FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { GOAL_TYPES, PERIOD_TYPES, goalDecider, goalStatus, goalStreams } from '../../commands/goal/goal.ts'
import type { GoalFields } from '../../commands/goal/goal.ts'
import { ForbiddenError, ValidationError, orNotFound } from '../../errors.ts'
import { isCurrency, organizationById } from '../../identity/organizations.ts'
import { goalOf, goalProfileName, goalVisibleTo, leaderboardGoals, listGoals } from '../../projections/goal/goals.ts'
import type { GoalView } from '../../projections/goal/goals.ts'
import type { Deps } from '../../deps.ts'
import { requestCommands } from '../kernel/commands.ts'
import { identityOf, requireAdmin } from '../kernel/auth.ts'
import { relationErrors } from '../../projections/record/relations.ts'
import { ErrorBody, IdParams, Message, PageQuery, authErrors } from '../kernel/schemas/common.ts'
import { formBoolean } from '../kernel/schemas/form-values.ts'
import { Amount } from '../opportunities/schemas.ts'

const TAGS = ['goals']
const REQUIRED = 'This field is required.'
const Day = z.iso.date('Expected a date as YYYY-MM-DD.')
const Currency = z.string().trim().toUpperCase().refine(isCurrency, 'Expected an ISO 4217 currency code, such as "USD".')
/** An optional owner id: a blank (what a form sends for "nobody") reads as null. */
const OwnerId = z.preprocess((v) => (typeof v === 'string' && v.trim() === '' ? null : v), z.uuid('Expected an id (uuid).').transform((id) => id.toLowerCase()).nullable().optional())
const Target = Amount.refine((v) => !/^0+\.00$/.test(v), 'Target value must be greater than 0.')
const Decimal = z.string().describe('Decimal string with 2 places, computed in SQL numeric (no floating point)')

const GoalBody = z
  .object({
    name: z.string().trim().min(1, 'This field may not be blank.').max(255).optional().describe('Required on POST'),
    goal_type: z.enum(GOAL_TYPES).optional().describe('REVENUE (a won amount) or DEALS_CLOSED (a number of won deals); default on POST: REVENUE'),
    target_value: Target.optional().describe('Decimal above 0 (string or number, at most 2 places): an amount in `currency` for REVENUE, a number of deals for DEALS_CLOSED. Required on POST'),
    period_type: z.enum(PERIOD_TYPES).optional().describe('MONTHLY, QUARTERLY, YEARLY or CUSTOM (a label: period_start and period_end are the period); default on POST: CUSTOM'),
    period_start: Day.optional().describe('First day of the period (inclusive). Required on POST'),
    period_end: Day.optional().describe('Last day of the period (inclusive), after period_start. Required on POST'),
    assigned_to: OwnerId.describe('The profile the goal is for: an active profile of this organization (one already assigned may stay after deactivation). At most one of assigned_to and team; neither: the whole organization'),
    team: OwnerId.describe('The team the goal is for (its current members count): a team of this organization'),
    is_active: formBoolean(z.boolean()).optional().describe('Default on POST: true. Inactive goals stay listed but leave the leaderboard'),
    currency: Currency.nullable().optional().describe("ISO 4217 code of a REVENUE target; default on POST (or null): the organization's default currency"),
    profile: OwnerId.describe('Deprecated alias of assigned_to'),
    target_amount: Target.optional().describe('Deprecated alias of target_value'),
  })
  .describe('A sales goal. PUT takes the same fields, all optional: the ones given replace the current values (giving assigned_to or team re-targets the goal: the other one, when absent, counts as null)')

const GoalProfile = z
  .object({
    id: z.uuid(),
    user_details: z.object({ id: z.uuid(), email: z.string(), first_name: z.string(), last_name: z.string(), name: z.string().describe('First and last name, or the email while both are blank') }),
    role: z.string(),
    is_active: z.boolean(),
    phone: z.string(),
    created_at: z.string(),
  })
  .describe('The profile the goal is assigned to')

const Goal = z.object({
  id: z.uuid(),
  name: z.string(),
  goal_type: z.enum(GOAL_TYPES),
  target_value: Decimal,
  period_type: z.enum(PERIOD_TYPES),
  period_start: z.string(),
  period_end: z.string(),
  assigned_to: z.uuid().nullable().describe('The profile the goal is for; null for a team or organization goal'),
  assigned_to_detail: GoalProfile.nullable(),
  team: z.uuid().nullable().describe('The team the goal is for; null for a profile or organization goal'),
  team_detail: z.object({ id: z.uuid(), name: z.string() }).nullable().describe('null for a profile or organization goal, and once the team was deleted'),
  is_active: z.boolean(),
  currency: z.string().describe('The currency a REVENUE goal counts'),
  org: z.uuid(),
  created_at: z.string(),
  updated_at: z.string(),
  progress_value: Decimal.describe(
    "REVENUE: the sum of the amounts of the deals now in a won-KIND stage (any won stage, whatever its code) with closed_on inside the period, in the goal's currency (a deal without one counts in the organization's default); DEALS_CLOSED: how many such deals (any currency). Not deleted, credited to the owner: a deal is credited to its assignees, or to its creator while nobody is assigned; a team goal counts each deal credited to any of the team's current members once; an organization goal counts every won deal. A deal moved out of won stops counting",
  ),
  progress_percent: z.number().int().describe('progress_value / target_value × 100, rounded down, at most 100'),
  status: z.enum(['completed', 'on_track', 'at_risk', 'behind']).describe("completed at 100%; otherwise against the share of the period elapsed by today (the organization's time zone): on_track at or above it (or before the period), at_risk from 80% of it, else behind"),
})
const GoalList = z.object({
  goals: z.array(Goal),
  goals_count: z.number().int().describe('How many goals match, on every page'),
  offset: z.number().int().nullable().describe('The offset of the next page; null on the last one'),
  per_page: z.number().int(),
})
const ListQuery = PageQuery.extend({
  active: z.enum(['true', 'false']).optional().describe('true: active goals only'),
  current: z.enum(['true', 'false']).optional().describe("true: only goals whose period holds today (the organization's time zone)"),
  assigned_to: z.uuid().optional(),
  team: z.uuid().optional(),
  period_type: z.enum(PERIOD_TYPES).optional(),
  search: z.string().optional().describe('Part of the name, case-insensitively'),
})
const LeaderboardQuery = z.object({ period_type: z.enum(PERIOD_TYPES).default('MONTHLY').describe('Default MONTHLY') })
const Leaderboard = z.object({
  leaderboard: z
    .array(
      z.object({
        goal_id: z.uuid(),
        goal_name: z.string(),
        user: z.object({ id: z.uuid(), name: z.string() }),
        target: Decimal,
        achieved: Decimal.describe("The goal's progress_value"),
        percent: z.number().int().describe("The goal's progress_percent"),
        rank: z.number().int().describe('Position in this list, from 1'),
      }),
    )
    .describe("The active goals assigned to one profile whose period holds today and has the period_type, highest percent first (ties by name, then goal id); a member sees only the goals they may read (their own and their teams')"),
})
const errors = { 400: ErrorBody, ...authErrors, 404: ErrorBody } as const

/** Today in the organization's time zone, YYYY-MM-DD. */
const dateIn = (timeZone: string, now: Date) => new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(now)

const goalBody = (row: GoalView, today: string): z.infer<typeof Goal> => ({
  id: row.id,
  name: row.name,
  goal_type: row.goal_type,
  target_value: row.target_amount,
  period_type: row.period_type,
  period_start: row.period_start,
  period_end: row.period_end,
  assigned_to: row.owner_type === 'profile' ? row.owner_id : null,
  assigned_to_detail: row.profile && {
    id: row.profile.id,
    user_details: { id: row.profile.user_id, email: row.profile.email, first_name: row.profile.first_name, last_name: row.profile.last_name, name: goalProfileName(row.profile) },
    role: row.profile.role,
    is_active: row.profile.is_active,
    phone: row.profile.phone,
    created_at: row.profile.created_at.toISOString(),
  },
  team: row.owner_type === 'team' ? row.owner_id : null,
  team_detail: row.owner_type === 'team' && row.team_name !== null ? { id: row.owner_id!, name: row.team_name } : null,
  is_active: row.is_active,
  currency: row.currency,
  org: row.org_id,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
  progress_value: row.progress_value,
  progress_percent: row.progress_percent,
  status: goalStatus(row.progress_percent, { start: row.period_start, end: row.period_end }, today),
})

/**
 * Sales goals (the original's SalesGoal routes): admins read every goal, members the goals assigned
 * to them and their teams'; admins set, change and delete them. Static paths under
 * /api/opportunities/goals/, registered before the deal routes' `:id` paths.
 */
export function goalRoutes(deps: Deps): FastifyPluginAsyncZod {
  const { db, clock } = deps
  const found = (orgId: string, id: string) => orNotFound(goalOf(db, orgId, id))
  const todayOf = async (orgId: string) => dateIn((await organizationById(db, orgId)).timezone, clock())
  /** A member reads only the goals visibleTo them; an admin (or the organization's API key) reads all. */
  const viewerOf = (request: FastifyRequest) => {
    const identity = identityOf(request)
    return identity.role === 'ADMIN' || identity.profileId === null ? undefined : identity.profileId
  }

  /**
   * The goal's fields from a body (POST: over the defaults; PUT: over the current goal). The owner
   * must be of the organization (400 naming assigned_to or team); the currency defaults to the org's.
   */
  const fieldsOf = async (orgId: string, body: z.infer<typeof GoalBody>, current?: GoalView): Promise<GoalFields> => {
    // Checked here rather than in the schema, so the role (403) and the id (404) are answered first.
    const problems: Record<string, string[]> = {}
    const assignedTo = body.assigned_to !== undefined ? body.assigned_to : body.profile
    const target = body.target_value ?? body.target_amount
    if (!current) {
      if (body.name === undefined) problems.name = [REQUIRED]
      if (target === undefined) problems.target_value = [REQUIRED]
      if (body.period_start === undefined) problems.period_start = [REQUIRED]
      if (body.period_end === undefined) problems.period_end = [REQUIRED]
    }
    if (assignedTo && body.team) problems.assigned_to = problems.team = ['Expected at most one of assigned_to and team.']
    const periodStart = body.period_start ?? current?.period_start
    const periodEnd = body.period_end ?? current?.period_end
    if (!problems.period_end && periodStart && periodEnd && periodEnd <= periodStart) problems.period_end = ['Period end must be after period start.']
    if (Object.keys(problems).length) throw new ValidationError(problems)

    const retargeted = assignedTo !== undefined || body.team !== undefined
    const [owner_type, owner_id] = !retargeted && current ? [current.owner_type, current.owner_id] : assignedTo ? (['profile', assignedTo] as const) : body.team ? (['team', body.team] as const) : (['org', null] as const)
    if (owner_id !== null && owner_type !== 'org') {
      const kept = current && current.owner_type === owner_type && current.owner_id ? [current.owner_id] : []
      const problem = await relationErrors(db, orgId, owner_type === 'profile' ? 'profiles' : 'teams', [owner_id], kept)
      if (problem) throw new ValidationError({ [owner_type === 'profile' ? 'assigned_to' : 'team']: problem })
    }
    const currency = body.currency ?? (body.currency === undefined && current ? current.currency : (await organizationById(db, orgId)).default_currency)
    return {
      name: body.name ?? current!.name,
      goal_type: body.goal_type ?? current?.goal_type ?? 'REVENUE',
      owner_type,
      owner_id,
      period_type: body.period_type ?? current?.period_type ?? 'CUSTOM',
      period_start: periodStart!,
      period_end: periodEnd!,
      target_amount: target ?? current!.target_amount,
      currency,
      is_active: body.is_active ?? current?.is_active ?? true,
    }
  }

  const page = async (request: FastifyRequest, query: z.infer<typeof ListQuery>, ended: boolean) => {
    const { orgId } = identityOf(request)
    const today = await todayOf(orgId)
    const { limit, offset } = query
    const { count, rows } = await listGoals(db, orgId, {
      limit,
      offset,
      viewer: viewerOf(request),
      endedBefore: ended ? today : undefined,
      current: query.current === 'true' ? today : undefined,
      active: query.active === 'true' ? true : undefined,
      assignedTo: query.assigned_to?.toLowerCase(),
      team: query.team?.toLowerCase(),
      periodType: query.period_type,
      search: query.search?.trim() || undefined,
    })
    const next = offset + rows.length
    return { goals: rows.map((row) => goalBody(row, today)), goals_count: count, offset: rows.length && next < count ? next : null, per_page: limit }
  }

  return async (app) => {
    app.get(
      '/api/opportunities/goals/',
      { schema: { tags: TAGS, summary: "Goals with their progress, newest first, then by name (members: their own and their teams' goals)", querystring: ListQuery, response: { 200: GoalList, ...authErrors } } },
      async (request) => page(request, request.query, false),
    )

    app.post('/api/opportunities/goals/', { schema: { tags: TAGS, summary: 'Set a goal (admins)', body: GoalBody, response: { 201: Goal, ...errors } } }, async (request, reply) => {
      const identity = requireAdmin(request)
      const fields = await fieldsOf(identity.orgId, request.body)
      const commands = requestCommands(deps, request, reply)
      const goalId = randomUUID()
      await commands.run(goalDecider, goalStreams.stream(goalId), { type: 'SetGoal', goalId, orgId: identity.orgId, fields, actorId: identity.profileId, at: clock().toISOString() })
      await commands.settle()
      return reply.code(201).send(goalBody(await found(identity.orgId, goalId), await todayOf(identity.orgId)))
    })

    app.get(
      '/api/opportunities/goals/history/',
      {
        schema: {
          tags: TAGS,
          summary: "Goals whose period has ended, with their final numbers, latest end first (members: their own and their teams' goals)",
          description: "Ended: period_end before today in the organization's time zone. The numbers are computed like the live ones, so a deal edited afterwards still moves them.",
          querystring: ListQuery,
          response: { 200: GoalList, ...authErrors },
        },
      },
      async (request) => page(request, request.query, true),
    )

    app.get('/api/opportunities/goals/leaderboard/', { schema: { tags: TAGS, summary: "Current goals of one period type assigned to a profile, ranked by progress (members: their own and their teams' goals)", querystring: LeaderboardQuery, response: { 200: Leaderboard, ...errors } } }, async (request) => {
      const { orgId } = identityOf(request)
      const rows = await leaderboardGoals(db, orgId, { today: await todayOf(orgId), periodType: request.query.period_type, viewer: viewerOf(request) })
      return {
        leaderboard: rows.map((row, i) => ({ goal_id: row.id, goal_name: row.name, user: { id: row.owner_id!, name: goalProfileName(row.profile!) }, target: row.target_amount, achieved: row.progress_value, percent: row.progress_percent, rank: i + 1 })),
      }
    })

    app.get('/api/opportunities/goals/:id/', { schema: { tags: TAGS, summary: "One goal with its progress (members: their own and their teams' goals, else 403)", params: IdParams, response: { 200: Goal, ...authErrors, 404: ErrorBody } } }, async (request) => {
      const { orgId } = identityOf(request)
      const goal = await found(orgId, request.params.id)
      const viewer = viewerOf(request)
      if (viewer !== undefined && !(await goalVisibleTo(db, orgId, goal.id, viewer))) throw new ForbiddenError('You do not have permission.')
      return goalBody(goal, await todayOf(orgId))
    })

    app.put('/api/opportunities/goals/:id/', { schema: { tags: TAGS, summary: 'Change a goal (admins): the fields given replace the current ones', params: IdParams, body: GoalBody, response: { 200: Goal, ...errors } } }, async (request, reply) => {
      const { orgId } = requireAdmin(request)
      const current = await found(orgId, request.params.id)
      const fields = await fieldsOf(orgId, request.body, current)
      const commands = requestCommands(deps, request, reply)
      await commands.run(goalDecider, goalStreams.stream(current.id), { type: 'ChangeGoal', orgId, fields, at: clock().toISOString() })
      await commands.settle()
      return goalBody(await found(orgId, current.id), await todayOf(orgId))
    })

    app.delete('/api/opportunities/goals/:id/', { schema: { tags: TAGS, summary: 'Delete a goal for good (admins)', params: IdParams, response: { 200: Message, ...authErrors, 404: ErrorBody } } }, async (request, reply) => {
      const { orgId } = requireAdmin(request)
      const current = await found(orgId, request.params.id)
      const commands = requestCommands(deps, request, reply)
      await commands.run(goalDecider, goalStreams.stream(current.id), { type: 'DeleteGoal', orgId, at: clock().toISOString() })
      await commands.settle()
      return { error: false as const, message: 'Goal Deleted Successfully' }
    })
  }
}
