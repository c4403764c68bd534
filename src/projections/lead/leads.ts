import { sql } from 'kysely'
import type { RawBuilder } from 'kysely'
import { CLOSED_LEAD_STATUSES, LEAD_PERSONAL_FIELDS, convertedFields, leadStreams } from '../../commands/lead/lead.ts'
import type { LeadEvent, LeadFields } from '../../commands/lead/lead.ts'
import type { CustomValues } from '../../commands/custom-field/values.ts'
import { noteEventTypes, isNoteEvent } from '../../commands/notes.ts'
import { dateRange } from '../../db/date-range.ts'
import { containsPattern } from '../../db/like.ts'
import { applyNoteEvent, createNoteTables, liveNote, noteTables } from '../kernel/notes.ts'
import type { NoteAttachmentRow, NoteCommentRow } from '../kernel/notes.ts'
import type { Viewer } from '../opportunity/queries.ts'
import { visibleSql } from '../../visibility/policy.ts'
import { domainEventOf } from '../../events/versions.ts'
import { personRecordEraser, withErasure } from '../privacy/erasing.ts'
import { anyOf, liveRecordsTagged } from '../kernel/records.ts'
import type { LeadRow } from './tables.ts'
export type { LeadRow } from './tables.ts'
import type { Db } from '../../db/database.ts'

export const LEAD_NOTES = noteTables('lead')
const TEXT_COLUMNS = ['salutation', 'last_name', 'title', 'email', 'phone', 'company_name', 'industry', 'website', 'linkedin_url', 'currency', 'address_line', 'city', 'state', 'postcode', 'country', 'source', 'rating', 'description']
const LIST_COLUMNS = ['contacts', 'tags', 'teams', 'assigned_to']

