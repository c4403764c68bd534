import { sql } from 'kysely'
import { z } from 'zod'
import type { RawBuilder } from 'kysely'
import type { CaseStatus } from '../../commands/case/fields.ts'
import { MAX_ESCALATIONS } from '../../commands/case/escalation.ts'
import { OPEN_STATUSES } from '../../commands/case/fields.ts'
import type { ParentFacts } from '../../commands/case/parent.ts'
import { MAX_TREE_DEPTH } from '../../commands/case/parent.ts'
import type { CustomValues } from '../../commands/custom-field/values.ts'
import type { Db } from '../../db/database.ts'
import { dateRange } from '../../db/date-range.ts'
import { containsPattern } from '../../db/like.ts'
import { ruleFor, visibleSql } from '../../visibility/policy.ts'
import type { Viewer } from '../../visibility/policy.ts'
import type { BoardColumn, BoardSource } from '../kernel/record-board.ts'
import { anyOf, liveRecordsTagged } from '../kernel/records.ts'
import type { CaseRow, CaseWatcherRow } from './tables.ts'
import { countRows } from './case-counts.ts'

export type { CaseRow, CaseWatcherRow } from './tables.ts'
export { CASE_NOTES } from './cases.ts'

/** A case row as the queries answer it: the closing date as YYYY-MM-DD. */
export type CaseRecord = CaseRow

const COLUMNS = sql`c.*, c.closed_on::text AS closed_on`

/** A live case of the organization, or undefined: another org's id looks exactly like a missing one. */
export async function caseOf(db: Db, orgId: string, id: string): Promise<CaseRecord | undefined> {
  const { rows } = await sql<CaseRecord>`SELECT ${COLUMNS} FROM cases c WHERE c.org_id = ${orgId} AND c.id = ${id} AND NOT c.is_deleted`.execute(db)
  return rows[0]
}

/** The list's filters (the original's apply_case_list_filters), exact where the original is exact. */
export type CaseFilter = {
  name?: string
  search?: string
  status?: string[]
  /** Leave out merged duplicates (status Duplicate), as the original's list does by default. */
  hideMerged?: boolean
  priority?: string
  caseType?: string
  account?: string
  assignedTo?: string[]
  tags?: string[]
  createdFrom?: string
  createdTo?: string
  /** `sla_breached=true`: a target missed at `now` (the clock's rule on the stored deadlines, commands/case/sla.ts `slaColumns`). */
  slaBreachedAt?: Date
  /** Only the cases the viewer watches (GET /api/cases/watching/). */
  watching?: boolean
  /** cf_<key> filters as the values a case must hold, or null when one is unknown or malformed (matches nothing). */
  customFields?: CustomValues | null
}

/**
 * An SLA instance breached at `now`, on the columns the projector stores from the clock
 * (commands/case/sla.ts `slaColumns`): a breach reached while it was still open, or a running
 * deadline passed. (A recorded breach lies before any later `now`, so the earliest of the four
 * columns decides; LEAST skips nulls.) The answer's `is_sla_*_breached` come from the same clock.
 */
const SLA_DUE = sql`LEAST(c.sla_first_response_deadline, c.sla_resolution_deadline, c.sla_first_response_breached_at, c.sla_resolution_breached_at)`
const breached = (now: Date) => sql<boolean>`${SLA_DUE} < ${now}::timestamptz`
/** The first-response target alone missed at `now`: a breach recorded while open, or its running deadline passed. */
export const firstResponseBreached = (now: Date) => sql<boolean>`(c.sla_first_response_breached_at IS NOT NULL OR c.sla_first_response_deadline < ${now}::timestamptz)`

const isInstant = (value: string | undefined): value is string => value !== undefined && z.iso.datetime({ offset: true }).safeParse(value.trim()).success

/** Creation bounds: whole days (YYYY-MM-DD, as the web app sends them) or instants (the phone app sends ISO times). */
function createdBetween(from: string | undefined, to: string | undefined): RawBuilder<boolean>[] {
  const days = dateRange(sql`c.created_at`, 'timestamptz', { from: isInstant(from) ? undefined : from, to: isInstant(to) ? undefined : to })
  const instants = [...(isInstant(from) ? [sql<boolean>`c.created_at >= ${from.trim()}::timestamptz`] : []), ...(isInstant(to) ? [sql<boolean>`c.created_at <= ${to.trim()}::timestamptz`] : [])]
  return [...days, ...instants]
}

