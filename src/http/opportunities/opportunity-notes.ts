import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import type { CommandRunner } from '../../commands/command-runner.ts'
import { opportunityDecider, opportunityStreams } from '../../commands/opportunity/opportunity.ts'
import type { Actor } from '../../commands/caller.ts'
import { orNotFound } from '../../errors.ts'
import type { FileStore } from '../../files/file-store.ts'
import { lookupsOf } from '../../lookups/lookups.ts'
import { attachmentOf, commentOf, opportunityOf } from '../../projections/opportunity/opportunities.ts'
import type { Deps } from '../../deps.ts'
import { visibleDeal } from '../../commands/opportunity/visible-opportunity.ts'
import { noteRoutes } from '../kernel/note-routes.ts'
import { notesOf, opportunitiesOf } from './opportunity-views.ts'
import { identityOf } from '../kernel/auth.ts'
import { adoptUpload } from '../kernel/uploads.ts'
import type { UploadedFile } from '../kernel/bodies.ts'
import { NoteAnswer } from './schemas.ts'
import { callerOf } from '../kernel/commands.ts'

/** Stores an uploaded file and records it on the deal (OpportunityAttachmentAdded); see adoptUpload. */
export function attachUpload(run: CommandRunner, files: FileStore, deal: { orgId: string; id: string }, actor: Actor, upload: UploadedFile, at: string): Promise<void> {
  return adoptUpload(files, deal.orgId, upload, (attachment) => run(opportunityDecider, opportunityStreams.stream(deal.id), { type: 'AddAttachment', orgId: deal.orgId, actor, attachment, at }))
}

/** The deal's own note tables name their deal in `opportunity_id`. */
const owned = async <Row extends { opportunity_id: string }>(row: Promise<Row | undefined>) => {
  const found = await row
  return found && { ...found, owner_id: found.opportunity_id }
}

/**
 * A deal's comments and attachments (note-routes.ts): added by an admin, the creator or an
 * assignee, with the file in `opportunity_attachment`, also at POST comment/{deal id}/; downloads at
 * /api/attachments/{id}/download/ under the deal's access rule. Events on the deal's stream.
 */
export function opportunityNoteRoutes(deps: Deps, files: FileStore): FastifyPluginAsyncZod {
  const { db, clock } = deps
  return noteRoutes(deps, files, {
    plural: 'opportunities',
    noun: { indefinite: 'a deal', adders: 'admin, creator or assignee' },
    fileField: 'opportunity_attachment',
    visible: (request, id) => visibleDeal(db, callerOf(request), id, 'Only an admin, the creator or an assignee may comment on this opportunity'),
    run: (commands, id, command) => commands.run(opportunityDecider, opportunityStreams.stream(id), command),
    commentOf: (orgId, id) => owned(commentOf(db, orgId, id)),
    attachmentOf: (orgId, id) => owned(attachmentOf(db, orgId, id)),
    answer: NoteAnswer,
    answerOf: async (request, id) => {
      const org = await lookupsOf(deps).organization(identityOf(request).orgId)
      const [opportunity] = await opportunitiesOf(deps, { id: org.id, name: org.name }, [await orNotFound(opportunityOf(db, org.id, id))], clock())
      return { opportunity_obj: opportunity!, ...(await notesOf(db, org.id, id)) }
    },
    downloadPath: '/api/attachments/:id/download/',
    commentOnRecord: true,
  })
}
