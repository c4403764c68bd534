import { randomUUID } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { invoiceDecider, invoiceStream } from '../../commands/invoice/invoice.ts'
import { visibleInvoice } from '../../commands/invoice/write-invoice.ts'
import type { NoteCommand } from '../../commands/notes.ts'
import { mentionedProfiles } from '../../commands/notification/mentions.ts'
import type { Deps } from '../../deps.ts'
import { NotFoundError, ValidationError } from '../../errors.ts'
import type { FileStore } from '../../files/file-store.ts'
import { INVOICE_NOTES } from '../../projections/invoice/invoices.ts'
import { liveNote } from '../../projections/kernel/notes.ts'
import type { NoteAttachmentRow, NoteCommentRow } from '../../projections/kernel/notes.ts'
import { isUploadedFile } from '../kernel/bodies.ts'
import { actorOf, callerOf, requestCommands } from '../kernel/commands.ts'
import { notesAnswer } from '../kernel/note-views.ts'
import { ErrorBody, IdParams, Message, authErrors } from '../kernel/schemas/common.ts'
import { AttachmentView, CommentBody, CommentView, UploadedFileSchema } from '../kernel/schemas/notes.ts'
import { adoptUpload, sendStoredFile } from '../kernel/uploads.ts'
import { InvoiceParams } from './schemas.ts'

const TAGS = ['invoices']
const errors = { 400: ErrorBody, ...authErrors, 404: ErrorBody } as const
const downloadUrl = (id: string) => `/api/invoices/attachments/${id}/download/`

/**
 * An invoice's comments and attachments at the original's paths ({invoice_id}/comments/,
 * comments/{id}/, {invoice_id}/attachments/, attachments/{id}/): events on the invoice's stream
 * (commands/notes.ts), added by whoever may act on the invoice, changed or removed by their author
 * or an admin. The file of an attachment is the multipart field `file`, as the original's.
 */