/** The viewer's cases (an admin sees the organization's; a member those they created, are assigned to or watch), then each filter given. */
export function caseConditions(viewer: Viewer, filter: CaseFilter): RawBuilder<boolean>[] {
  const conditions: RawBuilder<boolean>[] = [sql`c.org_id = ${viewer.orgId}`, sql`NOT c.is_deleted`, visibleSql('Case', viewer, 'c', { watchers: true })]
  if (filter.name) conditions.push(sql`c.name ILIKE ${containsPattern(filter.name)}`)
  if (filter.search) conditions.push(sql`(c.name ILIKE ${containsPattern(filter.search)} OR c.description ILIKE ${containsPattern(filter.search)})`)
  if (filter.status) conditions.push(sql`c.status = ANY(${filter.status}::text[])`)
  if (filter.hideMerged) conditions.push(sql`c.status <> 'Duplicate'`)
  if (filter.priority !== undefined) conditions.push(sql`c.priority = ${filter.priority}`)
  if (filter.caseType !== undefined) conditions.push(sql`c.case_type = ${filter.caseType}`)
  if (filter.account !== undefined) conditions.push(sql`c.account = ${filter.account}::uuid`)
  if (filter.assignedTo) conditions.push(anyOf('c.assigned_to', filter.assignedTo))
  if (filter.tags) conditions.push(anyOf('c.tags', filter.tags))
  if (filter.watching) conditions.push(viewer.profileId === null ? sql<boolean>`false` : anyOf('c.watchers', [viewer.profileId]))
  if (filter.slaBreachedAt) conditions.push(breached(filter.slaBreachedAt))
  conditions.push(...createdBetween(filter.createdFrom, filter.createdTo))
  if (filter.customFields === null) conditions.push(sql`false`)
  else if (filter.customFields) conditions.push(sql`c.custom_fields @> ${JSON.stringify(filter.customFields)}::jsonb`)
  return conditions
}

const where = (conditions: RawBuilder<boolean>[]) => sql.join(conditions, sql` AND `)

/** The orders the original allows (`ordering`); priority by rank (Urgent highest), not by its letters as the original sorts it. */
export const CASE_ORDERINGS = ['-created_at', 'created_at', '-priority', 'priority', '-id', 'id', '-name', 'name'] as const
export type CaseOrdering = (typeof CASE_ORDERINGS)[number]
const PRIORITY_RANK = sql`array_position(ARRAY['Low', 'Normal', 'High', 'Urgent'], c.priority)`
function orderOf(ordering: CaseOrdering) {
  const direction = ordering.startsWith('-') ? sql`DESC` : sql`ASC`
  const key = ordering.replace('-', '')
  const column = key === 'priority' ? PRIORITY_RANK : sql.ref(`c.${key}`)
  return sql`${column} ${direction}, c.created_at DESC, c.id`
}

/** A listed case: its row and how many live children it has (childCounts), read in the same statement. */
export type ListedCase = CaseRecord & { child_count: number }
const CHILD_COUNT = sql`(SELECT count(*)::int FROM cases ch WHERE ch.org_id = c.org_id AND ch.parent = c.id AND NOT ch.is_deleted) AS child_count`

/** One page of the filtered cases, newest first unless `ordering` says otherwise. */
export async function caseRows(db: Db, conditions: RawBuilder<boolean>[], page: { limit: number; offset: number; ordering?: CaseOrdering }): Promise<ListedCase[]> {
  const { rows } = await sql<ListedCase>`SELECT ${COLUMNS}, ${CHILD_COUNT} FROM cases c WHERE ${where(conditions)} ORDER BY ${orderOf(page.ordering ?? '-created_at')} LIMIT ${page.limit} OFFSET ${page.offset}`.execute(db)
  return rows
}

/** One page of the filtered cases, and how many match. */
export async function listCases(db: Db, conditions: RawBuilder<boolean>[], page: { limit: number; offset: number; ordering?: CaseOrdering }): Promise<{ count: number; rows: ListedCase[] }> {
  const [rows, count] = await Promise.all([caseRows(db, conditions, page), sql<{ n: string }>`SELECT count(*) AS n FROM cases c WHERE ${where(conditions)}`.execute(db)])
  return { count: Number(count.rows[0]!.n), rows }
}

export type CaseTotals = { open_count: number; urgent_count: number; awaiting_first_reply: number }
export type CaseCounts = CaseTotals & { count: number }

