import { sql } from 'kysely'
import { tagStreams } from '../../commands/tag/tag.ts'
import type { TagEvent } from '../../commands/tag/tag.ts'
import { idsAmong } from '../../db/ids-among.ts'
import type { FreshTables } from '../../db/copy-rows.ts'
import { insertRowsOnce } from '../../db/insert-rows.ts'
import { containsPattern } from '../../db/like.ts'
import type { RecordedEvent } from '../../eventstore/event-store.ts'
import { applyInRuns } from '../kernel/projector.ts'
import { domainEventOf } from '../../events/versions.ts'
import type { Projector } from '../kernel/projector.ts'
import type { TagRow } from './tables.ts'
import type { Db } from '../../db/database.ts'

export type { TagRow } from './tables.ts'

export const tagsProjector: Projector = {
  name: 'tags',
  version: 2,
  eventTypes: ['TagCreated', 'TagUpdated', 'TagDeleted', 'TagRestored', 'TagArchived', 'TagUnarchived', 'TagMerged'],
  tables: ['tags'],
  async createTables(db) {
    await db.schema
      .createTable('tags')
      .addColumn('id', 'uuid', (c) => c.primaryKey())
      .addColumn('org_id', 'uuid', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('color', 'text')
      .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('is_active', 'boolean', (c) => c.notNull().defaultTo(true))
      .addColumn('is_deleted', 'boolean', (c) => c.notNull().defaultTo(false))
      .addColumn('merged_into', 'uuid')
      .addColumn('created_by', 'uuid')
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
      .execute()
  },
  // Only the list's: apply finds tags by id.
  async createIndexes(db) {
    await sql`CREATE INDEX tags_org_name ON tags (org_id, lower(name))`.execute(db)
  },
  // Every statement sets values rather than adjusting them, so applying an event twice changes nothing.
  async apply(db, recorded) {
    const event = domainEventOf<TagEvent>(recorded)
    const id = tagStreams.idOf(recorded.streamName)
    if (event.type === 'TagCreated') return insertCreated(db, [recorded])
    const at = new Date(event.data.at)
    await db.updateTable('tags').set({ ...changesOf(event), updated_at: at }).where('id', '=', id).execute()
  },
  // A replay is mostly creations: runs of them become one multi-row INSERT (a COPY into fresh tables: a tag's stream is created once).
  applyBatch: (trx, events, fresh) => applyInRuns(events, 'TagCreated', (run) => insertCreated(trx, run, fresh), (event) => tagsProjector.apply(trx, event)),
}

function changesOf(event: Exclude<TagEvent, { type: 'TagCreated' }>): Partial<TagRow> {
  switch (event.type) {
    case 'TagUpdated': {
      const { name, color, description } = event.data
      return { ...(name !== undefined && { name }), ...(color !== undefined && { color }), ...(description !== undefined && { description }) }
    }
    case 'TagDeleted':
      return { is_deleted: true, is_active: false }
    case 'TagRestored':
      return { is_deleted: false, is_active: true }
    case 'TagArchived':
      return { is_active: false }
    case 'TagUnarchived':
      return { is_active: true }
    case 'TagMerged':
      return { is_active: false, merged_into: event.data.into_tag_id }
  }
}

async function insertCreated(db: Db, created: readonly RecordedEvent[], fresh?: FreshTables): Promise<void> {
  const rows = created.map((recorded) => {
    const { org_id, name, color, description, created_by, at } = domainEventOf<Extract<TagEvent, { type: 'TagCreated' }>>(recorded).data
    // `at` stays the event's ISO string (with its offset; PostgreSQL reads it as the same instant): a Date
    // would be serialized back to that string through toJSON, most of the cost of the row's JSON.
    return { id: tagStreams.idOf(recorded.streamName), org_id, name, color, description, is_active: true, is_deleted: false, merged_into: null, created_by, created_at: at, updated_at: at }
  })
  await insertRowsOnce(db, 'tags', 'id', rows, fresh)
}


/** The list's filter: the original's `name` (contains, any case) and `include_archived` (also archived, merged and deleted tags). */
export type TagListFilter = { name?: string; includeInactive: boolean }

/** The organization's tags matching the filter, by name: the whole list (an organization's tags are few; the original does not page them). */
export function listTags(db: Db, orgId: string, filter: TagListFilter): Promise<TagRow[]> {
  let query = db.selectFrom('tags').selectAll().where('org_id', '=', orgId)
  if (!filter.includeInactive) query = query.where('is_active', '=', true)
  if (filter.name) query = query.where(sql<string>`name`, 'ilike', containsPattern(filter.name))
  return query.orderBy(sql`lower(name)`).orderBy('id').execute()
}

/** Every tag of the organization (active or not): what the totals count. */
export const allTags = (db: Db, orgId: string): Promise<TagRow[]> => listTags(db, orgId, { includeInactive: true })

/** The read models whose records carry tags, by the original's usage key. */
export const TAGGED_TABLES = { accounts: 'accounts', contacts: 'contacts', leads: 'leads', opportunities: 'opportunities', tasks: 'tasks' } as const
export type TagUsageKey = keyof typeof TAGGED_TABLES
export type TagUsage = Record<TagUsageKey, number>

/** Every usage key at 0: a tag no record carries. */
export const noUsage = (): TagUsage => ({ accounts: 0, contacts: 0, leads: 0, opportunities: 0, tasks: 0 })

/**
 * Per tag of the organization, how many live (not deleted) accounts, contacts, leads, deals and
 * tasks carry it, from their read models. A tag no record carries is absent from the map.
 */
export async function tagUsage(db: Db, orgId: string): Promise<Map<string, TagUsage>> {
  const keys = Object.keys(TAGGED_TABLES) as TagUsageKey[]
  const counts = await Promise.all(
    keys.map((key) =>
      sql<{ tag_id: string; n: number }>`SELECT t.tag_id, count(*)::int AS n FROM ${sql.table(TAGGED_TABLES[key])} r, unnest(r.tags) AS t(tag_id)
        WHERE r.org_id = ${orgId} AND r.is_deleted = false GROUP BY t.tag_id`.execute(db),
    ),
  )
  const usage = new Map<string, TagUsage>()
  keys.forEach((key, i) => {
    for (const { tag_id, n } of counts[i]!.rows) {
      const entry = usage.get(tag_id) ?? noUsage()
      entry[key] = n
      usage.set(tag_id, entry)
    }
  })
  return usage
}

/** A tag of the organization (archived, merged and deleted ones too), or undefined: another org's id looks exactly like a missing one. */
export function tagOf(db: Db, orgId: string, id: string): Promise<TagRow | undefined> {
  return db.selectFrom('tags').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst()
}

/** The archived (not deleted) tags of the organization named `name`, any case, latest first: what a create of that name turns back on. */
export function archivedTagsNamed(db: Db, orgId: string, name: string): Promise<TagRow[]> {
  return db.selectFrom('tags').selectAll().where('org_id', '=', orgId).where('is_active', '=', false).where('is_deleted', '=', false).where(sql`lower(name)`, '=', name.trim().toLowerCase()).orderBy('updated_at', 'desc').orderBy('id').execute()
}

/** Which of these ids are active tags of the organization: what records may be newly tagged with. */
export function liveTagIds(db: Db, orgId: string, ids: readonly string[]): Promise<Set<string>> {
  return idsAmong(db.selectFrom('tags').where('org_id', '=', orgId).where('is_active', '=', true), ids)
}

/**
 * With `ids` (a record's tags): those of them not deleted, archived ones included (a record keeps an
 * archived tag). Without: the organization's active tags (what pickers offer). By name.
 */
export function liveTags(db: Db, orgId: string, ids?: readonly string[]): Promise<TagRow[]> {
  if (ids && !ids.length) return Promise.resolve([])
  let query = db.selectFrom('tags').selectAll().where('org_id', '=', orgId)
  query = ids ? query.where('is_deleted', '=', false).where('id', 'in', ids) : query.where('is_active', '=', true)
  return query.orderBy(sql`lower(name)`).orderBy('id').execute()
}
