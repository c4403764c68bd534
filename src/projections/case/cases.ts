import { sql } from 'kysely'
import { caseStreams } from '../../commands/case/case.ts'
import type { CaseEvent } from '../../commands/case/case.ts'
import { PAUSING_STATUS } from '../../commands/case/fields.ts'
import type { CaseStatus } from '../../commands/case/fields.ts'
import type { CustomValues } from '../../commands/custom-field/values.ts'
import { isNoteEvent, noteEventTypes } from '../../commands/notes.ts'
import type { Db } from '../../db/database.ts'
import { domainEventOf } from '../../events/versions.ts'
import { applyNoteEvent, createNoteTables, noteTables } from '../kernel/notes.ts'
import type { Projector } from '../kernel/projector.ts'

/** The cases read model (tables.ts): the rows the list, the detail, the tree and the watchers read (queries.ts). */
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
    .addColumn('kanban_order', 'double precision', (c) => c.notNull())
    .addColumn('is_deleted', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute()
  await sql`CREATE TABLE case_watchers (case_id uuid NOT NULL, profile_id uuid NOT NULL, org_id uuid NOT NULL, subscribed_via text NOT NULL, created_at timestamptz NOT NULL, PRIMARY KEY (case_id, profile_id))`.execute(db)
  await sql`CREATE TABLE case_sla_pauses (case_id uuid NOT NULL, started_at timestamptz NOT NULL, ended_at timestamptz, PRIMARY KEY (case_id, started_at))`.execute(db)
  await sql`CREATE TABLE case_internal_notes (comment_id uuid PRIMARY KEY, case_id uuid NOT NULL)`.execute(db)
  await createNoteTables(db, CASE_NOTES)
}

/** The list's order, the tree's child lookup, the watching list and the custom field filter. */
async function createIndexes(db: Db): Promise<void> {
  await sql`CREATE INDEX cases_org_created ON cases (org_id, created_at DESC, id) WHERE NOT is_deleted`.execute(db)
  await sql`CREATE INDEX cases_parent ON cases (parent) WHERE NOT is_deleted`.execute(db)
  await sql`CREATE INDEX cases_board ON cases (org_id, stage_id, status, kanban_order, id) WHERE NOT is_deleted`.execute(db)
  await sql`CREATE INDEX case_watchers_profile ON case_watchers (profile_id, created_at)`.execute(db)
  await sql`CREATE INDEX cases_custom_fields ON cases USING gin (custom_fields jsonb_path_ops) WHERE NOT is_deleted`.execute(db)
}

// pg would send a JS object as text anyway; jsonb wants the JSON text.
const json = (values: CustomValues) => JSON.stringify(values) as unknown as CustomValues

/** A status change's SLA effects: entering Pending opens a pause, leaving it closes it; entering Closed resolves, leaving it un-resolves. Each a plain set, so a repeat changes nothing. */
async function applyStatus(db: Db, id: string, from: CaseStatus | null, to: CaseStatus, at: Date): Promise<void> {
  const row = db.updateTable('cases').where('id', '=', id)
  if (to === PAUSING_STATUS && from !== PAUSING_STATUS) {
    await db.insertInto('case_sla_pauses').values({ case_id: id, started_at: at, ended_at: null }).onConflict((oc) => oc.columns(['case_id', 'started_at']).doNothing()).execute()
    await row.set({ sla_paused_at: at }).execute()
  }
  if (from === PAUSING_STATUS && to !== PAUSING_STATUS) {
    await db.updateTable('case_sla_pauses').set({ ended_at: at }).where('case_id', '=', id).where('ended_at', 'is', null).where('started_at', '<=', at).execute()
    await row.set({ sla_paused_at: null }).execute()
  }
  if (to === 'Closed' && from !== 'Closed') await row.set({ resolved_at: at }).execute()
  if (from === 'Closed' && to !== 'Closed') await row.set({ resolved_at: null }).execute()
}

async function setWatchers(db: Db, id: string): Promise<void> {
  await sql`UPDATE cases SET watchers = COALESCE((SELECT array_agg(profile_id ORDER BY created_at, profile_id) FROM case_watchers WHERE case_id = ${id}), '{}') WHERE id = ${id}`.execute(db)
}

async function apply(db: Db, id: string, event: CaseEvent): Promise<void> {
  const at = new Date(event.data.at)
  const row = db.updateTable('cases').where('id', '=', id)
  if (isNoteEvent('Case', event)) {
    const owner = await db.selectFrom('cases').select('org_id').where('id', '=', id).executeTakeFirst()
    if (!owner) return
    await applyNoteEvent(db, CASE_NOTES, 'Case', { id, orgId: owner.org_id }, event)
    if (event.type === 'CaseCommentAdded' && event.data.internal) await db.insertInto('case_internal_notes').values({ comment_id: event.data.comment_id, case_id: id }).onConflict((oc) => oc.column('comment_id').doNothing()).execute()
    return
  }
  switch (event.type) {
    case 'CaseCreated': {
      const { case_id: _id, at: _at, custom_fields, ...fields } = event.data
      await db.insertInto('cases').values({ ...fields, id, custom_fields: json(custom_fields), watchers: [], first_response_at: null, resolved_at: null, sla_paused_at: null, pipeline_id: null, stage_id: null, stage: null, kanban_order: at.getTime(), is_deleted: false, created_at: at, updated_at: at }).onConflict((oc) => oc.column('id').doNothing()).execute()
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
      await setWatchers(db, id)
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
      await setWatchers(db, id)
  }
}

export const casesProjector: Projector = {
  name: 'cases',
  version: 1,
  eventTypes: ['CaseCreated', 'CaseUpdated', 'CaseDeleted', 'CaseFirstResponded', 'CaseWatched', 'CaseUnwatched', 'CaseMoved', ...noteEventTypes('Case')],
  tables: ['cases', 'case_watchers', 'case_sla_pauses', 'case_internal_notes', CASE_NOTES.comments, CASE_NOTES.attachments],
  createTables,
  createIndexes,
  apply: (trx, recorded) => apply(trx, caseStreams.idOf(recorded.streamName), domainEventOf<CaseEvent>(recorded)),
}
