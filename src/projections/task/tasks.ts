import { sql } from 'kysely'
import type { RawBuilder } from 'kysely'
import type { CustomValues } from '../../commands/custom-field/values.ts'
import { isNoteEvent, noteEventTypes } from '../../commands/notes.ts'
import { taskStreams } from '../../commands/task/task.ts'
import type { TaskEvent } from '../../commands/task/task.ts'
import { dateRange } from '../../db/date-range.ts'
import { containsPattern } from '../../db/like.ts'
import { applyNoteEvent, createNoteTables, liveNote, noteTables } from '../kernel/notes.ts'
import type { NoteAttachmentRow, NoteCommentRow } from '../kernel/notes.ts'
import type { Viewer } from '../opportunity/queries.ts'
import { visibleSql } from '../../visibility/policy.ts'
import { domainEventOf } from '../../events/versions.ts'
import type { Projector } from '../kernel/projector.ts'
import { anyOf, liveRecordsTagged } from '../kernel/records.ts'
import type { BoardColumn, BoardSource } from '../kernel/record-board.ts'
import type { TaskRow } from './tables.ts'
import type { Db } from '../../db/database.ts'

export type { TaskRow } from './tables.ts'

export const TASK_NOTES = noteTables('task')
const ID_COLUMNS = ['account', 'opportunity', 'case', 'lead', 'created_by', 'pipeline_id', 'stage_id']
const LIST_COLUMNS = ['contacts', 'teams', 'assigned_to', 'tags']

