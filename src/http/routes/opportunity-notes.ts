import { randomUUID } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { CommandRunner } from '../../commands/command-runner.ts'
import { opportunityDecider, opportunityStreams } from '../../commands/opportunity/opportunity.ts'
import type { OpportunityCommand } from '../../commands/opportunity/opportunity.ts'
import type { Actor } from '../../commands/opportunity/rules.ts'
import { mayAccess } from '../../commands/opportunity/rules.ts'
import { ForbiddenError, NotFoundError, ValidationError, orNotFound } from '../../errors.ts'
import type { FileStore } from '../../files/file-store.ts'
import { organizationById } from '../../identity/organizations.ts'
import { attachmentOf, commentOf, opportunityOf } from '../../projections/opportunities.ts'
import type { AppDeps } from '../app.ts'
import { actorOf, visibleDeal } from '../deal-access.ts'
import { requestCommands } from '../commands.ts'
import { notesOf, opportunitiesOf } from '../opportunity-views.ts'
import { identityOf } from '../plugins/auth.ts'
import { adoptUpload } from '../uploads.ts'
import type { UploadedFile } from '../plugins/bodies.ts'
import { ErrorBody, IdParams, Message, authErrors } from '../schemas/common.ts'
import { CommentBody, NoteAnswer, NoteBody } from '../schemas/opportunities.ts'

const TAGS = ['opportunities']
const errors = { 400: ErrorBody, ...authErrors, 404: ErrorBody } as const

/** Stores an uploaded file and records it on the deal (OpportunityAttachmentAdded); see adoptUpload. */
export function attachUpload(run: CommandRunner, files: FileStore, deal: { orgId: string; id: string }, actor: Actor, upload: UploadedFile, at: string): Promise<void> {
  return adoptUpload(files, deal.orgId, upload, (attachment) => run(opportunityDecider, opportunityStreams.stream(deal.id), { type: 'AddAttachment', orgId: deal.orgId, actor, attachment, at }))
}

/**
 * A deal's comments and attachments (where-the-spec-is-silent.md, Comments and attachments):
 * POST /api/opportunities/{id}/ adds a comment and/or a file; comment/{id}/ edits or deletes one
 * (admin or author); attachment/{id}/ deletes one (admin or uploader); attachments download from
 * /api/attachments/{id}/download/ under the deal's access rule. All are events on the deal's stream.
 */
