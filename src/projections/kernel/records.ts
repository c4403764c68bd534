import { sql } from 'kysely'
import type { CreateTableBuilder, Kysely, RawBuilder, SelectQueryBuilder } from 'kysely'
import type { Db } from '../../db/database.ts'
import { isNoteEvent, noteEventTypes } from '../../commands/notes.ts'
import type { RecordNames } from '../../commands/record.ts'
import type { StreamCategory } from '../../commands/streams.ts'
import { applyNoteEvent, createNoteTables } from './notes.ts'
import type { NoteTables } from './notes.ts'
import { domainEventOf } from '../../events/versions.ts'
import type { Projector } from './projector.ts'

/**
 * Read-model pieces shared by the record modules (accounts, contacts; the page also tags and
 * teams): the record projector (one row per stream, created/updated/soft-deleted by events),
 * any-of id filters, the records carrying a tag and a counted page.
 */
export type RecordProjectorOptions = {
  name: string
  version: number
  table: string
  streams: StreamCategory
  /** The record module's stored event types and the created event's id key, e.g. `account_id`. */
  events: RecordNames['events']
  /** The record's own columns; id, org_id, created_by, is_deleted, created_at and updated_at are added. */
  columns: (table: CreateTableBuilder<string, never>) => CreateTableBuilder<string, never>
  indexes: (db: Db) => Promise<void>
  /** A module with notes (RecordNames.notes): their prefix and tables (projections/kernel/notes.ts), kept by this projector too. */
  notes?: { prefix: string; tables: NoteTables }
}

/** The columns every record module's table has (the module names the table): what this kernel reads and writes by name. */
type RecordTableRow = { id: string; org_id: string; created_by: string | null; is_deleted: boolean; created_at: Date; updated_at: Date }
/** A view of `db` in which the module's table, whatever its name, has the common columns: a narrow cast, since the name is the caller's. */
const recordTable = (db: Db) => db as unknown as Kysely<Record<string, RecordTableRow>>

export function recordProjector(options: RecordProjectorOptions): Projector {
  const { table, events, notes } = options
  return {
    name: options.name,
    version: options.version,
    eventTypes: [events.created, events.updated, events.deleted, ...(notes ? noteEventTypes(notes.prefix) : [])],
    tables: [table, ...(notes ? [notes.tables.comments, notes.tables.attachments] : [])],
    async createTables(db) {
      const base = db.schema
        .createTable(table)
        .addColumn('id', 'uuid', (c) => c.primaryKey())
        .addColumn('org_id', 'uuid', (c) => c.notNull())
      await options
        .columns(base)
        .addColumn('created_by', 'uuid')
        .addColumn('is_deleted', 'boolean', (c) => c.notNull().defaultTo(false))
        .addColumn('created_at', 'timestamptz', (c) => c.notNull())
        .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
        .execute()
      await options.indexes(db)
      if (notes) await createNoteTables(db, notes.tables)
    },
    // Every statement sets values rather than adjusting them, so applying an event twice changes nothing.
    async apply(trx, recorded) {
      const db = recordTable(trx)
      const id = options.streams.idOf(recorded.streamName)
      if (notes && isNoteEvent(notes.prefix, recorded)) {
        // A note names its record's organization, which only the record's row knows.
        const row = await db.selectFrom(table).select('org_id').where('id', '=', id).executeTakeFirst()
        if (row) await applyNoteEvent(trx, notes.tables, notes.prefix, { id, orgId: row.org_id }, domainEventOf(recorded))
        return
      }
      const { at, [events.idKey]: _id, ...data } = recorded.data as Record<string, unknown> & { at: string }
      if (recorded.type === events.created) {
        await db.insertInto(table).values({ ...(data as Pick<RecordTableRow, 'org_id' | 'created_by'>), id, is_deleted: false, created_at: new Date(at), updated_at: new Date(at) }).onConflict((oc) => oc.column('id').doNothing()).execute()
        return
      }
      const changes = recorded.type === events.deleted ? { is_deleted: true } : data
      await db.updateTable(table).set({ ...changes, updated_at: new Date(at) }).where('id', '=', id).execute()
    },
  }
}

/**
 * Rows whose uuid[] column shares an id with `ids`. An empty list (the filter was given but no
 * value was a well-formed id) matches nothing, as unknown filter values do.
 */
export function anyOf(column: string, ids: readonly string[]): RawBuilder<boolean> {
  return ids.length ? sql<boolean>`${sql.ref(column)} && ${sql.val([...ids])}::uuid[]` : sql<boolean>`false`
}

/** The live records of the organization carrying `tagId` in `table`: what a tag merge retags. */
export function liveRecordsTagged(db: Db, table: string, orgId: string, tagId: string): Promise<{ id: string }[]> {
  return recordTable(db).selectFrom(table).select('id').where('org_id', '=', orgId).where('is_deleted', '=', false).where(anyOf('tags', [tagId])).orderBy('id').execute()
}

/** One page of `query` in `order`, and the count of the whole filtered set. */
export async function fetchPage<Row>(query: SelectQueryBuilder<any, any, object>, page: { limit: number; offset: number }, order: (query: SelectQueryBuilder<any, any, any>) => SelectQueryBuilder<any, any, any>): Promise<{ count: number; rows: Row[] }> {
  const [rows, total] = await Promise.all([
    order(query.selectAll()).limit(page.limit).offset(page.offset).execute(),
    query.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
  ])
  return { count: Number(total.n), rows: rows as Row[] }
}
