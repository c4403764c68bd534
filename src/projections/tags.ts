import { sql } from 'kysely'
import type { Kysely } from 'kysely'
import { tagStreams } from '../commands/tag/tag.ts'
import type { TagEvent } from '../commands/tag/tag.ts'
import { idsAmong } from '../db/ids-among.ts'
import { insertRowsOnce } from '../db/insert-rows.ts'
import { containsPattern } from '../db/like.ts'
import type { RecordedEvent } from '../eventstore/event-store.ts'
import { applyInRuns, domainEventOf } from './projector.ts'
import { fetchPage } from './records.ts'
import type { Projector } from './projector.ts'

/** The tags read model: one row per tag, soft-deleted rows kept (restorable), merged ones pointing at their target. */
export type TagRow = {
  id: string
  org_id: string
  name: string
  color: string | null
  is_deleted: boolean
  merged_into: string | null
  created_by: string | null
  created_at: Date
  updated_at: Date
}

type Tables = { tags: TagRow }

export const tagsProjector: Projector = {
  name: 'tags',
  version: 1,
  eventTypes: ['TagCreated', 'TagUpdated', 'TagDeleted', 'TagRestored', 'TagMerged'],
  tables: ['tags'],
  async createTables(db) {
    await db.schema
      .createTable('tags')
      .addColumn('id', 'uuid', (c) => c.primaryKey())
      .addColumn('org_id', 'uuid', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('color', 'text')
      .addColumn('is_deleted', 'boolean', (c) => c.notNull().defaultTo(false))
      .addColumn('merged_into', 'uuid')
      .addColumn('created_by', 'uuid')
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
      .execute()
    await sql`CREATE INDEX tags_org_name ON tags (org_id, lower(name))`.execute(db)
  },
  // Every statement sets values rather than adjusting them, so applying an event twice changes nothing.
  async apply(trx, recorded) {
    const db = trx as unknown as Kysely<Tables>
    const event = domainEventOf<TagEvent>(recorded)
    const id = tagStreams.idOf(recorded.streamName)
    if (event.type === 'TagCreated') return insertCreated(db, [recorded])
    const at = new Date(event.data.at)
    const changes =
      event.type === 'TagUpdated'
        ? { ...(event.data.name !== undefined && { name: event.data.name }), ...(event.data.color !== undefined && { color: event.data.color }) }
        : event.type === 'TagMerged'
          ? { is_deleted: true, merged_into: event.data.into_tag_id }
          : { is_deleted: event.type === 'TagDeleted' }
    await db.updateTable('tags').set({ ...changes, updated_at: at }).where('id', '=', id).execute()
  },
  // A replay is mostly creations: runs of them become one multi-row INSERT.
  applyBatch: (trx, events) => applyInRuns(events, 'TagCreated', (run) => insertCreated(trx as unknown as Kysely<Tables>, run), (event) => tagsProjector.apply(trx, event)),
}

async function insertCreated(db: Kysely<Tables>, created: readonly RecordedEvent[]): Promise<void> {
  const rows = created.map((recorded) => {
    const { org_id, name, color, created_by, at } = domainEventOf<Extract<TagEvent, { type: 'TagCreated' }>>(recorded).data
    return { id: tagStreams.idOf(recorded.streamName), org_id, name, color, is_deleted: false, merged_into: null, created_by, created_at: new Date(at), updated_at: new Date(at) }
  })
  await insertRowsOnce(db, 'tags', 'id', rows)
}

const readDb = (db: Kysely<any>) => db as Kysely<Tables>

export type TagListFilter = { limit: number; offset: number; search?: string; includeDeleted: boolean }

export function listTags(db: Kysely<any>, orgId: string, filter: TagListFilter): Promise<{ count: number; rows: TagRow[] }> {
  let query = readDb(db).selectFrom('tags').where('org_id', '=', orgId).where('merged_into', 'is', null)
  if (!filter.includeDeleted) query = query.where('is_deleted', '=', false)
  if (filter.search) query = query.where(sql<string>`name`, 'ilike', containsPattern(filter.search))
  return fetchPage<TagRow>(query, filter, (q) => q.orderBy(sql`lower(name)`).orderBy('id'))
}

/** A tag of the organization, or undefined: another org's id looks exactly like a missing one. */
export function tagOf(db: Kysely<any>, orgId: string, id: string): Promise<TagRow | undefined> {
  return readDb(db).selectFrom('tags').selectAll().where('org_id', '=', orgId).where('id', '=', id).where('merged_into', 'is', null).executeTakeFirst()
}

/** Which of these ids are live (not deleted, not merged) tags of the organization: what records may be tagged with. */
export function liveTagIds(db: Kysely<any>, orgId: string, ids: readonly string[]): Promise<Set<string>> {
  return idsAmong(readDb(db).selectFrom('tags').where('org_id', '=', orgId).where('is_deleted', '=', false).where('merged_into', 'is', null), ids)
}

/** The organization's live tags, by name; only those of `ids` when given (a record's tags). */
export function liveTags(db: Kysely<any>, orgId: string, ids?: readonly string[]): Promise<TagRow[]> {
  if (ids && !ids.length) return Promise.resolve([])
  let query = readDb(db).selectFrom('tags').selectAll().where('org_id', '=', orgId).where('is_deleted', '=', false).where('merged_into', 'is', null)
  if (ids) query = query.where('id', 'in', ids)
  return query.orderBy(sql`lower(name)`).orderBy('id').execute()
}