// The filters the kept counts can answer (by status, priority and assignee); any other one given means a scan.
const UNCOUNTED: (keyof CaseFilter)[] = ['name', 'search', 'caseType', 'account', 'tags', 'createdFrom', 'createdTo', 'slaBreachedAt', 'watching', 'customFields']

/**
 * The kept counts' rows (case-counts.ts) holding exactly the viewer's filtered set, or null: an admin's
 * organization, or one assignee in it; a member's cases (created, assigned or watched: `involved`),
 * or those assigned to them. Any other filter, or more than one assignee, is left to a scan.
 */
function keptCountRows(viewer: Viewer, filter: CaseFilter): RawBuilder<unknown> | null {
  if (UNCOUNTED.some((key) => filter[key] !== undefined && filter[key] !== false)) return null
  const assignee = filter.assignedTo?.length === 1 ? filter.assignedTo[0]! : filter.assignedTo === undefined ? null : undefined
  if (assignee === undefined) return null
  const rule = ruleFor('Case', viewer)
  if (rule === 'all') return countRows(viewer.orgId, assignee === null ? undefined : { id: assignee, kind: 'assigned' })
  if (rule !== 'involved' || viewer.profileId === null) return null
  if (assignee === null) return countRows(viewer.orgId, { id: viewer.profileId, kind: 'involved' })
  return assignee.toLowerCase() === viewer.profileId.toLowerCase() ? countRows(viewer.orgId, { id: assignee, kind: 'assigned' }) : null
}

/**
 * How many cases the viewer's filtered set holds, and the queue's totals over it (not the page): open
 * cases, open Urgent ones, open ones nobody has answered yet. From the kept counts where they hold the
 * set, else in one scan of the filtered rows.
 */
export async function caseCounts(db: Db, viewer: Viewer, filter: CaseFilter, conditions: RawBuilder<boolean>[]): Promise<CaseCounts> {
  const open = sql`status = ANY(${[...OPEN_STATUSES]}::text[])`
  const figures = sql`count(*) AS count, count(*) FILTER (WHERE ${open}) AS open_count, count(*) FILTER (WHERE ${open} AND priority = 'Urgent') AS urgent_count,
    count(*) FILTER (WHERE ${open} AND first_response_at IS NULL) AS awaiting_first_reply`
  const kept = keptCountRows(viewer, filter)
  const query = kept
    ? sql`SELECT COALESCE(sum(n), 0) AS count, COALESCE(sum(n) FILTER (WHERE ${open}), 0) AS open_count, COALESCE(sum(n) FILTER (WHERE ${open} AND priority = 'Urgent'), 0) AS urgent_count,
        COALESCE(sum(n) FILTER (WHERE ${open} AND awaiting), 0) AS awaiting_first_reply
      FROM ${kept} k WHERE ${where([sql<boolean>`true`, ...(filter.status ? [sql<boolean>`status = ANY(${filter.status}::text[])`] : []), ...(filter.hideMerged ? [sql<boolean>`status <> 'Duplicate'`] : []), ...(filter.priority !== undefined ? [sql<boolean>`priority = ${filter.priority}`] : [])])}`
    : sql`SELECT ${figures} FROM cases c WHERE ${where(conditions)}`
  const { rows } = await sql<Record<keyof CaseCounts, string>>`${query}`.execute(db)
  return Object.fromEntries(Object.entries(rows[0]!).map(([key, n]) => [key, Number(n)])) as CaseCounts
}

/** Everyone watching a case, first subscriber first. */
export const watchersOf = (db: Db, caseId: string): Promise<CaseWatcherRow[]> => db.selectFrom('case_watchers').selectAll().where('case_id', '=', caseId).orderBy('created_at').orderBy('profile_id').execute()

/** The ids of a case's comments that are internal notes. */
export async function internalNoteIds(db: Db, caseId: string): Promise<Set<string>> {
  const rows = await db.selectFrom('case_internal_notes').select('comment_id').where('case_id', '=', caseId).execute()
  return new Set(rows.map((row) => row.comment_id))
}

export type CaseRef = { id: string; name: string; status: CaseStatus }

