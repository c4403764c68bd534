import { z } from 'zod'
import { CASE_PRIORITIES, CASE_STATUSES, CASE_TYPES } from '../../commands/case/fields.ts'
import { slaView } from '../../commands/case/sla.ts'
import type { CalendarOf } from '../../commands/business-hours/sla-clock.ts'
import type { Deps } from '../../deps.ts'
import { lookupsOf } from '../../lookups/lookups.ts'
import { businessCalendarVersions } from '../../projections/business-hours/queries.ts'
import { caseRefs, childCounts } from '../../projections/case/queries.ts'
import type { CaseRecord, ListedCase } from '../../projections/case/queries.ts'
import { liveContacts } from '../../projections/contact/contacts.ts'
import type { Viewer } from '../../visibility/policy.ts'
import { PrimaryEmailContactRef, ProfileRef, TagRef, nameRefs, primaryEmailContactRef, profileRefs, tagRefs } from '../kernel/relations.ts'
import { iso } from '../kernel/schemas/common.ts'

/**
 * Cases as the original's CaseSerializer answers them and both its apps read them: the account as
 * `{id, name}`, assignees and the creator as profiles with `user_details`, contacts with the
 * original's `primary_email`, the SLA facts with their deadlines and breach flags (the one SLA clock
 * on the case's SLA instances, commands/case/sla.ts `slaView`), and the case's place in its tree.
 */
const Ref = z.object({ id: z.uuid(), name: z.string() })
const Instant = z.string().nullable()

export const Case = z.object({
  id: z.uuid(),
  name: z.string(),
  status: z.enum(CASE_STATUSES),
  priority: z.enum(CASE_PRIORITIES),
  case_type: z.enum(CASE_TYPES).nullable(),
  closed_on: z.string().nullable().describe('YYYY-MM-DD; required to close, cleared on reopening'),
  description: z.string().nullable(),
  account: Ref.nullable(),
  contacts: z.array(PrimaryEmailContactRef),
  teams: z.array(Ref),
  assigned_to: z.array(ProfileRef),
  tags: z.array(TagRef),
  created_by: ProfileRef.nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  is_active: z.boolean().describe('Always true: a deleted case is gone from every answer'),
  custom_fields: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).describe("Values of the organization's active custom fields for cases, by key"),
  sla_first_response_hours: z.number().int().describe('The first-response target, set by the priority when the case opened (Low 24, Normal 8, High 4, Urgent 1)'),
  sla_resolution_hours: z.number().int().describe('The resolution target (Low 72, Normal 48, High 24, Urgent 4)'),
  first_response_at: Instant.describe("When a member's first public comment answered it; null until then"),
  resolved_at: Instant.describe('When it entered Closed; null while not Closed'),
  sla_paused_at: Instant.describe('When its running pause (Pending) began; null when not paused'),
  first_response_sla_deadline: Instant.describe("When the first-response target is reached in the organization's business hours, Pending time not counted: while paused, when it would be if the clock resumed now; once answered, as it stood then; null for a case opened before SLA instances were recorded"),
  resolution_sla_deadline: Instant.describe('The same for the resolution target (a reopened case measures a new one)'),
  is_sla_first_response_breached: z.boolean().describe('Still unanswered and past its target (a breach before a pause stays one)'),
  is_sla_resolution_breached: z.boolean().describe('Still unresolved and past its target'),
  escalation_count: z.number().int().describe('How many times the escalator escalated it while breached (at most 3, an hour apart)'),
  last_escalation_fired_at: Instant.describe('When it was last escalated; null if never'),
  parent: z.uuid().nullable(),
  parent_summary: z.object({ id: z.uuid(), name: z.string(), status: z.enum(CASE_STATUSES) }).nullable(),
  child_count: z.number().int(),
  is_problem: z.boolean(),
})
export type CaseBody = z.infer<typeof Case>

const unique = (ids: Iterable<string | null>) => [...new Set([...ids].filter((id): id is string => id !== null))]
const indexed = <T extends { id: string }>(rows: readonly T[]) => new Map(rows.map((row) => [row.id, row]))
const picked = <T>(map: Map<string, T>, ids: readonly string[]) => ids.flatMap((id) => map.get(id) ?? [])

/** What case views read: the database, and the cached lookups where the app has them. */
export type CaseViewSource = Pick<Deps, 'db' | 'lookups'>