async function createTables(db: Db): Promise<void> {
  let table = db.schema
    .createTable('tasks')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('org_id', 'uuid', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('priority', 'text', (c) => c.notNull())
    .addColumn('due_date', 'date')
    .addColumn('description', 'text')
    .addColumn('stage', 'text')
  for (const column of ID_COLUMNS) table = table.addColumn(column, 'uuid')
  for (const column of LIST_COLUMNS) table = table.addColumn(column, sql`uuid[]`, (c) => c.notNull())
  await table
    .addColumn('custom_fields', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('kanban_order', 'double precision', (c) => c.notNull())
    .addColumn('is_deleted', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute()
  await createNoteTables(db, TASK_NOTES)
}

/** The list's, the calendar's, the board's and the custom field filter's: apply finds tasks by id. */
async function createIndexes(db: Db): Promise<void> {
  await sql`CREATE INDEX tasks_org_created ON tasks (org_id, created_at DESC, id) WHERE NOT is_deleted`.execute(db)
  await sql`CREATE INDEX tasks_org_due ON tasks (org_id, due_date) WHERE NOT is_deleted`.execute(db)
  await sql`CREATE INDEX tasks_board ON tasks (org_id, stage_id, status, kanban_order, id) WHERE NOT is_deleted`.execute(db)
  await sql`CREATE INDEX tasks_custom_fields ON tasks USING gin (custom_fields jsonb_path_ops) WHERE NOT is_deleted`.execute(db)
}

// pg would send a JS object as text anyway; jsonb wants the JSON text.
const json = (values: CustomValues) => JSON.stringify(values) as unknown as CustomValues

async function apply(db: Db, id: string, event: TaskEvent): Promise<void> {
  const at = new Date(event.data.at)
  const row = db.updateTable('tasks').where('id', '=', id)
  if (isNoteEvent('Task', event)) {
    const owner = await db.selectFrom('tasks').select('org_id').where('id', '=', id).executeTakeFirst()
    if (owner) await applyNoteEvent(db, TASK_NOTES, 'Task', { id, orgId: owner.org_id }, event)
    return
  }
  switch (event.type) {
    case 'TaskCreated': {
      const { task_id: _id, at: _at, custom_fields, ...fields } = event.data
      await db.insertInto('tasks').values({ ...fields, id, custom_fields: json(custom_fields), is_deleted: false, created_at: at, updated_at: at, kanban_order: at.getTime() }).onConflict((oc) => oc.column('id').doNothing()).execute()
      return
    }
    case 'TaskUpdated': {
      const changes: Record<string, unknown> = Object.fromEntries(Object.entries(event.data.changes).map(([key, change]) => [key, change.to]))
      if (changes.custom_fields) changes.custom_fields = json(changes.custom_fields as CustomValues)
      await row.set({ ...changes, updated_at: at }).execute()
      return
    }
    case 'TaskDeleted':
      await row.set({ is_deleted: true, updated_at: at }).execute()
      return
    case 'TaskMoved': {
      const { to, status, kanban_order } = event.data
      await row.set({ pipeline_id: to?.pipeline_id ?? null, stage_id: to?.stage_id ?? null, stage: to?.stage ?? null, kanban_order, ...(status && { status: status.to }), updated_at: at }).execute()
    }
  }
}

export const tasksProjector: Projector = {
  name: 'tasks',
  // 2: custom field values.
  version: 2,
  eventTypes: ['TaskCreated', 'TaskUpdated', 'TaskDeleted', 'TaskMoved', ...noteEventTypes('Task')],
  tables: ['tasks', TASK_NOTES.comments, TASK_NOTES.attachments],
  createTables,
  createIndexes,
  apply: (trx, recorded) => apply(trx, taskStreams.idOf(recorded.streamName), domainEventOf<TaskEvent>(recorded)),
}

// Reads.

const COLUMNS = sql`t.*, t.due_date::text AS due_date`

/** A live task of the organization, or undefined: another org's id looks exactly like a missing one. */
export async function taskOf(db: Db, orgId: string, id: string): Promise<TaskRow | undefined> {
  const { rows } = await sql<TaskRow>`SELECT ${COLUMNS} FROM tasks t WHERE t.org_id = ${orgId} AND t.id = ${id} AND NOT t.is_deleted`.execute(db)
  return rows[0]
}

/** The list's filters (the original's TaskListView and the web app's): exact where the original is exact. */
export type TaskFilter = {
  title?: string
  search?: string
  status?: string[]
  priority?: string
  assignedTo?: string[]
  tags?: string[]
  dueFrom?: string
  dueTo?: string
  createdFrom?: string
  createdTo?: string
  /** Parent links: `account`, `opportunity`, `case`, `lead` (the original's), and `contact` (one of the task's contacts). */
  parents?: Partial<Record<'account' | 'opportunity' | 'case' | 'lead' | 'contact', string>>
  /** cf_<key> filters as the values a task must hold, or null when one is unknown or malformed (matches nothing). */
  customFields?: CustomValues | null
}

const contains = (text: string) => sql<boolean>`t.title ILIKE ${containsPattern(text)}`

/** The viewer's tasks (an admin sees the organization's, a member those they created or are assigned to), then each filter given. */
export function taskConditions(viewer: Viewer, filter: TaskFilter): RawBuilder<boolean>[] {
  const conditions: RawBuilder<boolean>[] = [sql`t.org_id = ${viewer.orgId}`, sql`NOT t.is_deleted`]
  conditions.push(visibleSql('Task', viewer, 't'))
  for (const text of [filter.title, filter.search]) if (text) conditions.push(contains(text))
  if (filter.status) conditions.push(sql`t.status = ANY(${filter.status}::text[])`)
  if (filter.priority !== undefined) conditions.push(sql`t.priority = ${filter.priority}`)
  if (filter.assignedTo) conditions.push(anyOf('t.assigned_to', filter.assignedTo))
  if (filter.tags) conditions.push(anyOf('t.tags', filter.tags))
  for (const [parent, id] of Object.entries(filter.parents ?? {})) conditions.push(parent === 'contact' ? sql`${id}::uuid = ANY(t.contacts)` : sql`${sql.ref(`t.${parent}`)} = ${id}::uuid`)
  conditions.push(...dateRange(sql`t.due_date`, 'date', { from: filter.dueFrom, to: filter.dueTo }))
  conditions.push(...dateRange(sql`t.created_at`, 'timestamptz', { from: filter.createdFrom, to: filter.createdTo }))
  if (filter.customFields === null) conditions.push(sql`false`)
  else if (filter.customFields) conditions.push(sql`t.custom_fields @> ${JSON.stringify(filter.customFields)}::jsonb`)
  return conditions
}

const where = (conditions: RawBuilder<boolean>[]) => sql.join(conditions, sql` AND `)

/** One page of the filtered tasks, newest first, and how many match. */
export async function listTasks(db: Db, conditions: RawBuilder<boolean>[], page: { limit: number; offset: number }): Promise<{ count: number; rows: TaskRow[] }> {
  const [rows, count] = await Promise.all([
    sql<TaskRow>`SELECT ${COLUMNS} FROM tasks t WHERE ${where(conditions)} ORDER BY t.created_at DESC, t.id LIMIT ${page.limit} OFFSET ${page.offset}`.execute(db),
    sql<{ n: string }>`SELECT count(*) AS n FROM tasks t WHERE ${where(conditions)}`.execute(db),
  ])
  return { count: Number(count.rows[0]!.n), rows: rows.rows }
}

export type TaskTotals = { count: number; open: number; overdue: number; due_today: number; due_this_week: number; no_due_date: number; unassigned: number }

/**
 * The original's totals over the whole filtered set: open is not Completed; overdue, due today and
 * due this week (today to seven days out) count open tasks only, by `today` (YYYY-MM-DD, UTC).
 */
export async function taskTotals(db: Db, conditions: RawBuilder<boolean>[], today: string): Promise<TaskTotals> {
  const { rows } = await sql<Record<keyof TaskTotals, string>>`SELECT count(*) AS count,
      count(*) FILTER (WHERE t.status <> 'Completed') AS open,
      count(*) FILTER (WHERE t.status <> 'Completed' AND t.due_date < ${today}::date) AS overdue,
      count(*) FILTER (WHERE t.status <> 'Completed' AND t.due_date = ${today}::date) AS due_today,
      count(*) FILTER (WHERE t.status <> 'Completed' AND t.due_date BETWEEN ${today}::date AND ${today}::date + 7) AS due_this_week,
      count(*) FILTER (WHERE t.status <> 'Completed' AND t.due_date IS NULL) AS no_due_date,
      count(*) FILTER (WHERE t.status <> 'Completed' AND cardinality(t.assigned_to) = 0) AS unassigned
    FROM tasks t WHERE ${where(conditions)}`.execute(db)
  return Object.fromEntries(Object.entries(rows[0]!).map(([key, n]) => [key, Number(n)])) as TaskTotals
}

/** Live tasks in a stage (or, with no stage, a pipeline): the count a removal, kind change or pipeline deletion is refused on. */
export async function countTasks(db: Db, at: { stageId: string } | { pipelineId: string }): Promise<number> {
  const placed = 'stageId' in at ? sql`t.stage_id = ${at.stageId}` : sql`t.pipeline_id = ${at.pipelineId}`
  const { rows } = await sql<{ n: string }>`SELECT count(*) AS n FROM tasks t WHERE ${placed} AND NOT t.is_deleted`.execute(db)
  return Number(rows[0]!.n)
}

/** The organization's live tasks carrying the tag: what a tag merge retags. */
export const tasksTagged = (db: Db, orgId: string, tagId: string) => liveRecordsTagged(db, 'tasks', orgId, tagId)

export const taskCommentOf = (db: Db, orgId: string, id: string) => liveNote<NoteCommentRow>(db, TASK_NOTES.comments, orgId, id)
export const taskAttachmentOf = (db: Db, orgId: string, id: string) => liveNote<NoteAttachmentRow>(db, TASK_NOTES.attachments, orgId, id)

/**
 * The names of the parent records a batch of tasks points at that the viewer may see, keyed by id
 * (one query for the whole batch): an account's or a deal's name, a lead's full name (or company, or
 * email). A deleted parent a task still points at keeps its name; one the viewer may not see has none.
 */
/** A parent's display name; a lead's also by its person's names (the original's phone app labels the task with them), and whether that person was erased. */
export type ParentName = { name: string; first_name: string | null; last_name: string | null; is_erased: boolean }

export async function parentNames(db: Db, viewer: Viewer, rows: readonly Pick<TaskRow, 'account' | 'opportunity' | 'lead' | 'case'>[]): Promise<Map<string, ParentName>> {
  const { orgId } = viewer
  const ids = (key: 'account' | 'opportunity' | 'lead' | 'case') => [...new Set(rows.flatMap((row) => row[key] ?? []))]
  const [accounts, deals, leads, cases] = [ids('account'), ids('opportunity'), ids('lead'), ids('case')]
  if (!accounts.length && !deals.length && !leads.length && !cases.length) return new Map()
  const { rows: named } = await sql<{ id: string } & ParentName>`
    SELECT id, name, NULL AS first_name, NULL AS last_name, false AS is_erased FROM accounts WHERE org_id = ${orgId} AND id = ANY(${accounts}::uuid[]) AND ${visibleSql('Account', viewer)}
    UNION ALL SELECT id, name, NULL, NULL, false FROM opportunities WHERE org_id = ${orgId} AND id = ANY(${deals}::uuid[]) AND ${visibleSql('Opportunity', viewer)}
    UNION ALL SELECT id, COALESCE(NULLIF(trim(concat_ws(' ', NULLIF(first_name, ''), last_name)), ''), company_name, email, ''), first_name, last_name, is_erased FROM leads WHERE org_id = ${orgId} AND id = ANY(${leads}::uuid[]) AND ${visibleSql('Lead', viewer)}
    UNION ALL SELECT id, name, NULL, NULL, false FROM cases WHERE org_id = ${orgId} AND id = ANY(${cases}::uuid[]) AND ${visibleSql('Case', viewer, undefined, { watchers: true })}`.execute(db)
  return new Map(named.map(({ id, ...parent }) => [id, parent]))
}

/** The task board's source for the shared board queries (kernel/record-board.ts), and its two column expressions: a stage (pipeline board) or a status (status board). */
export const TASK_BOARD: BoardSource = { table: 'tasks', alias: 't', columns: COLUMNS }
export const taskStageColumn: BoardColumn = sql<string | null>`t.stage_id::text`
export const taskStatusColumn: BoardColumn = sql<string>`t.status`

/** Open tasks (not Completed) due in a range of days (either end open), soonest first, at most `limit`, and how many there are. */
export async function openTasksDue(db: Db, conditions: RawBuilder<boolean>[], due: { after?: string; until?: string }, limit: number): Promise<{ count: number; rows: TaskRow[] }> {
  const inRange = [...conditions, sql<boolean>`t.status <> 'Completed'`, sql<boolean>`t.due_date IS NOT NULL`]
  if (due.after !== undefined) inRange.push(sql<boolean>`t.due_date > ${due.after}::date`)
  if (due.until !== undefined) inRange.push(sql<boolean>`t.due_date <= ${due.until}::date`)
  const [rows, count] = await Promise.all([
    sql<TaskRow>`SELECT ${COLUMNS} FROM tasks t WHERE ${where(inRange)} ORDER BY t.due_date, t.created_at, t.id LIMIT ${limit}`.execute(db),
    sql<{ n: string }>`SELECT count(*) AS n FROM tasks t WHERE ${where(inRange)}`.execute(db),
  ])
  return { count: Number(count.rows[0]!.n), rows: rows.rows }
}

/** Tasks marked Completed whose last change fell on `day` in `timeZone` (the original's proxy: tasks record no completion time). */
export async function tasksClearedOn(db: Db, conditions: RawBuilder<boolean>[], day: string, timeZone: string): Promise<number> {
  const { rows } = await sql<{ n: string }>`SELECT count(*) AS n FROM tasks t WHERE ${where(conditions)} AND t.status = 'Completed' AND (t.updated_at AT TIME ZONE ${timeZone})::date = ${day}::date`.execute(db)
  return Number(rows[0]!.n)
}
