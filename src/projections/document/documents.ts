import { sql } from 'kysely'
import type { RawBuilder } from 'kysely'
import { documentStreams } from '../../commands/document/document.ts'
import type { DocumentEvent, DocumentStatus } from '../../commands/document/document.ts'
import type { Db } from '../../db/database.ts'
import { insertRowsOnce } from '../../db/insert-rows.ts'
import { containsPattern } from '../../db/like.ts'
import { domainEventOf } from '../../events/versions.ts'
import { ruleFor, visibleSql } from '../../visibility/policy.ts'
import type { Viewer } from '../../visibility/policy.ts'
import type { Projector } from '../kernel/projector.ts'
import { fetchPage } from '../kernel/records.ts'
import type { DocumentRow } from './tables.ts'

export type { DocumentRow } from './tables.ts'

export const documentsProjector: Projector = {
  name: 'documents',
  version: 1,
  eventTypes: ['DocumentUploaded', 'DocumentUpdated', 'DocumentFileReplaced', 'DocumentDeleted'],
  tables: ['documents'],
  async createTables(db) {
    await db.schema
      .createTable('documents')
      .addColumn('id', 'uuid', (c) => c.primaryKey())
      .addColumn('org_id', 'uuid', (c) => c.notNull())
      .addColumn('title', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('file_name', 'text', (c) => c.notNull())
      .addColumn('content_type', 'text', (c) => c.notNull())
      .addColumn('size', 'integer', (c) => c.notNull())
      .addColumn('storage_key', 'text', (c) => c.notNull())
      .addColumn('assigned_to', sql`uuid[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
      .addColumn('teams', sql`uuid[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
      .addColumn('created_by', 'uuid')
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
      .execute()
  },
  async createIndexes(db) {
    await sql`CREATE INDEX documents_org_created ON documents (org_id, created_at DESC, id)`.execute(db)
  },
  // Every statement sets values (or inserts once, or deletes), so applying an event twice changes nothing.
  async apply(db, recorded) {
    const event = domainEventOf<DocumentEvent>(recorded)
    const id = documentStreams.idOf(recorded.streamName)
    switch (event.type) {
      case 'DocumentUploaded': {
        const { org_id, title, status, shared_to, teams, file, created_by, at } = event.data
        const row = { id, org_id, title, status, file_name: file.file_name, content_type: file.content_type, size: file.size, storage_key: file.storage_key, assigned_to: shared_to, teams, created_by, created_at: at, updated_at: at }
        return insertRowsOnce(db, 'documents', 'id', [row])
      }
      case 'DocumentUpdated': {
        const { title, status, shared_to, teams, at } = event.data
        const set = { ...(title !== undefined && { title }), ...(status !== undefined && { status }), ...(shared_to !== undefined && { assigned_to: shared_to }), ...(teams !== undefined && { teams }) }
        await db.updateTable('documents').set({ ...set, updated_at: new Date(at) }).where('id', '=', id).execute()
        return
      }
      case 'DocumentFileReplaced': {
        const { file, at } = event.data
        await db.updateTable('documents').set({ file_name: file.file_name, content_type: file.content_type, size: file.size, storage_key: file.storage_key, updated_at: new Date(at) }).where('id', '=', id).execute()
        return
      }
      case 'DocumentDeleted':
        await db.deleteFrom('documents').where('id', '=', id).execute()
    }
  },
}

/**
 * Who reaches a document: the policy's `Document` line (its uploader and the profiles it is shared
 * with, for a member), widened by the teams it is shared with, which reach their members as they
 * are now (`viewerTeams`: the teams the viewer belongs to).
 */
export type DocumentReader = Viewer & { teams: readonly string[] }

function reachSql(reader: DocumentReader): RawBuilder<boolean> {
  const policy = visibleSql('Document', reader, 'd')
  if (ruleFor('Document', reader) !== 'involved' || !reader.teams.length) return policy
  return sql<boolean>`(${policy} OR d.teams && ${sql.val([...reader.teams])}::uuid[])`
}

/** The single-record form of the same rule. */
export const mayReadDocument = (row: Pick<DocumentRow, 'created_by' | 'assigned_to' | 'teams'>, reader: DocumentReader): boolean =>
  ruleFor('Document', reader) === 'all' ||
  (ruleFor('Document', reader) === 'involved' && reader.profileId !== null && (row.created_by === reader.profileId || row.assigned_to.includes(reader.profileId) || row.teams.some((team) => reader.teams.includes(team))))

/** The original's list filters: `title` (contains, any case), `status`, `shared_to` (any of the profiles). */
export type DocumentFilter = { title?: string; status?: DocumentStatus; sharedTo?: readonly string[] }

/** One status's page of the documents the reader may open, newest first, and how many there are. */
export function listDocuments(db: Db, reader: DocumentReader, filter: DocumentFilter & { status: DocumentStatus }, page: { limit: number; offset: number }): Promise<{ count: number; rows: DocumentRow[] }> {
  let query = db.selectFrom('documents as d').where('d.org_id', '=', reader.orgId).where('d.status', '=', filter.status).where(reachSql(reader))
  if (filter.title) query = query.where('d.title', 'ilike', containsPattern(filter.title))
  if (filter.sharedTo) query = query.where(sql<boolean>`d.assigned_to && ${sql.val([...filter.sharedTo])}::uuid[]`)
  return fetchPage<DocumentRow>(query, page, (q) => q.orderBy('d.created_at', 'desc').orderBy('d.id', 'desc'))
}

/** A live document of the organization, or undefined: another organization's id looks exactly like a missing one. */
export function documentOf(db: Db, orgId: string, id: string): Promise<DocumentRow | undefined> {
  return db.selectFrom('documents').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst()
}
