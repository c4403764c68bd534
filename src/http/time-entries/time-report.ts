import type { FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { Deps } from '../../deps.ts'
import { organizationById } from '../../identity/organizations.ts'
import { displayName, membersByIds } from '../../identity/users.ts'
import { caseIdsOfAccount, caseRefs } from '../../projections/case/queries.ts'
import { reportEntries } from '../../projections/time-entry/time-entries.ts'
import type { TimeEntryOnDay } from '../../projections/time-entry/time-entries.ts'
import { viewerOf } from '../kernel/auth.ts'
import { csvLine } from '../kernel/csv.ts'
import { isUuid } from '../kernel/relations.ts'
import { ErrorBody, authErrors } from '../kernel/schemas/common.ts'
import { DayParam, timesheetDays } from './timesheet.ts'

const TAGS = ['time-entries']
const errors = { 400: ErrorBody, ...authErrors } as const

const ReportQuery = z.object({
  start: DayParam.optional(),
  end: DayParam.optional(),
  profile: z.string().optional().describe("One agent's time (an admin; a member's report is their own)"),
  case: z.string().optional().describe("One case's time"),
  account: z.string().optional().describe("The time on an account's cases"),
  billable: z.enum(['true', 'false']).optional(),
}).describe('Days as the timesheet takes them (default: this week); an id that is malformed matches nothing')
const Totals = { minutes: z.number().int(), billable_minutes: z.number().int() }
const Report = z.object({
  start: z.string(),
  end: z.string(),
  entries_count: z.number().int(),
  total_minutes: z.number().int(),
  billable_minutes: z.number().int(),
  by_profile: z.array(z.object({ profile_id: z.uuid(), name: z.string(), ...Totals })),
  by_case: z.array(z.object({ case_id: z.uuid(), name: z.string(), ...Totals })),
})

type Sum = { minutes: number; billable_minutes: number }
/** Minutes and billable minutes per key, most minutes first. */
function sumsBy(rows: readonly TimeEntryOnDay[], key: (row: TimeEntryOnDay) => string): [string, Sum][] {
  const sums = new Map<string, Sum>()
  for (const row of rows) {
    const sum = sums.get(key(row)) ?? { minutes: 0, billable_minutes: 0 }
    sum.minutes += row.duration_minutes
    if (row.billable) sum.billable_minutes += row.duration_minutes
    sums.set(key(row), sum)
  }
  return [...sums].sort((a, b) => b[1].minutes - a[1].minutes || a[0].localeCompare(b[0]))
}

const CSV_COLUMNS = ['date', 'case_id', 'case', 'profile_id', 'agent', 'started_at', 'ended_at', 'minutes', 'billable', 'hourly_rate', 'currency', 'description'] as const

/**
 * The time report (an index path the original's code does not have): the finished time of a range
 * of days summed per agent and per case, and the same entries as CSV. A member's report holds only
 * their own time, an admin's everyone's.
 */
export function timeReportRoutes(deps: Deps): FastifyPluginAsyncZod {
  async function report(request: FastifyRequest, query: z.infer<typeof ReportQuery>) {
    const viewer = viewerOf(request)
    const org = await organizationById(deps.db, viewer.orgId)
    const days = timesheetDays(query, org.timezone, deps.clock())
    const id = (value: string | undefined) => (value?.trim() ? (isUuid(value.trim()) ? value.trim() : '') : undefined)
    const [profileId, caseId, account] = [id(query.profile), id(query.case), id(query.account)]
    // Malformed ids ('') match nothing; a case and an account both: the case when it is the account's.
    let caseIds: string[] | undefined = account === undefined ? undefined : account ? await caseIdsOfAccount(deps.db, viewer.orgId, account) : []
    if (caseId !== undefined) caseIds = caseId && (caseIds ?? [caseId]).includes(caseId) ? [caseId] : []
    const rows = profileId === '' ? [] : await reportEntries(deps.db, viewer, { from: days[0]!, to: days.at(-1)!, timezone: org.timezone }, { profileId, caseIds, billable: query.billable === undefined ? undefined : query.billable === 'true' })
    const [members, cases] = await Promise.all([membersByIds(deps.db, viewer.orgId, [...new Set(rows.map((row) => row.profile_id))]), caseRefs(deps.db, { ...viewer, isAdmin: true }, [...new Set(rows.map((row) => row.case_id))])])
    const names = new Map(members.map((member) => [member.id, displayName(member)]))
    return { days, rows, agentName: (id: string) => names.get(id) ?? '', caseName: (id: string) => cases.get(id)?.name ?? '' }
  }

  return async (app) => {
    app.get('/api/time-entries/report/', { schema: { tags: TAGS, summary: 'Finished time of a range of days summed per agent and per case (a member: their own time)', querystring: ReportQuery, response: { 200: Report, ...errors } } }, async (request) => {
      const { days, rows, agentName, caseName } = await report(request, request.query)
      return {
        start: days[0]!,
        end: days.at(-1)!,
        entries_count: rows.length,
        total_minutes: rows.reduce((sum, row) => sum + row.duration_minutes, 0),
        billable_minutes: rows.reduce((sum, row) => sum + (row.billable ? row.duration_minutes : 0), 0),
        by_profile: sumsBy(rows, (row) => row.profile_id).map(([profile_id, sum]) => ({ profile_id, name: agentName(profile_id), ...sum })),
        by_case: sumsBy(rows, (row) => row.case_id).map(([case_id, sum]) => ({ case_id, name: caseName(case_id), ...sum })),
      }
    })

    app.get('/api/time-entries/report/export/', { schema: { tags: TAGS, summary: "The report's entries as CSV, one per line in order of start, with a header row (a member: their own time)", description: 'A cell that could start a spreadsheet formula is prefixed with `\'`.', querystring: ReportQuery, response: { 200: z.string().describe('text/csv'), ...errors } } }, async (request, reply) => {
      const { days, rows, agentName, caseName } = await report(request, request.query)
      const lines = rows.map((row) =>
        csvLine([row.day, row.case_id, caseName(row.case_id), row.profile_id, agentName(row.profile_id), row.started_at.toISOString(), row.ended_at?.toISOString() ?? null, row.duration_minutes, row.billable ? 'true' : 'false', row.hourly_rate, row.currency, row.description]),
      )
      reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="time-report-${days[0]}-${days.at(-1)}.csv"`)
      return reply.send(csvLine(CSV_COLUMNS) + lines.join(''))
    })
  }
}