export function opportunityNoteRoutes(deps: AppDeps, files: FileStore): FastifyPluginAsyncZod {
  const { db, clock } = deps
  return async (app) => {
    /** Adds a comment and/or a file to a deal and answers the deal with its comments and attachments. */
    const addNotes = async (request: FastifyRequest, reply: FastifyReply, dealId: string, comment: string | undefined, upload: UploadedFile | undefined) => {
      const identity = identityOf(request)
      const actor = actorOf(request)
      const deal = await visibleDeal(db, request, dealId, 'Only an admin, the creator or an assignee may comment on this opportunity')
      if (comment === undefined && upload === undefined) throw new ValidationError({ comment: ['Expected a comment or an opportunity_attachment.'] })
      const commands = requestCommands(deps, request, reply)
      const at = clock().toISOString()
      if (comment !== undefined) await commands.run(opportunityDecider, opportunityStreams.stream(deal.id), { type: 'AddComment', orgId: identity.orgId, actor, commentId: randomUUID(), comment, at })
      if (upload) await attachUpload(commands.run, files, { orgId: identity.orgId, id: deal.id }, actor, upload, at)
      await commands.settle()
      const org = await organizationById(db, identity.orgId)
      const [opportunity] = await opportunitiesOf(db, { id: org.id, name: org.name }, [await orNotFound(opportunityOf(db, identity.orgId, deal.id))], clock())
      return { opportunity_obj: opportunity!, ...(await notesOf(db, identity.orgId, deal.id)) }
    }

    app.post('/api/opportunities/:id/', { schema: { tags: TAGS, summary: 'Comment on a deal and/or attach a file (admin, creator or assignee)', description: 'Answers the deal with its comments and attachments.', params: IdParams, body: NoteBody, response: { 200: NoteAnswer, ...errors } } }, (request, reply) =>
      addNotes(request, reply, request.params.id, request.body.comment, request.body.opportunity_attachment),
    )

    app.post('/api/opportunities/comment/:id/', { schema: { tags: TAGS, summary: 'Comment on a deal ({id} is the deal id; admin, creator or assignee)', description: 'The same as POST /api/opportunities/{id}/ with a comment.', params: IdParams, body: CommentBody, response: { 200: NoteAnswer, ...errors } } }, (request, reply) =>
      addNotes(request, reply, request.params.id, request.body.comment, undefined),
    )

    /** One command about an existing comment or attachment, on its deal's stream. */
    const onNote = async (request: FastifyRequest, reply: FastifyReply, dealId: string, command: OpportunityCommand) => {
      const commands = requestCommands(deps, request, reply)
      const result = await commands.run(opportunityDecider, opportunityStreams.stream(dealId), command)
      await commands.settle()
      return result
    }
    const comment = async (orgId: string, id: string) => orNotFound(commentOf(db, orgId, id))

    for (const method of ['put', 'patch'] as const) {
      app[method]('/api/opportunities/comment/:id/', { schema: { tags: TAGS, summary: 'Edit a comment (admin or its author)', params: IdParams, body: CommentBody, response: { 200: Message, ...errors } } }, async (request, reply) => {
        const identity = identityOf(request)
        const found = await comment(identity.orgId, request.params.id)
        await onNote(request, reply, found.opportunity_id, { type: 'EditComment', orgId: identity.orgId, actor: actorOf(request), commentId: found.id, comment: request.body.comment, at: clock().toISOString() })
        return { error: false as const, message: 'Comment updated' }
      })
    }

    app.delete('/api/opportunities/comment/:id/', { schema: { tags: TAGS, summary: 'Delete a comment (admin or its author)', params: IdParams, response: { 200: Message, ...errors } } }, async (request, reply) => {
      const identity = identityOf(request)
      const found = await comment(identity.orgId, request.params.id)
      await onNote(request, reply, found.opportunity_id, { type: 'DeleteComment', orgId: identity.orgId, actor: actorOf(request), commentId: found.id, at: clock().toISOString() })
      return { error: false as const, message: 'Comment deleted' }
    })

    app.delete('/api/opportunities/attachment/:id/', { schema: { tags: TAGS, summary: 'Delete an attachment (admin or its uploader); its file is removed', params: IdParams, response: { 200: Message, ...errors } } }, async (request, reply) => {
      const identity = identityOf(request)
      const found = await orNotFound(attachmentOf(db, identity.orgId, request.params.id))
      const result = await onNote(request, reply, found.opportunity_id, { type: 'RemoveAttachment', orgId: identity.orgId, actor: actorOf(request), attachmentId: found.id, at: clock().toISOString() })
      if (result.events.length) await files.remove(found.storage_key)
      return { error: false as const, message: 'Attachment deleted' }
    })

    app.get('/api/attachments/:id/download/', { schema: { tags: ['attachments'], summary: "Download an attachment (whoever may see its record)", params: IdParams, response: { 200: z.unknown().describe('The file, with its content type'), ...errors } } }, async (request, reply) => {
      const identity = identityOf(request)
      const found = await orNotFound(attachmentOf(db, identity.orgId, request.params.id))
      const deal = await orNotFound(opportunityOf(db, identity.orgId, found.opportunity_id))
      if (!mayAccess({ createdBy: deal.created_by, assignedTo: deal.assigned_to }, actorOf(request))) throw new ForbiddenError()
      const stream = await files.open(found.storage_key)
      if (!stream) throw new NotFoundError('The file is missing from the file store')
      return reply
        .header('content-type', found.content_type)
        .header('content-length', String(found.size))
        .header('content-disposition', `attachment; filename*=UTF-8''${encodeURIComponent(found.file_name)}`)
        .send(stream)
    })
  }
}
