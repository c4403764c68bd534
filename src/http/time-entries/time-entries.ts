import type { FastifyReply, FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { changeTimeEntry, deleteTimeEntry, logTime, startTimer, stopTimer } from '../../commands/time-entry/track-time.ts'
import type { Deps } from '../../deps.ts'
import type { Position } from '../../eventstore/event-store.ts'
import { ForbiddenError, NotFoundError, orNotFound } from '../../errors.ts'
import { isCurrency, organizationById } from '../../identity/organizations.ts'
import { displayName, memberById, membersByIds } from '../../identity/users.ts'
import { caseIdsOfAccount, caseRefs } from '../../projections/case/queries.ts'
import { caseTimeEntries, caseTimeSummary, timeEntryOf, timesheetEntries, unbilledTimeEntries } from '../../projections/time-entry/time-entries.ts'
import { viewerOf } from '../kernel/auth.ts'
import { callerOf, settle } from '../kernel/commands.ts'
import { isUuid } from '../kernel/relations.ts'
import { ErrorBody, IdParams, authErrors } from '../kernel/schemas/common.ts'
import { formBoolean } from '../kernel/schemas/form-values.ts'
import { DayParam, timesheetDays } from './timesheet.ts'
import { TimeEntry, TimesheetEntry, timeEntryViews } from './views.ts'

const TAGS = ['time-entries']
const errors = { 400: ErrorBody, ...authErrors, 404: ErrorBody } as const
const NoContent = z.null().describe('No content')

const Instant = z.iso.datetime({ offset: true, message: 'Expected a date and time (ISO 8601).' })
const Rate = z.preprocess((v) => (typeof v === 'number' ? String(v) : v), z.string().regex(/^\d{1,10}(\.\d{1,2})?$/, 'Expected a non-negative amount with at most 2 decimals.')).nullable()
const Currency = z.string().refine(isCurrency, 'Expected an ISO 4217 currency code (USD).')
const Billable = formBoolean(z.boolean())
const Description = z.string().trim().max(10_000)

const ManualEntry = z.object({
  started_at: Instant,
  ended_at: Instant,
  description: Description.min(1, 'Description is required when logging time manually.'),
  billable: Billable.default(false),
  hourly_rate: Rate.optional(),
  currency: Currency.optional(),
})
const TimerStart = z.object({ description: Description.default(''), billable: Billable.default(false), hourly_rate: Rate.optional(), currency: Currency.optional() })
const EntryChange = z.object({
  started_at: Instant.optional(),
  ended_at: Instant.optional().describe('Setting it on a running timer stops it'),
  description: Description.min(1, 'Description cannot be empty.').optional(),
  billable: Billable.optional(),
  hourly_rate: Rate.optional(),
  currency: Currency.optional(),
})
const Summary = z.object({ total_minutes: z.number().int(), billable_minutes: z.number().int(), last_entry_at: z.string().nullable(), by_profile: z.array(z.object({ profile_id: z.uuid(), name: z.string(), minutes: z.number().int() })) })
const Day = z.object({ date: z.string(), entries: z.array(TimesheetEntry), total_minutes: z.number().int(), billable_minutes: z.number().int() })
const Timesheet = z.object({
  profile_id: z.uuid(),
  profile: z.object({ id: z.uuid(), name: z.string() }),
  start: z.string(),
  end: z.string(),
  days: z.array(Day),
  total_minutes: z.number().int(),
  billable_minutes: z.number().int(),
  running_count: z.number().int(),
  server_now: z.string(),
})

/**
 * Time tracking (the original's backend/cases/time_views.py): timers and hand-logged entries on a
 * case, the case's time summary, an agent's timesheet and the billable time not billed yet. A
 * member sees and changes their own entries, an admin everyone's; another member's entry reads as
 * missing (the original answered 403, confirming it exists).
 */
export function timeEntryRoutes(deps: Deps): FastifyPluginAsyncZod {
  /** A case of the organization the caller may see, or 404. */
  const visibleCase = async (request: FastifyRequest, id: string) => orNotFound(caseRefs(deps.db, viewerOf(request), [id]).then((refs) => refs.get(id)))
  const entryView = async (request: FastifyRequest, reply: FastifyReply, id: string, position: Position | null) => {
    await settle(deps, reply, position)
    const viewer = viewerOf(request)
    const [view] = await timeEntryViews(deps.db, viewer.orgId, [await orNotFound(timeEntryOf(deps.db, viewer, id))])
    return view!
  }

  return async (app) => {
    app.get('/api/cases/:id/time-entries/', { schema: { tags: TAGS, summary: "A case's time entries the caller sees (their own; an admin everyone's), latest start first: a bare list", params: IdParams, response: { 200: z.array(TimeEntry), ...errors } } }, async (request) => {
      await visibleCase(request, request.params.id)
      const viewer = viewerOf(request)
      return timeEntryViews(deps.db, viewer.orgId, await caseTimeEntries(deps.db, viewer, request.params.id))
    })

    app.post('/api/cases/:id/time-entries/', { schema: { tags: TAGS, summary: "Log finished time on a case by hand (the caller's): its start, end and description; answers 201 with the entry", params: IdParams, body: ManualEntry, response: { 201: TimeEntry, ...errors } } }, async (request, reply) => {
      const { id, position } = await logTime(deps, callerOf(request), request.params.id, { ...request.body, hourly_rate: request.body.hourly_rate ?? null })
      return reply.code(201).send(await entryView(request, reply, id, position))
    })

    app.post('/api/cases/:id/time-entries/start/', { schema: { tags: TAGS, summary: "Start the caller's timer on a case; 409 while another of theirs runs (naming it); answers 201 with the entry", params: IdParams, body: TimerStart.nullable().describe('May be left out'), response: { 201: TimeEntry, 409: ErrorBody, ...errors } } }, async (request, reply) => {
      const body = request.body ?? { description: '', billable: false }
      const { id, position } = await startTimer(deps, callerOf(request), request.params.id, { ...body, hourly_rate: body.hourly_rate ?? null })
      return reply.code(201).send(await entryView(request, reply, id, position))
    })

    app.get('/api/cases/:id/time-summary/', { schema: { tags: TAGS, summary: "A case's finished time, everyone's: total and billable minutes, the latest entry's start, and minutes per agent (most first)", params: IdParams, response: { 200: Summary, ...errors } } }, async (request) => {
      await visibleCase(request, request.params.id)
      const { orgId } = viewerOf(request)
      const summary = await caseTimeSummary(deps.db, orgId, request.params.id)
      const members = new Map((await membersByIds(deps.db, orgId, summary.by_profile.map((row) => row.profile_id))).map((member) => [member.id, member.email]))
      return { ...summary, last_entry_at: summary.last_entry_at?.toISOString() ?? null, by_profile: summary.by_profile.map((row) => ({ ...row, name: members.get(row.profile_id) ?? '' })) }
    })

    app.get('/api/time-entries/timesheet/', {
      schema: {
        tags: TAGS,
        summary: "An agent's timesheet: every day from start to end (default: this week, Monday to Sunday, in the organization's time zone) with its entries, running timers included, and the totals",
        querystring: z.object({ profile: z.string().optional().describe("Another member's (admins); default the caller's"), start: DayParam.optional(), end: DayParam.optional() }),
        response: { 200: Timesheet, ...errors },
      },
    }, async (request) => {
      const viewer = viewerOf(request)
      const wanted = request.query.profile?.trim() || viewer.profileId
      if (!wanted) throw new ForbiddenError('The organization API key has no timesheet; name a member by `profile`.')
      if (wanted !== viewer.profileId && !viewer.isAdmin) throw new ForbiddenError("Only admins can view another profile's timesheet.")
      if (!isUuid(wanted)) throw new NotFoundError()
      const [member, org] = await Promise.all([memberById(deps.db, viewer.orgId, wanted), organizationById(deps.db, viewer.orgId)])
      const now = deps.clock()
      const days = timesheetDays(request.query, org.timezone, now)
      const rows = await timesheetEntries(deps.db, viewer.orgId, member.id, { from: days[0]!, to: days.at(-1)!, timezone: org.timezone })
      const [views, cases] = await Promise.all([timeEntryViews(deps.db, viewer.orgId, rows), caseRefs(deps.db, { ...viewer, isAdmin: true }, [...new Set(rows.map((row) => row.case_id))])])
      const buckets = new Map(days.map((date) => [date, { date, entries: [] as z.infer<typeof TimesheetEntry>[], total_minutes: 0, billable_minutes: 0 }]))
      rows.forEach((row, i) => {
        const bucket = buckets.get(row.day)!
        const minutes = row.ended_at === null ? Math.max(0, Math.floor((now.getTime() - row.started_at.getTime()) / 60_000)) : row.duration_minutes
        bucket.entries.push({ ...views[i]!, case: { id: row.case_id, name: cases.get(row.case_id)?.name ?? '' }, ...(row.ended_at === null && { live_duration_minutes: minutes }) })
        bucket.total_minutes += minutes
        if (row.billable) bucket.billable_minutes += minutes
      })
      const all = [...buckets.values()]
      return {
        profile_id: member.id,
        profile: { id: member.id, name: displayName(member) },
        start: days[0]!,
        end: days.at(-1)!,
        days: all,
        total_minutes: all.reduce((sum, day) => sum + day.total_minutes, 0),
        billable_minutes: all.reduce((sum, day) => sum + day.billable_minutes, 0),
        running_count: rows.filter((row) => row.ended_at === null).length,
        server_now: now.toISOString(),
      }
    })

    app.get('/api/time-entries/unbilled/', { schema: { tags: TAGS, summary: 'Billable, finished time not billed yet that the caller sees, latest first; of one account\'s cases with `account`: what invoicing bills', querystring: z.object({ account: z.string().optional().describe('An account id; a malformed one matches nothing') }), response: { 200: z.array(TimeEntry), ...errors } } }, async (request) => {
      const viewer = viewerOf(request)
      const account = request.query.account?.trim()
      const caseIds = account ? (isUuid(account) ? await caseIdsOfAccount(deps.db, viewer.orgId, account) : []) : undefined
      return timeEntryViews(deps.db, viewer.orgId, await unbilledTimeEntries(deps.db, viewer, caseIds))
    })

    app.post('/api/time-entries/:id/stop/', { schema: { tags: TAGS, summary: 'Stop a running timer (its agent, or an admin); 400 when it is stopped already', params: IdParams, response: { 200: TimeEntry, ...errors } } }, async (request, reply) =>
      entryView(request, reply, request.params.id, await stopTimer(deps, callerOf(request), request.params.id)),
    )

    app.put('/api/time-entries/:id/', { schema: { tags: TAGS, summary: "Change an entry's named fields (its agent, or an admin): start, end, description, billable, rate, currency; its case and agent stay", params: IdParams, body: EntryChange, response: { 200: TimeEntry, ...errors } } }, async (request, reply) =>
      entryView(request, reply, request.params.id, await changeTimeEntry(deps, callerOf(request), request.params.id, request.body)),
    )

    app.delete('/api/time-entries/:id/', { schema: { tags: TAGS, summary: 'Delete an entry (its agent, or an admin); answers 204', params: IdParams, response: { 204: NoContent, ...errors } } }, async (request, reply) => {
      await settle(deps, reply, await deleteTimeEntry(deps, callerOf(request), request.params.id))
      return reply.code(204).send(null)
    })
  }
}