async function createTables(db: Db): Promise<void> {
  let table = db.schema
    .createTable('leads')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('org_id', 'uuid', (c) => c.notNull())
    .addColumn('first_name', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
  for (const column of TEXT_COLUMNS) table = table.addColumn(column, 'text')
  for (const column of LIST_COLUMNS) table = table.addColumn(column, sql`uuid[]`, (c) => c.notNull())
  for (const column of ['pipeline_id', 'stage_id', 'account', 'converted_account', 'converted_contact', 'converted_opportunity', 'converted_by', 'created_by']) table = table.addColumn(column, 'uuid')
  await table
    .addColumn('opportunity_amount', sql`numeric(15, 2)`)
    .addColumn('probability', 'integer')
    .addColumn('close_date', 'date')
    .addColumn('last_contacted', 'date')
    .addColumn('next_follow_up', 'date')
    .addColumn('custom_fields', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('converted_at', 'timestamptz')
    .addColumn('is_deleted', 'boolean', (c) => c.notNull().defaultTo(false))
    // Set by the erasure (personRecordEraser): the records pointing at the lead answer it as erased.
    .addColumn('is_erased', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addColumn('worked_at', 'timestamptz', (c) => c.notNull())
    .addColumn('stage', 'text')
    .addColumn('kanban_order', 'double precision', (c) => c.notNull())
    .addColumn('stage_changed_at', 'timestamptz')
    .execute()
  await sql`CREATE INDEX leads_org_created ON leads (org_id, created_at DESC, id) WHERE NOT is_deleted`.execute(db)
  await sql`CREATE INDEX leads_board ON leads (stage_id, kanban_order, id) WHERE NOT is_deleted`.execute(db)
  await sql`CREATE INDEX leads_custom_fields ON leads USING gin (custom_fields jsonb_path_ops) WHERE NOT is_deleted`.execute(db)
  await createNoteTables(db, LEAD_NOTES)
}

// pg would send a JS object as text anyway; jsonb wants the JSON text.
const json = (values: CustomValues) => JSON.stringify(values) as unknown as CustomValues

async function apply(db: Db, id: string, event: LeadEvent): Promise<void> {
  const at = new Date(event.data.at)
  const worked = db.updateTable('leads').where('id', '=', id)
  if (isNoteEvent('Lead', event)) {
    const row = await db.selectFrom('leads').select('org_id').where('id', '=', id).executeTakeFirst()
    if (!row) return
    await applyNoteEvent(db, LEAD_NOTES, 'Lead', { id, orgId: row.org_id }, event)
    await worked.set({ worked_at: at }).execute()
    return
  }
  switch (event.type) {
    case 'LeadCreated': {
      const { lead_id: _id, at: _at, custom_fields, ...fields } = event.data
      await db.insertInto('leads').values({ ...fields, id, custom_fields: json(custom_fields ?? {}), is_deleted: false, is_erased: false, created_at: at, updated_at: at, worked_at: at, kanban_order: at.getTime() }).onConflict((oc) => oc.column('id').doNothing()).execute()
      return
    }
    case 'LeadUpdated': {
      const changes: Record<string, unknown> = Object.fromEntries(Object.entries(event.data.changes).map(([key, change]) => [key, change.to]))
      if (changes.custom_fields) changes.custom_fields = json(changes.custom_fields as CustomValues)
      await worked.set({ ...changes, updated_at: at, worked_at: at }).execute()
      return
    }
    case 'LeadConverted': {
      const row = await db.selectFrom('leads').select(['contacts']).where('id', '=', id).executeTakeFirst()
      if (!row) return
      const { account_id, contact_id, opportunity_id, by } = event.data
      const { status, account, contacts } = convertedFields({ contacts: row.contacts } as LeadFields, { account_id, contact_id, opportunity_id })
      await worked.set({ status, account, contacts, converted_account: account_id, converted_contact: contact_id, converted_opportunity: opportunity_id, converted_by: by, converted_at: at, updated_at: at, worked_at: at }).execute()
      return
    }
    case 'LeadDeleted':
      await worked.set({ is_deleted: true, updated_at: at }).execute()
      return
    case 'LeadMoved': {
      const { from, to, kanban_order } = event.data
      const entered = from?.stage_id !== to.stage_id ? { stage_changed_at: at } : {}
      await worked.set({ pipeline_id: to.pipeline_id, stage_id: to.stage_id, stage: to.stage, kanban_order, ...entered, updated_at: at, worked_at: at }).execute()
    }
  }
}

/** Erasing a lead blanks their row's personal fields and their notes (issue 31). */
export const leadsProjector = withErasure(
  {
    name: 'leads',
    // 2: the board placement (LeadMoved). 3: industry. 4: currency. 5: linkedin_url, last_contacted, next_follow_up. 6: erasures blank, '' not "[erased]" (issue 31). 7: is_erased.
    version: 7,
    eventTypes: ['LeadCreated', 'LeadUpdated', 'LeadConverted', 'LeadDeleted', 'LeadMoved', ...noteEventTypes('Lead')],
    tables: ['leads', LEAD_NOTES.comments, LEAD_NOTES.attachments],
    createTables,
    apply: (trx, recorded) => apply(trx, leadStreams.idOf(recorded.streamName), domainEventOf<LeadEvent>(recorded)),
  },
  personRecordEraser({ kind: 'lead', table: 'leads', columns: LEAD_PERSONAL_FIELDS, notes: LEAD_NOTES }),
)

// Reads.

export const COLUMNS = sql`l.*, l.close_date::text AS close_date, l.last_contacted::text AS last_contacted, l.next_follow_up::text AS next_follow_up, l.opportunity_amount::text AS opportunity_amount`

/** A live lead of the organization, or undefined: another org's id looks exactly like a missing one. */
export async function leadOf(db: Db, orgId: string, id: string): Promise<LeadRow | undefined> {
  const { rows } = await sql<LeadRow>`SELECT ${COLUMNS} FROM leads l WHERE l.org_id = ${orgId} AND l.id = ${id} AND NOT l.is_deleted`.execute(db)
  return rows[0]
}

/**
 * The lead list's filters (§4.1 lead table; status repeatable). Strings are exact where the spec
 * says exact (status, source, rating): a value outside the enumeration simply matches nothing.
 */
export type LeadFilter = {
  name?: string
  salutation?: string
  source?: string
  status?: string[]
  assignedTo?: string[]
  tags?: string[]
  city?: string
  email?: string
  rating?: string
  search?: string
  createdFrom?: string
  createdTo?: string
  closeFrom?: string
  closeTo?: string
  /** The next follow-up day, YYYY-MM-DD (malformed matches nothing). */
  nextFollowUp?: string
  /** cf_<key> filters as the values a lead must hold, or null when one is unknown or malformed (matches nothing). */
  customFields?: CustomValues | null
}

const contains = (column: string, text: string) => sql<boolean>`${sql.ref(column)} ILIKE ${containsPattern(text)}`
const anyContains = (columns: string[], text: string) => sql<boolean>`(${sql.join(columns.map((column) => contains(column, text)), sql` OR `)})`

/** The filtered set's conditions: the viewer's visibility (a non-admin sees leads they created or are assigned to), then each filter given. */
export function leadConditions(viewer: Viewer, filter: LeadFilter): RawBuilder<boolean>[] {
  const conditions: RawBuilder<boolean>[] = [sql`l.org_id = ${viewer.orgId}`, sql`NOT l.is_deleted`]
  conditions.push(visibleSql('Lead', viewer, 'l'))
  if (filter.name) conditions.push(anyContains(['l.first_name', 'l.last_name'], filter.name))
  if (filter.search) conditions.push(anyContains(['l.first_name', 'l.last_name', 'l.company_name', 'l.email'], filter.search))
  for (const [column, text] of [['l.salutation', filter.salutation], ['l.city', filter.city], ['l.email', filter.email]] as const) if (text) conditions.push(contains(column, text))
  for (const [column, value] of [['l.source', filter.source], ['l.rating', filter.rating]] as const) if (value !== undefined) conditions.push(sql`${sql.ref(column)} = ${value}`)
  if (filter.status) conditions.push(sql`l.status = ANY(${filter.status}::text[])`)
  if (filter.tags) conditions.push(anyOf('l.tags', filter.tags))
  if (filter.assignedTo) conditions.push(anyOf('l.assigned_to', filter.assignedTo))
  conditions.push(...dateRange(sql`l.created_at`, 'timestamptz', { from: filter.createdFrom, to: filter.createdTo }))
  conditions.push(...dateRange(sql`l.close_date`, 'date', { from: filter.closeFrom, to: filter.closeTo }))
  conditions.push(...dateRange(sql`l.next_follow_up`, 'date', { from: filter.nextFollowUp, to: filter.nextFollowUp }))
  if (filter.customFields === null) conditions.push(sql`false`)
  else if (filter.customFields) conditions.push(sql`l.custom_fields @> ${JSON.stringify(filter.customFields)}::jsonb`)
  return conditions
}

export const where = (conditions: RawBuilder<boolean>[]) => sql.join(conditions, sql` AND `)
const closedSection = (closed: boolean) => sql<boolean>`(l.status = ANY(${[...CLOSED_LEAD_STATUSES]}::text[])) = ${closed}`

/** One page of a section of the filtered set (`close_leads` when `closed`, else `open_leads`), newest first, and the section's count. */
export async function leadSection(db: Db, conditions: RawBuilder<boolean>[], closed: boolean, page: { limit: number; offset: number }): Promise<{ count: number; rows: LeadRow[] }> {
  const section = where([...conditions, closedSection(closed)])
  const [rows, count] = await Promise.all([
    sql<LeadRow>`SELECT ${COLUMNS} FROM leads l WHERE ${section} ORDER BY l.created_at DESC, l.id LIMIT ${page.limit} OFFSET ${page.offset}`.execute(db),
    sql<{ n: string }>`SELECT count(*) AS n FROM leads l WHERE ${section}`.execute(db),
  ])
  return { count: Number(count.rows[0]!.n), rows: rows.rows }
}

/** Live leads in a stage (or, with no stage, a pipeline): the count a removal, kind change or pipeline deletion is refused on. */
export async function countLeads(db: Db, at: { stageId: string } | { pipelineId: string }): Promise<number> {
  const placed = 'stageId' in at ? sql`l.stage_id = ${at.stageId}` : sql`l.pipeline_id = ${at.pipelineId}`
  const { rows } = await sql<{ n: string }>`SELECT count(*) AS n FROM leads l WHERE ${placed} AND NOT l.is_deleted`.execute(db)
  return Number(rows[0]!.n)
}

/** Days without any event after which an open lead counts as unworked. */
export const UNWORKED_DAYS = 7

/** Totals over the whole filtered set: every lead, and the open ones with no event for more than a week. */
export async function leadTotals(db: Db, conditions: RawBuilder<boolean>[], now: Date): Promise<{ count: number; unworked_over_a_week: number }> {
  const stale = new Date(now.getTime() - UNWORKED_DAYS * 86_400_000)
  const { rows } = await sql<{ n: string; unworked: string }>`SELECT count(*) AS n, count(*) FILTER (WHERE ${closedSection(false)} AND l.worked_at < ${stale}::timestamptz) AS unworked
    FROM leads l WHERE ${where(conditions)}`.execute(db)
  return { count: Number(rows[0]!.n), unworked_over_a_week: Number(rows[0]!.unworked) }
}

/** The live leads of the organization carrying a tag, for a tag merge (commands/tag/retag.ts). */
export const leadsTagged = (db: Db, orgId: string, tagId: string) => liveRecordsTagged(db, 'leads', orgId, tagId)

export const leadCommentOf = (db: Db, orgId: string, id: string) => liveNote<NoteCommentRow>(db, LEAD_NOTES.comments, orgId, id)
export const leadAttachmentOf = (db: Db, orgId: string, id: string) => liveNote<NoteAttachmentRow>(db, LEAD_NOTES.attachments, orgId, id)
