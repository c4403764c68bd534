import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import type { CalendarOf } from '../../commands/business-hours/sla-clock.ts'
import { CASE_PRIORITIES, CASE_STATUSES, CASE_TYPES } from '../../commands/case/fields.ts'
import type { Deps } from '../../deps.ts'
import { activeMembersAnd } from '../../identity/users.ts'
import { liveAccounts } from '../../projections/account/accounts.ts'
import { businessCalendarVersions } from '../../projections/business-hours/queries.ts'
import { caseConditions, caseCounts, caseRows } from '../../projections/case/queries.ts'
import type { CaseCounts } from '../../projections/case/queries.ts'
import { liveContacts } from '../../projections/contact/contacts.ts'
import { readStamps, stampedCache } from '../../projections/kernel/stamped-cache.ts'
import { viewerOfIdentity } from '../../visibility/policy.ts'
import { assignableAmong } from '../accounts/schemas.ts'
import { identityOf } from '../kernel/auth.ts'
import { primaryEmailContactRef, profileRefOf } from '../kernel/relations.ts'
import { ErrorBody, authErrors, nextOffset } from '../kernel/schemas/common.ts'
import { filterOf } from './case-filter.ts'
import { activeCaseFields, caseProfileIds, casesOf } from './case-views.ts'
import { CaseList, CaseListQuery } from './schemas.ts'

const pairs = (values: readonly string[]): [string, string][] => values.map((value) => [value, value])
export const CASE_CHOICES = { status: pairs(CASE_STATUSES), priority: pairs(CASE_PRIORITIES), type_of_case: pairs(CASE_TYPES) }

/** The read models a list answer keeps parts of between writes, whose checkpoints stamp them (stamped-cache.ts). */
const LIST_SOURCES = ['cases', 'accounts', 'contacts', 'business_calendars']
/**
 * Per process: filtered sets' counts (a few numbers each), and per organization its calendar
 * versions and the form's pickers. A picker longer than KEPT_PICKER_ROWS is read every time, so
 * what is kept stays within a few MB.
 */
const KEPT_SETS = 500
const KEPT_ORG_PARTS = 600
const KEPT_PICKER_ROWS = 500

/**
 * The case queue (the original's CaseListView): a page, its totals over the whole filtered set and
 * the form's pickers. What repeats between writes (the counts, the pickers, the calendars the SLA
 * flags are read in) is kept under the stamps of the read models it comes from; the members (the
 * assignee picker and the people the page points at) are one query.
 */
export function caseListRoute(deps: Deps): FastifyPluginAsyncZod {
  const { db, clock } = deps
  const counts = stampedCache(KEPT_SETS)
  const orgParts = stampedCache(KEPT_ORG_PARTS)
  return async (app) => {
    app.get('/api/cases/', { schema: { tags: ['cases'], summary: 'Cases, newest first, with the queue\'s totals over the whole filtered set and the case form\'s pickers', description: 'A non-admin sees only cases they created, are assigned to or watch, in the page and the totals alike. Merged duplicates are left out unless show_merged=true. Blank filter values are no filter; malformed ones match nothing.', querystring: CaseListQuery, response: { 200: CaseList, 400: ErrorBody, ...authErrors, 404: ErrorBody } } }, async (request) => {
      const identity = identityOf(request)
      const { orgId } = identity
      const viewer = viewerOfIdentity(identity)
      const { limit, offset, ordering } = request.query
      const now = clock()
      const filter = filterOf(request.query, await activeCaseFields(deps, orgId), now)
      const conditions = caseConditions(viewer, filter)
      const slim = request.query.slim === 'true'
      const countsNow = () => caseCounts(db, viewer, filter, conditions)
      // The page is never kept: read beside the stamps; what is kept is loaded (or not) once they are known.
      const kept = async () => {
        const stamps = await readStamps(db, LIST_SOURCES)
        const picker = <T>(source: string, load: () => Promise<T[]>) =>
          orgParts.get(`${source} ${orgId}`, stamps.get(source), 0, async () => {
            const value = await load()
            return { value, keep: value.length <= KEPT_PICKER_ROWS }
          })
        return Promise.all([
          // A breach filter counts at `now`: not kept.
          filter.slaBreachedAt ? countsNow() : counts.get<CaseCounts>(JSON.stringify([viewer, filter]), stamps.get('cases'), 0, async () => ({ value: await countsNow() })),
          slim ? undefined : picker('accounts', async () => (await liveAccounts(db, orgId)).map(({ id, name }) => ({ id, name }))),
          slim ? undefined : picker('contacts', async () => (await liveContacts(db, orgId)).map(primaryEmailContactRef)),
          orgParts.get<CalendarOf>(`calendars ${orgId}`, stamps.get('business_calendars'), 0, async () => ({ value: await businessCalendarVersions(db, orgId) })),
        ])
      }
      const [rows, [{ count, ...totals }, accounts, contacts, calendars]] = await Promise.all([caseRows(db, conditions, { limit, offset, ordering }), kept()])
      const pointedAt = new Set(caseProfileIds(rows))
      const members = await activeMembersAnd(db, orgId, [...pointedAt])
      const cases = await casesOf(deps, viewer, rows, now, { calendars, profiles: members.filter((m) => pointedAt.has(m.id)).map(profileRefOf) })
      return {
        count,
        offset: nextOffset(offset, cases.length, count),
        limit,
        results: cases,
        cases_count: count,
        cases,
        ...totals,
        ...CASE_CHOICES,
        users: assignableAmong(members, viewer),
        ...(accounts && { accounts_list: accounts }),
        ...(contacts && { contacts_list: contacts }),
      }
    })
  }
}