export function invoiceNoteRoutes(deps: Deps, files: FileStore): FastifyPluginAsyncZod {
  const { db, clock } = deps
  const at = () => clock().toISOString()
  const run = async (request: FastifyRequest, reply: FastifyReply, invoiceId: string, command: NoteCommand) => {
    const commands = requestCommands(deps, request, reply)
    const result = await commands.run(invoiceDecider, invoiceStream(invoiceId), command)
    await commands.settle()
    return result.events.length > 0
  }
  const noteOf = async <Row extends NoteCommentRow | NoteAttachmentRow>(table: typeof INVOICE_NOTES.comments | typeof INVOICE_NOTES.attachments, request: FastifyRequest, id: string, what: string): Promise<Row> => {
    const row = await liveNote<Row>(db, table, callerOf(request).orgId, id)
    if (!row) throw new NotFoundError(`${what} not found`)
    await visibleInvoice(deps, callerOf(request), row.owner_id)
    return row
  }
  const answerOf = (request: FastifyRequest, rows: { comments?: NoteCommentRow[]; attachments?: NoteAttachmentRow[] }) => notesAnswer(db, callerOf(request).orgId, { comments: rows.comments ?? [], attachments: rows.attachments ?? [] }, downloadUrl)

  return async (app) => {
    app.post('/api/invoices/:invoice_id/comments/', { schema: { tags: TAGS, summary: 'Comment on an invoice (admin, creator or assignee)', params: InvoiceParams, body: CommentBody, response: { 201: z.object({ error: z.literal(false), message: z.string(), comment: CommentView }), ...errors } } }, async (request, reply) => {
      const invoice = await visibleInvoice(deps, callerOf(request), request.params.invoice_id)
      const { orgId } = callerOf(request)
      const commentId = randomUUID()
      const { comment } = request.body
      await run(request, reply, invoice.id, { type: 'AddComment', orgId, actor: actorOf(request), commentId, comment, mentions: await mentionedProfiles(db, orgId, comment), at: at() })
      const row = await noteOf<NoteCommentRow>(INVOICE_NOTES.comments, request, commentId, 'Comment')
      return reply.code(201).send({ error: false as const, message: 'Comment added', comment: (await answerOf(request, { comments: [row] })).comments[0]! })
    })

    app.put('/api/invoices/comments/:id/', { schema: { tags: TAGS, summary: 'Edit a comment of an invoice (admin or its author)', params: IdParams, body: CommentBody, response: { 200: z.object({ error: z.literal(false), message: z.string(), comment: CommentView }), ...errors } } }, async (request, reply) => {
      const row = await noteOf<NoteCommentRow>(INVOICE_NOTES.comments, request, request.params.id, 'Comment')
      await run(request, reply, row.owner_id, { type: 'EditComment', orgId: row.org_id, actor: actorOf(request), commentId: row.id, comment: request.body.comment, at: at() })
      const edited = await noteOf<NoteCommentRow>(INVOICE_NOTES.comments, request, row.id, 'Comment')
      return { error: false as const, message: 'Comment updated', comment: (await answerOf(request, { comments: [edited] })).comments[0]! }
    })

    app.delete('/api/invoices/comments/:id/', { schema: { tags: TAGS, summary: 'Delete a comment of an invoice (admin or its author)', params: IdParams, response: { 200: Message, ...errors } } }, async (request, reply) => {
      const row = await noteOf<NoteCommentRow>(INVOICE_NOTES.comments, request, request.params.id, 'Comment')
      await run(request, reply, row.owner_id, { type: 'DeleteComment', orgId: row.org_id, actor: actorOf(request), commentId: row.id, at: at() })
      return { error: false as const, message: 'Comment deleted' }
    })

    app.post('/api/invoices/:invoice_id/attachments/', { schema: { tags: TAGS, summary: 'Attach a file to an invoice (admin, creator or assignee)', description: 'multipart/form-data with the file in `file`.', params: InvoiceParams, body: z.object({ file: UploadedFileSchema.optional() }), response: { 201: z.object({ error: z.literal(false), message: z.string(), attachment: AttachmentView }), ...errors } } }, async (request, reply) => {
      const invoice = await visibleInvoice(deps, callerOf(request), request.params.invoice_id)
      const upload = request.body.file
      if (!isUploadedFile(upload)) throw new ValidationError({ file: ['File required'] })
      let attachmentId = ''
      await adoptUpload(files, invoice.org_id, upload, (attachment) => {
        attachmentId = attachment.attachment_id
        return run(request, reply, invoice.id, { type: 'AddAttachment', orgId: invoice.org_id, actor: actorOf(request), attachment, at: at() })
      })
      const row = await noteOf<NoteAttachmentRow>(INVOICE_NOTES.attachments, request, attachmentId, 'Attachment')
      return reply.code(201).send({ error: false as const, message: 'Attachment uploaded', attachment: (await answerOf(request, { attachments: [row] })).attachments[0]! })
    })

    app.delete('/api/invoices/attachments/:id/', { schema: { tags: TAGS, summary: 'Delete an attachment of an invoice (admin or its uploader); its file is removed', params: IdParams, response: { 200: Message, ...errors } } }, async (request, reply) => {
      const row = await noteOf<NoteAttachmentRow>(INVOICE_NOTES.attachments, request, request.params.id, 'Attachment')
      if (await run(request, reply, row.owner_id, { type: 'RemoveAttachment', orgId: row.org_id, actor: actorOf(request), attachmentId: row.id, at: at() })) await files.remove(row.storage_key)
      return { error: false as const, message: 'Attachment deleted' }
    })

    app.get('/api/invoices/attachments/:id/download/', { schema: { tags: TAGS, summary: 'Download an attachment of an invoice (whoever may act on the invoice)', params: IdParams, response: { 200: { description: 'The file, under the content type it was uploaded with', content: { 'application/octet-stream': { schema: z.string() } } }, ...errors } } }, async (request, reply) =>
      sendStoredFile(reply, files, await noteOf<NoteAttachmentRow>(INVOICE_NOTES.attachments, request, request.params.id, 'Attachment')),
    )
  }
}
