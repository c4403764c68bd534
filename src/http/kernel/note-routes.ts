import { randomUUID } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { NoteCommand } from '../../commands/notes.ts'
import { mentionedProfiles } from '../../commands/notification/mentions.ts'
import type { AttachmentData } from '../../commands/notes.ts'
import type { Db } from '../../db/database.ts'
import { NotFoundError, ValidationError, orNotFound } from '../../errors.ts'
import type { FileStore } from '../../files/file-store.ts'
import { liveNote } from '../../projections/kernel/notes.ts'
import type { NoteAttachmentRow, NoteCommentRow, NoteTables } from '../../projections/kernel/notes.ts'
import type { Deps } from '../../deps.ts'
import { requestCommands } from './commands.ts'
import type { RequestCommands } from './commands.ts'
import { actorOf } from './commands.ts'
import { identityOf, viewerOf } from './auth.ts'
import type { Viewer } from '../../visibility/policy.ts'
import { isUploadedFile } from './bodies.ts'
import { notesView } from './note-views.ts'
import { ErrorBody, IdParams, Message, authErrors } from './schemas/common.ts'
import { AttachmentView, CommentBody, CommentView, UploadedFileSchema } from './schemas/notes.ts'
import { formBoolean } from './schemas/form-values.ts'
import { adoptUpload, sendStoredFile } from './uploads.ts'

/** A comment or attachment row as the routes need it: its id and its record's (`owner_id`). */
type NoteRow = { id: string; owner_id: string }
type AttachmentRow = NoteRow & Pick<AttachmentData, 'storage_key' | 'content_type' | 'size' | 'file_name'>

/** One module's part in the shared note routes (leads, deals, accounts, contacts). */
export type NoteModule<Answer> = {
  /** The path segment and OpenAPI tag: `/api/<plural>/{id}/`, `/api/<plural>/comment/{id}/`, … */
  plural: string
  /** For summaries: `{ indefinite: 'a lead', adders: 'admin, creator or assignee' }`. */
  noun: { indefinite: string; adders: string }
  /** The multipart field of the file, e.g. `lead_attachment`. */
  fileField: string
  /** The record if the caller may see it: 404 when missing or another organization's, 403 without access. Adding and downloading need it. */
  visible: (request: FastifyRequest, id: string) => Promise<{ id: string }>
  /** Runs a note command on the record's stream (its decider checks the rules again). */
  run: (commands: RequestCommands, recordId: string, command: NoteCommand) => Promise<{ events: readonly unknown[] }>
  /** A live comment or attachment of the organization by id. */
  commentOf: (orgId: string, id: string) => Promise<NoteRow | undefined>
  attachmentOf: (orgId: string, id: string) => Promise<AttachmentRow | undefined>
  /** What POST /{id}/ answers: the record with its comments and attachments. */
  answer: z.ZodType<Answer>
  answerOf: (request: FastifyRequest, recordId: string) => Promise<Answer>
  /** A download route for any module's attachment instead of `/api/<plural>/attachment/{id}/download/` (the deals register `/api/attachments/{id}/download/`). */
  downloadPath?: string
  /** Deals also take a comment at POST comment/{deal id}/ (where-the-spec-is-silent.md). */
  commentOnRecord?: boolean
  /** Cases: POST /{id}/ also takes `is_internal`, a note for the team only (the module's views show it apart). */
  internalNotes?: boolean
}

/** The comments and attachments of a detail or note answer. */
export const NoteLists = { comments: z.array(CommentView).describe('Live comments, oldest first'), attachments: z.array(AttachmentView).describe('Live attachments, oldest first') }

/** The lookups of a module whose notes live in projections/kernel/notes.ts tables. */
export const noteLookups = (db: Db, tables: NoteTables) => ({
  commentOf: (orgId: string, id: string) => liveNote<NoteCommentRow>(db, tables.comments, orgId, id),
  attachmentOf: (orgId: string, id: string) => liveNote<NoteAttachmentRow>(db, tables.attachments, orgId, id),
})

const errors = { 400: ErrorBody, ...authErrors, 404: ErrorBody } as const
const article = (word: string) => (/^[aeiou]/i.test(word) ? 'an' : 'a')

/**
 * A record's comments and attachments (§4.1 "comment/<id>/"; where-the-spec-is-silent.md, Comments
 * and attachments), the same for every module: POST /api/<plural>/{id}/ adds a comment and/or a file
 * (whoever may access the record); comment/{id}/ edits (PUT, PATCH) or deletes one (admin or
 * author); attachment/{id}/ deletes one (admin or uploader) and its file; the download serves the
 * file to whoever may see the record. All are events on the record's own stream.
 */