/** The organization's active custom fields for cases, in display order: the ones a case shows and its list filters by (the cached lookup's, where the app has it). */
export const activeCaseFields = async (source: CaseViewSource, orgId: string) => (await lookupsOf(source).customFields(orgId, 'cases')).filter((d) => d.is_active)

/** The members the rows point at (assignees, creators), active or not. */
export const caseProfileIds = (rows: readonly CaseRecord[]) => unique(rows.flatMap((r) => [...r.assigned_to, r.created_by]))

/** What a caller already holds of what the bodies need, so it is not fetched again: the case list's kept calendars, and the members it read with its picker. */
export type CaseViewsGiven = { calendars?: CalendarOf; profiles?: z.infer<typeof ProfileRef>[] }

/** Rows as a list reads them carry their child counts (queries.ts `caseRows`); other rows have them counted here. */
type CaseRows = readonly CaseRecord[] | readonly ListedCase[]
const listedChildCounts = (rows: CaseRows) => (rows.every((row) => 'child_count' in row) ? new Map((rows as readonly ListedCase[]).map((row) => [row.id, row.child_count])) : undefined)

/** Case rows as response bodies at `now` (the SLA flags); what they point at is fetched once for the batch. */
export async function casesOf(source: CaseViewSource, viewer: Viewer, rows: CaseRows, now: Date, given: CaseViewsGiven = {}): Promise<CaseBody[]> {
  const { db } = source
  const { orgId } = viewer
  const [accounts, teams, tags, profiles, contacts, definitions, children, parents, calendars] = await Promise.all([
    nameRefs(db, 'accounts', orgId, unique(rows.map((r) => r.account))),
    nameRefs(db, 'teams', orgId, unique(rows.flatMap((r) => r.teams))),
    tagRefs(db, orgId, unique(rows.flatMap((r) => r.tags))),
    given.profiles ?? profileRefs(db, orgId, caseProfileIds(rows)),
    liveContacts(db, orgId, unique(rows.flatMap((r) => r.contacts))),
    activeCaseFields(source, orgId),
    listedChildCounts(rows) ?? childCounts(db, orgId, rows.map((r) => r.id)),
    caseRefs(db, viewer, unique(rows.map((r) => r.parent))),
    given.calendars ?? businessCalendarVersions(db, orgId),
  ])
  const shownKeys = new Set(definitions.map((d) => d.key))
  const people = indexed(profiles)
  const tagsById = indexed(tags)
  const contactsById = indexed(contacts.map(primaryEmailContactRef))
  return rows.map((row) => {
    const sla = slaView(row.sla_clocks, calendars, now)
    const parent = row.parent ? parents.get(row.parent) : undefined
    return {
      id: row.id,
      name: row.name,
      status: row.status,
      priority: row.priority,
      case_type: row.case_type,
      closed_on: row.closed_on,
      description: row.description,
      account: row.account ? (accounts.get(row.account) ?? null) : null,
      contacts: picked(contactsById, row.contacts),
      teams: picked(teams, row.teams),
      assigned_to: picked(people, row.assigned_to),
      tags: picked(tagsById, row.tags),
      created_by: row.created_by ? (people.get(row.created_by) ?? null) : null,
      created_at: row.created_at.toISOString(),
      updated_at: row.updated_at.toISOString(),
      is_active: true,
      // A deactivated field's values stay stored but are not shown.
      custom_fields: Object.fromEntries(Object.entries(row.custom_fields ?? {}).filter(([key]) => shownKeys.has(key))),
      sla_first_response_hours: row.sla_first_response_hours,
      sla_resolution_hours: row.sla_resolution_hours,
      first_response_at: iso(row.first_response_at),
      resolved_at: iso(row.resolved_at),
      sla_paused_at: iso(row.sla_paused_at),
      first_response_sla_deadline: iso(sla.first_response_sla_deadline),
      resolution_sla_deadline: iso(sla.resolution_sla_deadline),
      is_sla_first_response_breached: sla.is_sla_first_response_breached,
      is_sla_resolution_breached: sla.is_sla_resolution_breached,
      escalation_count: row.escalation_count,
      last_escalation_fired_at: iso(row.last_escalation_fired_at),
      parent: row.parent,
      // Null also when the viewer may not see the parent, as a task's parent.
      parent_summary: parent ? { id: parent.id, name: parent.name, status: parent.status } : null,
      child_count: children.get(row.id) ?? 0,
      is_problem: row.is_problem,
    }
  })
}