/** The names and statuses of the live cases of the organization the viewer may see, by id (one query for a batch). */
export async function caseRefs(db: Db, viewer: Viewer, ids: readonly string[]): Promise<Map<string, CaseRef>> {
  if (!ids.length) return new Map()
  const { rows } = await sql<CaseRef>`SELECT c.id, c.name, c.status FROM cases c WHERE c.org_id = ${viewer.orgId} AND c.id = ANY(${[...ids]}::uuid[]) AND NOT c.is_deleted AND ${visibleSql('Case', viewer, 'c', { watchers: true })}`.execute(db)
  return new Map(rows.map((row) => [row.id, row]))
}

/** How many live children each case has. */
export async function childCounts(db: Db, orgId: string, ids: readonly string[]): Promise<Map<string, number>> {
  if (!ids.length) return new Map()
  const { rows } = await sql<{ parent: string; n: string }>`SELECT parent, count(*) AS n FROM cases WHERE org_id = ${orgId} AND parent = ANY(${[...ids]}::uuid[]) AND NOT is_deleted GROUP BY parent`.execute(db)
  return new Map(rows.map((row) => [row.parent, Number(row.n)]))
}

export type CaseNode = Pick<CaseRow, 'id' | 'name' | 'status' | 'priority' | 'is_problem' | 'assigned_to' | 'created_by' | 'parent'> & { depth: number }

/** The topmost live ancestor of a case in its organization (itself when it has none); a looping chain stops where it would repeat. */
export async function rootOf(db: Db, orgId: string, id: string): Promise<string> {
  const { chain } = await chainUp(db, orgId, id)
  return chain.at(-1) ?? id
}

/** A case and its live descendants down to the tree's depth limit (`depth` 0 is the root), each level in creation order. */
export async function subtreeOf(db: Db, orgId: string, rootId: string): Promise<CaseNode[]> {
  const { rows } = await sql<CaseNode>`WITH RECURSIVE tree AS (
      SELECT id, name, status, priority, is_problem, assigned_to, created_by, parent, created_at, 0 AS depth, ARRAY[id] AS path FROM cases WHERE org_id = ${orgId} AND id = ${rootId} AND NOT is_deleted
      UNION ALL
      SELECT c.id, c.name, c.status, c.priority, c.is_problem, c.assigned_to, c.created_by, c.parent, c.created_at, tree.depth + 1, tree.path || c.id FROM cases c JOIN tree ON c.parent = tree.id
      WHERE c.org_id = ${orgId} AND NOT c.is_deleted AND tree.depth < ${MAX_TREE_DEPTH} AND NOT c.id = ANY(tree.path))
    SELECT id, name, status, priority, is_problem, assigned_to, created_by, parent, depth FROM tree ORDER BY depth, created_at, id`.execute(db)
  return rows
}

/** The chain from a case upward through its live parents (itself first), and whether it loops back on itself. */
async function chainUp(db: Db, orgId: string, id: string): Promise<{ chain: string[]; loops: boolean; status: CaseStatus | undefined }> {
  const { rows } = await sql<{ id: string; status: CaseStatus; parent: string | null }>`WITH RECURSIVE up AS (
      SELECT id, status, parent, ARRAY[id] AS path FROM cases WHERE org_id = ${orgId} AND id = ${id} AND NOT is_deleted
      UNION ALL
      SELECT c.id, c.status, c.parent, up.path || c.id FROM cases c JOIN up ON c.id = up.parent
      WHERE c.org_id = ${orgId} AND NOT c.is_deleted AND NOT c.id = ANY(up.path) AND cardinality(up.path) <= ${MAX_TREE_DEPTH + 1})
    SELECT id, status, parent FROM up ORDER BY cardinality(path)`.execute(db)
  const last = rows.at(-1)
  const loops = last?.parent !== null && last?.parent !== undefined && rows.some((row) => row.id === last.parent)
  return { chain: rows.map((row) => row.id), loops, status: rows[0]?.status }
}

/** The facts the tree rules judge a link of `caseId` (undefined on creation) under `parentId` by; undefined when the parent is no live case of the organization. */
export async function parentFacts(db: Db, orgId: string, parentId: string, caseId?: string): Promise<ParentFacts | undefined> {
  const [{ chain, loops, status }, below] = await Promise.all([chainUp(db, orgId, parentId), caseId ? subtreeOf(db, orgId, caseId) : []])
  if (status === undefined) return undefined
  return { id: parentId, status, chain, chainLoops: loops, subtreeDepth: Math.max(0, ...below.map((node) => node.depth)) }
}

/** The organization's live cases carrying the tag: what a tag merge retags. */
export const casesTagged = (db: Db, orgId: string, tagId: string) => liveRecordsTagged(db, 'cases', orgId, tagId)

