import { sql } from 'kysely'
import { caseStreams } from '../../commands/case/case.ts'
import type { CaseEvent } from '../../commands/case/case.ts'
import { MAX_ESCALATIONS } from '../../commands/case/escalation.ts'
import { MERGE_EVENT_TYPES, isMergeEvent } from '../../commands/case/merge.ts'
import { SLA_EVENT_TYPES, evolveSlaClocks, isSlaEvent, noSlaClocks, slaColumns } from '../../commands/case/sla.ts'
import type { CaseSlaEvent, SlaClocks } from '../../commands/case/sla.ts'
import type { CustomValues } from '../../commands/custom-field/values.ts'
import { isNoteEvent, noteEventTypes } from '../../commands/notes.ts'
import type { Db } from '../../db/database.ts'
import { domainEventOf } from '../../events/versions.ts'
import { businessCalendarVersions } from '../business-hours/queries.ts'
import { applyNoteEvent, createNoteTables, noteTables } from '../kernel/notes.ts'
import type { Projector } from '../kernel/projector.ts'
import { applyMergeMove, refreshWatchers } from './merge-moves.ts'
import { COUNT_TABLES, countedCases, createCountTables, movesCounts, withCounts } from './case-counts.ts'

/** The cases read model (tables.ts): the rows the list, the detail, the tree and the watchers read (queries.ts), and the counts beside them (case-counts.ts). */
export const CASE_NOTES = noteTables('case')
const ID_COLUMNS = ['account', 'parent', 'created_by', 'pipeline_id', 'stage_id']
const LIST_COLUMNS = ['contacts', 'teams', 'assigned_to', 'tags', 'watchers']