/**
 * Every note module of an app, by its deps: the web app links any record's file as
 * /api/attachments/{id}/download/ (its files.js), so that route looks the id up in each module.
 */
const modulesOfApp = new WeakMap<Deps, NoteModule<unknown>[]>()

/** The attachment and the module holding it, if the caller may see its record (404 when no module has it). */
async function anyAttachment(deps: Deps, request: FastifyRequest, id: string): Promise<AttachmentRow> {
  const { orgId } = identityOf(request)
  for (const module of modulesOfApp.get(deps) ?? []) {
    const found = await module.attachmentOf(orgId, id)
    if (!found) continue
    await module.visible(request, found.owner_id)
    return found
  }
  throw new NotFoundError('Attachment not found')
}

export function noteRoutes<Answer>(deps: Deps, files: FileStore, module: NoteModule<Answer>): FastifyPluginAsyncZod {
  const { plural, noun, fileField } = module
  modulesOfApp.set(deps, [...(modulesOfApp.get(deps) ?? []), module as NoteModule<unknown>])
  const tags = [plural]
  const base = `/api/${plural}`
  const at = () => deps.clock().toISOString()
  // The answer's type is the module's; here, where it stays generic, the type provider cannot resolve it.
  const answer: z.ZodType = module.answer
  const NoteBody = z.object({
    comment: CommentBody.shape.comment.optional(),
    [fileField]: UploadedFileSchema.optional().describe('multipart/form-data only: a file attached in the same request (at most MAX_UPLOAD_BYTES, else 413)'),
  })
  const AddBody = module.internalNotes ? NoteBody.extend({ is_internal: formBoolean(z.boolean()).optional().describe('true: the comment is an internal note for the team, not a reply to the customer (default false)') }) : NoteBody

  return async (app) => {
    // The body's file field is the module's, so TypeScript types each field as text or file: the schema has checked which is which.
    const addNotes = async (request: FastifyRequest, reply: FastifyReply, recordId: string, text: unknown, upload: unknown, internal?: unknown) => {
      const comment = typeof text === 'string' ? text : undefined
      const { orgId } = identityOf(request)
      const record = await module.visible(request, recordId)
      if (comment === undefined && upload === undefined) throw new ValidationError({ comment: [`Expected a comment or ${article(fileField)} ${fileField}.`] })
      const commands = requestCommands(deps, request, reply)
      const actor = actorOf(request)
      if (comment !== undefined) await module.run(commands, record.id, { type: 'AddComment', orgId, actor, commentId: randomUUID(), comment, mentions: await mentionedProfiles(deps.db, orgId, comment), ...(internal === true && { internal: true }), at: at() })
      if (isUploadedFile(upload)) await adoptUpload(files, orgId, upload, (attachment) => module.run(commands, record.id, { type: 'AddAttachment', orgId, actor, attachment, at: at() }))
      await commands.settle()
      return module.answerOf(request, record.id)
    }

    const addSummary = `Comment on ${noun.indefinite} and/or attach a file (${noun.adders})`
    app.post(`${base}/:id/`, { schema: { tags, summary: addSummary, description: `JSON or form \`{"comment"}\`, or multipart with \`${fileField}\`. Answers the record with its comments and attachments.`, params: IdParams, body: AddBody, response: { 200: answer, ...errors } } }, (request, reply) =>
      addNotes(request, reply, request.params.id, request.body.comment, request.body[fileField], request.body.is_internal),
    )
    if (module.commentOnRecord) {
      app.post(`${base}/comment/:id/`, { schema: { tags, summary: `${addSummary.replace(' and/or attach a file', '')}; {id} is the record's id`, description: `The same as POST ${base}/{id}/ with a comment.`, params: IdParams, body: CommentBody, response: { 200: answer, ...errors } } }, (request, reply) =>
        addNotes(request, reply, request.params.id, request.body.comment, undefined),
      )
    }

    /** One command about an existing comment or attachment of the caller's organization (404 otherwise), on its record's stream. */
    const onNote = async <Row extends NoteRow>(request: FastifyRequest, reply: FastifyReply, row: Promise<Row | undefined>, command: (found: Row, facts: Pick<NoteCommand, 'orgId' | 'actor' | 'at'>) => NoteCommand) => {
      const found = await orNotFound(row)
      const commands = requestCommands(deps, request, reply)
      const result = await module.run(commands, found.owner_id, command(found, { orgId: identityOf(request).orgId, actor: actorOf(request), at: at() }))
      await commands.settle()
      return { found, recorded: result.events.length > 0 }
    }
    const commentOf = (request: FastifyRequest, id: string) => module.commentOf(identityOf(request).orgId, id)
    const attachmentOf = (request: FastifyRequest, id: string) => module.attachmentOf(identityOf(request).orgId, id)

    for (const method of ['put', 'patch'] as const) {
      app[method](`${base}/comment/:id/`, { schema: { tags, summary: `Edit a comment of ${noun.indefinite} (admin or its author)`, params: IdParams, body: CommentBody, response: { 200: Message, ...errors } } }, async (request, reply) => {
        await onNote(request, reply, commentOf(request, request.params.id), (found, facts) => ({ type: 'EditComment', ...facts, commentId: found.id, comment: request.body.comment }))
        return { error: false as const, message: 'Comment updated' }
      })
    }

    app.delete(`${base}/comment/:id/`, { schema: { tags, summary: `Delete a comment of ${noun.indefinite} (admin or its author)`, params: IdParams, response: { 200: Message, ...errors } } }, async (request, reply) => {
      await onNote(request, reply, commentOf(request, request.params.id), (found, facts) => ({ type: 'DeleteComment', ...facts, commentId: found.id }))
      return { error: false as const, message: 'Comment deleted' }
    })

    app.delete(`${base}/attachment/:id/`, { schema: { tags, summary: `Delete an attachment of ${noun.indefinite} (admin or its uploader); its file is removed`, params: IdParams, response: { 200: Message, ...errors } } }, async (request, reply) => {
      const { found, recorded } = await onNote(request, reply, attachmentOf(request, request.params.id), (row, facts) => ({ type: 'RemoveAttachment', ...facts, attachmentId: row.id }))
      if (recorded) await files.remove(found.storage_key)
      return { error: false as const, message: 'Attachment deleted' }
    })

    if (module.downloadPath) {
      app.get(module.downloadPath, { schema: { tags: ['attachments'], summary: 'Download an attachment of any record: a deal, account, contact, lead or task (whoever may see the record)', params: IdParams, response: { 200: FILE_ANSWER, ...errors } } }, async (request, reply) =>
        sendStoredFile(reply, files, await anyAttachment(deps, request, request.params.id)),
      )
    } else {
      app.get(`${base}/attachment/:id/download/`, { schema: { tags, summary: `Download an attachment of ${noun.indefinite} (whoever may see it)`, params: IdParams, response: { 200: FILE_ANSWER, ...errors } } }, async (request, reply) => {
        const found = await orNotFound(attachmentOf(request, request.params.id))
        await module.visible(request, found.owner_id)
        return sendStoredFile(reply, files, found)
      })
    }
  }
}

