import type { z } from 'zod'
import type { Db } from '../../db/database.ts'
import { notesOfOwner } from '../../projections/kernel/notes.ts'
import type { NoteTables } from '../../projections/kernel/notes.ts'
import { profileRefs } from './relations.ts'
import type { AttachmentView, CommentView } from './schemas/notes.ts'

type CommentLike = { id: string; comment: string; created_by: string | null; created_at: Date; updated_at: Date }
type AttachmentLike = { id: string; file_name: string; content_type: string; size: number | string; created_by: string | null; created_at: Date }
export type NotesAnswer = { comments: z.infer<typeof CommentView>[]; attachments: z.infer<typeof AttachmentView>[] }

export const noteDownloadUrl = (plural: string, id: string) => `/api/${plural}/attachment/${id}/download/`

/** Live comments and attachments as every module's detail and note answers show them, their authors looked up once. */
export async function notesAnswer(db: Db, orgId: string, rows: { comments: readonly CommentLike[]; attachments: readonly AttachmentLike[] }, downloadUrl: (attachmentId: string) => string): Promise<NotesAnswer> {
  const { comments, attachments } = rows
  const ids = [...new Set([...comments, ...attachments].flatMap((note) => (note.created_by ? [note.created_by] : [])))]
  const authors = new Map((await profileRefs(db, orgId, ids)).map((ref) => [ref.id, ref]))
  const author = (id: string | null) => (id ? (authors.get(id) ?? null) : null)
  return {
    comments: comments.map((c) => ({ id: c.id, comment: c.comment, commented_by: author(c.created_by), commented_on: c.created_at.toISOString(), updated_at: c.updated_at.toISOString() })),
    attachments: attachments.map((a) => ({ id: a.id, file_name: a.file_name, content_type: a.content_type, size: Number(a.size), created_by: author(a.created_by), created_at: a.created_at.toISOString(), download_url: downloadUrl(a.id) })),
  }
}

/** A record's notes kept in projections/kernel/notes.ts tables (accounts, contacts, leads). */
export const notesView = async (db: Db, orgId: string, tables: NoteTables, plural: string, ownerId: string): Promise<NotesAnswer> =>
  notesAnswer(db, orgId, await notesOfOwner(db, tables, ownerId), (id) => noteDownloadUrl(plural, id))