async function createTables(db: Db): Promise<void> {
  let table = db.schema
    .createTable('cases')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('org_id', 'uuid', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('priority', 'text', (c) => c.notNull())
    .addColumn('case_type', 'text')
    .addColumn('closed_on', 'date')
    .addColumn('description', 'text')
    .addColumn('is_problem', 'boolean', (c) => c.notNull())
    .addColumn('stage', 'text')
  for (const column of ID_COLUMNS) table = table.addColumn(column, 'uuid')
  for (const column of LIST_COLUMNS) table = table.addColumn(column, sql`uuid[]`, (c) => c.notNull())
  await table
    .addColumn('custom_fields', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('sla_first_response_hours', 'integer', (c) => c.notNull())
    .addColumn('sla_resolution_hours', 'integer', (c) => c.notNull())
    .addColumn('first_response_at', 'timestamptz')
    .addColumn('resolved_at', 'timestamptz')
    .addColumn('sla_paused_at', 'timestamptz')
    .addColumn('sla_clocks', 'jsonb', (c) => c.notNull().defaultTo(sql`'{"first_response": [], "resolution": []}'::jsonb`))
    .addColumn('sla_first_response_deadline', 'timestamptz')
    .addColumn('sla_first_response_breached_at', 'timestamptz')
    .addColumn('sla_resolution_deadline', 'timestamptz')
    .addColumn('sla_resolution_breached_at', 'timestamptz')
    .addColumn('escalation_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_escalation_fired_at', 'timestamptz')
    .addColumn('kanban_order', 'double precision', (c) => c.notNull())
    .addColumn('is_deleted', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute()
  await sql`CREATE TABLE case_watchers (case_id uuid NOT NULL, profile_id uuid NOT NULL, org_id uuid NOT NULL, subscribed_via text NOT NULL, created_at timestamptz NOT NULL, PRIMARY KEY (case_id, profile_id))`.execute(db)
  await sql`CREATE TABLE case_internal_notes (comment_id uuid PRIMARY KEY, case_id uuid NOT NULL)`.execute(db)
  await createNoteTables(db, CASE_NOTES)
  await createCountTables(db)
}

/** The list's order and its status and priority filters, the tree's child lookup, the watching list and the custom field filter. */
async function createIndexes(db: Db): Promise<void> {
  await sql`CREATE INDEX cases_org_created ON cases (org_id, created_at DESC, id) WHERE NOT is_deleted`.execute(db)
  await sql`CREATE INDEX cases_parent ON cases (parent) WHERE NOT is_deleted`.execute(db)
  // The escalator's scan: open cases with a running deadline or a breach on record.
  await sql`CREATE INDEX cases_sla_due ON cases (LEAST(sla_first_response_deadline, sla_resolution_deadline, sla_first_response_breached_at, sla_resolution_breached_at)) WHERE NOT is_deleted AND escalation_count < ${sql.lit(MAX_ESCALATIONS)}`.execute(db)
  await sql`CREATE INDEX cases_board ON cases (org_id, stage_id, status, kanban_order, id) WHERE NOT is_deleted`.execute(db)
  await sql`CREATE INDEX case_watchers_profile ON case_watchers (profile_id, created_at)`.execute(db)
  await sql`CREATE INDEX cases_custom_fields ON cases USING gin (custom_fields jsonb_path_ops) WHERE NOT is_deleted`.execute(db)
  // The list filtered by status and priority (its counts are kept, case-counts.ts): the matching rows
  // newest first, instead of walking every case of the organization by date. Statuses and priorities
  // go together (few Urgent cases are Pending): without the joint statistics the planner multiplies
  // their shares and expects matches early in the walk by date (20k cases: 20,247 buffers, 15 ms for
  // a pair that matches nothing; with them 3 buffers).
  await sql`CREATE INDEX cases_org_status_priority ON cases (org_id, status, priority, created_at DESC, id) WHERE NOT is_deleted`.execute(db)
  await sql`CREATE STATISTICS cases_org_status_priority (mcv) ON org_id, status, priority FROM cases`.execute(db)
}

// pg would send a JS object as text anyway; jsonb wants the JSON text.
const json = (values: CustomValues) => JSON.stringify(values) as unknown as CustomValues

/** Entering Closed stamps the resolution, leaving it clears it (the answer's `resolved_at`, the totals). */
async function applyStatus(db: Db, id: string, from: string | null, to: string, at: Date): Promise<void> {
  const row = db.updateTable('cases').where('id', '=', id)
  if (to === 'Closed' && from !== 'Closed') await row.set({ resolved_at: at }).execute()
  if (from === 'Closed' && to !== 'Closed') await row.set({ resolved_at: null }).execute()
}

/** When the earliest running pause began, if an instance is paused now. */
function pausedSince(clocks: SlaClocks): Date | null {
  const since = Object.values(clocks).flatMap((events) => (events.at(-1)?.type === 'paused' ? [new Date(events.at(-1)!.at)] : []))
  return since.length ? new Date(Math.min(...since.map((d) => d.getTime()))) : null
}

/**
 * An SLA event: the instance's events kept on the row (what the answer's clock reads), and what SQL
 * judges a breach by at any instant (sla.ts `slaColumns`), computed by the clock as of the event in
 * the calendar versions it names (versions never change once written, so a rebuild computes the same).
 */
async function applySla(db: Db, id: string, event: CaseSlaEvent): Promise<void> {
  const row = await db.selectFrom('cases').select(['org_id', 'sla_clocks']).where('id', '=', id).executeTakeFirst()
  if (!row) return
  const clocks = evolveSlaClocks({ ...noSlaClocks(), ...row.sla_clocks }, event)
  const { sla, at } = event.data
  const columns = slaColumns(clocks[sla], await businessCalendarVersions(db, row.org_id), new Date(at))
  const set = sla === 'first_response' ? { sla_first_response_deadline: columns.deadline, sla_first_response_breached_at: columns.breached_at } : { sla_resolution_deadline: columns.deadline, sla_resolution_breached_at: columns.breached_at }
  await db.updateTable('cases').set({ ...set, sla_clocks: JSON.stringify(clocks) as unknown as SlaClocks, sla_paused_at: pausedSince(clocks) }).where('id', '=', id).execute()
}

async function apply(db: Db, id: string, event: CaseEvent): Promise<void> {
  return movesCounts(event) ? withCounts(db, countedCases(id, event), () => applyToRows(db, id, event)) : applyToRows(db, id, event)
}

async function applyToRows(db: Db, id: string, event: CaseEvent): Promise<void> {
  const at = new Date(event.data.at)
  const row = db.updateTable('cases').where('id', '=', id)
  if (isNoteEvent('Case', event)) {
    const owner = await db.selectFrom('cases').select('org_id').where('id', '=', id).executeTakeFirst()
    if (!owner) return
    await applyNoteEvent(db, CASE_NOTES, 'Case', { id, orgId: owner.org_id }, event)
    if (event.type === 'CaseCommentAdded' && event.data.internal) await db.insertInto('case_internal_notes').values({ comment_id: event.data.comment_id, case_id: id }).onConflict((oc) => oc.column('comment_id').doNothing()).execute()
    return
  }
  if (isSlaEvent(event)) return applySla(db, id, event)
  if (isMergeEvent(event)) return applyMergeMove(db, id, event)
  switch (event.type) {
    case 'CaseCreated': {
      const { case_id: _id, at: _at, custom_fields, ...fields } = event.data
      await db.insertInto('cases').values({ ...fields, id, custom_fields: json(custom_fields), watchers: [], first_response_at: null, resolved_at: null, sla_paused_at: null, sla_clocks: JSON.stringify(noSlaClocks()) as unknown as SlaClocks, sla_first_response_deadline: null, sla_first_response_breached_at: null, sla_resolution_deadline: null, sla_resolution_breached_at: null, escalation_count: 0, last_escalation_fired_at: null, pipeline_id: null, stage_id: null, stage: null, kanban_order: at.getTime(), is_deleted: false, created_at: at, updated_at: at }).onConflict((oc) => oc.column('id').doNothing()).execute()
      await applyStatus(db, id, null, fields.status, at)
      return
    }
    case 'CaseUpdated': {
      const changes: Record<string, unknown> = Object.fromEntries(Object.entries(event.data.changes).map(([key, change]) => [key, change.to]))
      if (changes.custom_fields) changes.custom_fields = json(changes.custom_fields as CustomValues)
      await row.set({ ...changes, updated_at: at }).execute()
      const status = event.data.changes.status
      if (status) await applyStatus(db, id, status.from, status.to, at)
      return
    }
    case 'CaseEscalated':
      await row.set({ escalation_count: event.data.level, last_escalation_fired_at: at }).execute()
      return
    case 'CaseDeleted':
      await row.set({ is_deleted: true, updated_at: at }).execute()
      return
    case 'CaseFirstResponded':
      await row.set({ first_response_at: at }).execute()
      return
    case 'CaseWatched': {
      const owner = await db.selectFrom('cases').select('org_id').where('id', '=', id).executeTakeFirst()
      if (!owner) return
      await db.insertInto('case_watchers').values({ case_id: id, profile_id: event.data.profile_id, org_id: owner.org_id, subscribed_via: event.data.subscribed_via, created_at: at }).onConflict((oc) => oc.columns(['case_id', 'profile_id']).doNothing()).execute()
      await refreshWatchers(db, id)
      return
    }
    case 'CaseMoved': {
      const { to, status, closed_on, kanban_order } = event.data
      await row.set({ pipeline_id: to?.pipeline_id ?? null, stage_id: to?.stage_id ?? null, stage: to?.stage ?? null, kanban_order, ...(closed_on && { closed_on: closed_on.to }), updated_at: at }).execute()
      if (status) {
        await row.set({ status: status.to }).execute()
        await applyStatus(db, id, status.from, status.to, at)
      }
      return
    }
    case 'CaseUnwatched':
      await db.deleteFrom('case_watchers').where('case_id', '=', id).where('profile_id', '=', event.data.profile_id).execute()
      await refreshWatchers(db, id)
  }
}

export const casesProjector: Projector = {
  name: 'cases',
  // 2: the SLA instances' events and the clock's deadlines replace the pause table; escalations. 3: merges move notes and watchers. 4: the open counts. 5: the counts by status, priority and first reply, per organization and per profile.
  version: 5,
  eventTypes: ['CaseCreated', 'CaseUpdated', 'CaseDeleted', 'CaseFirstResponded', 'CaseWatched', 'CaseUnwatched', 'CaseMoved', ...SLA_EVENT_TYPES, 'CaseEscalated', ...MERGE_EVENT_TYPES, ...noteEventTypes('Case')],
  tables: ['cases', 'case_watchers', 'case_internal_notes', CASE_NOTES.comments, CASE_NOTES.attachments, ...COUNT_TABLES],
  createTables,
  createIndexes,
  apply: (trx, recorded) => apply(trx, caseStreams.idOf(recorded.streamName), domainEventOf<CaseEvent>(recorded)),
}
