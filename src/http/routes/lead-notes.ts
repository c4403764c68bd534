import { randomUUID } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { leadDecider, leadStreams } from '../../commands/lead/lead.ts'
import type { NoteCommand } from '../../commands/notes.ts'
import type { Actor } from '../../commands/opportunity/rules.ts'
import { ValidationError, orNotFound } from '../../errors.ts'
import type { FileStore } from '../../files/file-store.ts'
import { leadAttachmentOf, leadCommentOf, leadOf } from '../../projections/leads.ts'
import type { AppDeps } from '../app.ts'
import { requestCommands } from '../commands.ts'
import { leadNotesView, leadsOf } from '../lead-views.ts'
import { identityOf } from '../plugins/auth.ts'
import { ErrorBody, IdParams, Message, authErrors } from '../schemas/common.ts'
import { LeadNoteAnswer, LeadNoteBody } from '../schemas/leads.ts'
import { CommentBody } from '../schemas/opportunities.ts'
import { sendStoredFile } from '../uploads.ts'
import { actorOf } from '../deal-access.ts'
import { attachToLead, visibleLead } from './leads.ts'

const TAGS = ['leads']
type NoteFacts = { orgId: string; actor: Actor; at: string }
const errors = { 400: ErrorBody, ...authErrors, 404: ErrorBody } as const

/**
 * A lead's comments and attachments (§4.1 "comment/<id>/"; where-the-spec-is-silent.md, Comments
 * and attachments): POST /api/leads/{id}/ adds a comment and/or a file (admin, creator or
 * assignee); comment/{id}/ edits (PUT, PATCH) or deletes one (admin or author); attachment/{id}/
 * deletes one (admin or uploader); attachment/{id}/download/ serves the file to whoever may see the
 * lead. All are events on the lead's stream.
 */
export function leadNoteRoutes(deps: AppDeps, files: FileStore): FastifyPluginAsyncZod {
  const { db, clock } = deps
  return async (app) => {
    app.post('/api/leads/:id/', { schema: { tags: TAGS, summary: 'Comment on a lead and/or attach a file (admin, creator or assignee)', description: 'JSON `{"comment"}`, or multipart with `lead_attachment`. Answers the lead with its comments and attachments.', params: IdParams, body: LeadNoteBody, response: { 200: LeadNoteAnswer, ...errors } } }, async (request, reply) => {
      const identity = identityOf(request)
      const lead = await visibleLead(deps, request, request.params.id)
      const { comment, lead_attachment: upload } = request.body
      if (comment === undefined && upload === undefined) throw new ValidationError({ comment: ['Expected a comment or a lead_attachment.'] })
      const commands = requestCommands(deps, request, reply)
      if (comment !== undefined) await commands.run(leadDecider, leadStreams.stream(lead.id), { type: 'AddComment', orgId: identity.orgId, actor: actorOf(request), commentId: randomUUID(), comment, at: clock().toISOString() })
      if (upload) await attachToLead(deps, files, commands, request, lead.id, upload)
      await commands.settle()
      const [shown] = await leadsOf(db, identity.orgId, [await orNotFound(leadOf(db, identity.orgId, lead.id))], clock())
      return { lead_obj: shown!, ...(await leadNotesView(db, identity.orgId, lead.id)) }
    })

    /** One command about an existing comment or attachment of the caller's organization (404 otherwise), on its lead's stream. */
    const onNote = async <Row extends { id: string; owner_id: string }>(request: FastifyRequest, reply: FastifyReply, noteId: string, find: (orgId: string, id: string) => Promise<Row | undefined>, command: (row: Row, facts: NoteFacts) => NoteCommand) => {
      const { orgId } = identityOf(request)
      const row = await orNotFound(find(orgId, noteId))
      const commands = requestCommands(deps, request, reply)
      const result = await commands.run(leadDecider, leadStreams.stream(row.owner_id), command(row, { orgId, actor: actorOf(request), at: clock().toISOString() }))
      await commands.settle()
      return { row, recorded: result.events.length > 0 }
    }
    const findComment = (orgId: string, id: string) => leadCommentOf(db, orgId, id)

    for (const method of ['put', 'patch'] as const) {
      app[method]('/api/leads/comment/:id/', { schema: { tags: TAGS, summary: "Edit a lead's comment (admin or its author)", params: IdParams, body: CommentBody, response: { 200: Message, ...errors } } }, async (request, reply) => {
        await onNote(request, reply, request.params.id, findComment, (row, facts) => ({ type: 'EditComment', ...facts, commentId: row.id, comment: request.body.comment }))
        return { error: false as const, message: 'Comment updated' }
      })
    }

    app.delete('/api/leads/comment/:id/', { schema: { tags: TAGS, summary: "Delete a lead's comment (admin or its author)", params: IdParams, response: { 200: Message, ...errors } } }, async (request, reply) => {
      await onNote(request, reply, request.params.id, findComment, (row, facts) => ({ type: 'DeleteComment', ...facts, commentId: row.id }))
      return { error: false as const, message: 'Comment deleted' }
    })

    app.delete('/api/leads/attachment/:id/', { schema: { tags: TAGS, summary: "Delete a lead's attachment (admin or its uploader); its file is removed", params: IdParams, response: { 200: Message, ...errors } } }, async (request, reply) => {
      const { row, recorded } = await onNote(request, reply, request.params.id, (orgId, id) => leadAttachmentOf(db, orgId, id), (found, facts) => ({ type: 'RemoveAttachment', ...facts, attachmentId: found.id }))
      if (recorded) await files.remove(row.storage_key)
      return { error: false as const, message: 'Attachment deleted' }
    })

    app.get('/api/leads/attachment/:id/download/', { schema: { tags: TAGS, summary: "Download a lead's attachment (whoever may see the lead)", params: IdParams, response: { 200: z.unknown().describe('The file, with its content type'), ...errors } } }, async (request, reply) => {
      const identity = identityOf(request)
      const found = await orNotFound(leadAttachmentOf(db, identity.orgId, request.params.id))
      await visibleLead(deps, request, found.owner_id)
      return sendStoredFile(reply, files, found)
    })
  }
}