/** A download answers the stored bytes under the content type they were uploaded with, not JSON. */
const FILE_ANSWER = { description: 'The file, under the content type it was uploaded with', content: { 'application/octet-stream': { schema: z.string().describe('The file\'s bytes (any content type)') } } }

/** A plain record module (accounts, contacts) as its notes need it. */
export type MemberRecord<Row extends { id: string }> = {
  /** `account`: paths under `/api/accounts/`, the file in `account_attachment`, the record under `account_obj`. */
  singular: string
  tables: NoteTables
  /** The live record of the viewer's organization (its body showing what the viewer may see), and its response body and schema. */
  rowOf: (viewer: Viewer, id: string) => Promise<Row | undefined>
  bodyOf: (row: Row) => unknown
  schema: z.ZodType
}

/**
 * The notes of a plain record: any member of its organization may add them, as any member may
 * edit the record; they live in projections/kernel/notes.ts tables; POST answers `{<singular>_obj, comments, attachments}`.
 */
export function memberNoteRoutes<Row extends { id: string }>(deps: Deps, files: FileStore, record: MemberRecord<Row>, run: NoteModule<unknown>['run']): FastifyPluginAsyncZod {
  const { singular, tables } = record
  const plural = `${singular}s`
  const found = (request: FastifyRequest, id: string) => orNotFound(record.rowOf(viewerOf(request), id))
  return noteRoutes(deps, files, {
    plural,
    noun: { indefinite: `${article(singular)} ${singular}`, adders: 'any member' },
    fileField: `${singular}_attachment`,
    visible: found,
    run,
    ...noteLookups(deps.db, tables),
    answer: z.object({ [`${singular}_obj`]: record.schema, ...NoteLists }),
    answerOf: async (request, id) => ({ [`${singular}_obj`]: record.bodyOf(await found(request, id)), ...(await notesView(deps.db, identityOf(request).orgId, tables, plural, id)) }),
  })
}