/** The case board's source for the shared board queries (kernel/record-board.ts), and its two column expressions: a stage (pipeline board) or a status (status board). */
export const CASE_BOARD: BoardSource = { table: 'cases', alias: 'c', columns: COLUMNS }
export const caseStageColumn: BoardColumn = sql<string | null>`c.stage_id::text`
export const caseStatusColumn: BoardColumn = sql<string>`c.status`

/** Live cases in a stage (or, with no stage, a pipeline): the count a stage removal, kind change or pipeline deletion is refused on. */
export async function countCases(db: Db, at: { stageId: string } | { pipelineId: string }): Promise<number> {
  const placed = 'stageId' in at ? sql`c.stage_id = ${at.stageId}` : sql`c.pipeline_id = ${at.pipelineId}`
  const { rows } = await sql<{ n: string }>`SELECT count(*) AS n FROM cases c WHERE ${placed} AND NOT c.is_deleted`.execute(db)
  return Number(rows[0]!.n)
}

export type EscalationCandidate = { id: string; org_id: string }

/**
 * Open cases breached at `now` that may be escalated again (under the cap, the last escalation at
 * least `gapMs` ago): what the escalator asks the case's decider about, oldest breach first.
 */
export async function escalationCandidates(db: Db, now: Date, gapMs: number, limit: number): Promise<EscalationCandidate[]> {
  const { rows } = await sql<EscalationCandidate>`SELECT c.id, c.org_id FROM cases c
    WHERE NOT c.is_deleted AND c.escalation_count < ${MAX_ESCALATIONS} AND ${breached(now)} AND c.status = ANY(${[...OPEN_STATUSES]}::text[])
      AND (c.last_escalation_fired_at IS NULL OR c.last_escalation_fired_at <= ${new Date(now.getTime() - gapMs)}::timestamptz)
    ORDER BY ${SLA_DUE}, c.id LIMIT ${limit}`.execute(db)
  return rows
}

/** The ids of the organization's cases of an account, deleted ones too (their time is still the account's): what time entries are filtered by account on. */
export async function caseIdsOfAccount(db: Db, orgId: string, accountId: string): Promise<string[]> {
  const rows = await db.selectFrom('cases').select('id').where('org_id', '=', orgId).where('account', '=', accountId).execute()
  return rows.map((row) => row.id)
}

/** Open cases assigned to each of these members (routing's least busy). */
export async function openCaseCounts(db: Db, orgId: string, profileIds: readonly string[]): Promise<Record<string, number>> {
  if (!profileIds.length) return {}
  const { rows } = await sql<{ profile_id: string; n: string }>`SELECT p AS profile_id, count(*) AS n FROM cases c, unnest(c.assigned_to) p
    WHERE c.org_id = ${orgId} AND NOT c.is_deleted AND c.status = ANY(${[...OPEN_STATUSES]}::text[]) AND p = ANY(${[...profileIds]}::uuid[]) GROUP BY p`.execute(db)
  return Object.fromEntries(rows.map((row) => [row.profile_id, Number(row.n)]))
}

/** Live cases of the organization created since `since` (routing's unrouted count). */
export async function casesCreatedSince(db: Db, orgId: string, since: Date): Promise<number> {
  const row = await db.selectFrom('cases').select((eb) => eb.fn.countAll<string>().as('n')).where('org_id', '=', orgId).where('is_deleted', '=', false).where('created_at', '>=', since).executeTakeFirstOrThrow()
  return Number(row.n)
}

/** Per priority, the live cases created since `since` whose first response or resolution breached by `now` (late, or still open past the deadline). */
export async function breachCountsSince(db: Db, orgId: string, since: Date, now: Date): Promise<Map<string, { first_response: number; resolution: number }>> {
  const { rows } = await sql<{ priority: string; first_response: string; resolution: string }>`SELECT c.priority,
      count(*) FILTER (WHERE ${firstResponseBreached(now)}) AS first_response,
      count(*) FILTER (WHERE c.sla_resolution_breached_at IS NOT NULL OR c.sla_resolution_deadline < ${now}) AS resolution
    FROM cases c WHERE c.org_id = ${orgId} AND NOT c.is_deleted AND c.created_at >= ${since} GROUP BY c.priority`.execute(db)
  return new Map(rows.map((row) => [row.priority, { first_response: Number(row.first_response), resolution: Number(row.resolution) }]))
}
