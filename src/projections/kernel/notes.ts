import { sql } from 'kysely'
import type { AttachmentData, NoteEvent } from '../../commands/notes.ts'
import type { Database, Db } from '../../db/database.ts'
import type { NoteAttachmentRow, NoteCommentRow } from './note-tables.ts'

/**
 * The read side of a module's comments and attachments (see commands/notes.ts): two tables,
 * `<module>_comments` and `<module>_attachments`, whose rows name their record in `owner_id`.
 * Removed notes stay, flagged, so history can still name them. Every statement sets values, so
 * applying an event twice changes nothing.
 */
type TablesOf<Row> = { [T in keyof Database]: Database[T] extends Row ? T : never }[keyof Database]
/** The modules' note tables, as their tables.ts files declare them (NoteTablesOf). */
type CommentsTable = TablesOf<NoteCommentRow>
type AttachmentsTable = TablesOf<NoteAttachmentRow>
/** The modules with notes: those whose tables.ts declares their note tables. */
type NoteModule = CommentsTable extends `${infer M}_comments` ? M : never
export type NoteTables = { comments: CommentsTable; attachments: AttachmentsTable }
export const noteTables = <M extends NoteModule>(module: M) => ({ comments: `${module}_comments`, attachments: `${module}_attachments` }) as const satisfies NoteTables

export type { NoteAttachmentRow, NoteCommentRow } from './note-tables.ts'

export async function createNoteTables(db: Db, tables: NoteTables): Promise<void> {
  const common = sql`id uuid PRIMARY KEY, owner_id uuid NOT NULL, org_id uuid NOT NULL, created_by uuid, is_deleted boolean NOT NULL DEFAULT false, created_at timestamptz NOT NULL`
  await sql`CREATE TABLE ${sql.table(tables.comments)} (${common}, comment text NOT NULL, updated_at timestamptz NOT NULL)`.execute(db)
  await sql`CREATE TABLE ${sql.table(tables.attachments)} (${common}, file_name text NOT NULL, content_type text NOT NULL, size bigint NOT NULL, storage_key text NOT NULL)`.execute(db)
  for (const table of [tables.comments, tables.attachments]) await sql`CREATE INDEX ${sql.id(`${table}_owner`)} ON ${sql.table(table)} (owner_id, created_at)`.execute(db)
}

/** Every note event's fields at once: the switch below, on the event type's suffix (which TypeScript cannot narrow by), reads only those of its event. */
type NoteEventFields = AttachmentData & { comment_id: string; comment: string; by?: string | null; at: string }

/** Applies one note event of the record `ownerId` of organization `orgId` (the caller knows both). */
export async function applyNoteEvent<P extends string>(db: Db, tables: NoteTables, prefix: P, owner: { id: string; orgId: string }, event: NoteEvent<P>): Promise<void> {
  const data = event.data as NoteEventFields
  const at = new Date(data.at)
  const row = { owner_id: owner.id, org_id: owner.orgId, created_by: data.by ?? null, is_deleted: false, created_at: at }
  switch (event.type.slice(prefix.length)) {
    case 'CommentAdded':
      await db.insertInto(tables.comments).values({ ...row, id: data.comment_id, comment: data.comment, updated_at: at }).onConflict((oc) => oc.column('id').doNothing()).execute()
      return
    case 'CommentEdited':
      await db.updateTable(tables.comments).set({ comment: data.comment, updated_at: at }).where('id', '=', data.comment_id).execute()
      return
    case 'CommentDeleted':
      await db.updateTable(tables.comments).set({ is_deleted: true, updated_at: at }).where('id', '=', data.comment_id).execute()
      return
    case 'AttachmentAdded': {
      const { attachment_id, file_name, content_type, size, storage_key } = data
      await db.insertInto(tables.attachments).values({ ...row, id: attachment_id, file_name, content_type, size, storage_key }).onConflict((oc) => oc.column('id').doNothing()).execute()
      return
    }
    case 'AttachmentRemoved':
      await db.updateTable(tables.attachments).set({ is_deleted: true }).where('id', '=', data.attachment_id).execute()
  }
}

const live = (db: Db, table: CommentsTable | AttachmentsTable) => db.selectFrom(table).selectAll().where('is_deleted', '=', false)

/** A record's live comments and attachments, oldest first. */
export async function notesOfOwner(db: Db, tables: NoteTables, ownerId: string): Promise<{ comments: NoteCommentRow[]; attachments: NoteAttachmentRow[] }> {
  const ofOwner = (table: CommentsTable | AttachmentsTable) => live(db, table).where('owner_id', '=', ownerId).orderBy('created_at').orderBy('id').execute()
  const [comments, attachments] = await Promise.all([ofOwner(tables.comments), ofOwner(tables.attachments)])
  return { comments: comments as NoteCommentRow[], attachments: attachments as NoteAttachmentRow[] }
}

/** A live comment or attachment of the organization, or undefined. */
export const liveNote = <Row>(db: Db, table: CommentsTable | AttachmentsTable, orgId: string, id: string): Promise<Row | undefined> =>
  live(db, table).where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst() as Promise<Row | undefined>
