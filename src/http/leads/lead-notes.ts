import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { leadDecider, leadStreams } from '../../commands/lead/lead.ts'
import { orNotFound } from '../../errors.ts'
import type { FileStore } from '../../files/file-store.ts'
import { LEAD_NOTES, leadOf } from '../../projections/lead/leads.ts'
import type { Deps } from '../../deps.ts'
import { leadNotesView, leadsOf } from './lead-views.ts'
import { noteLookups, noteRoutes } from '../kernel/note-routes.ts'
import { identityOf } from '../kernel/auth.ts'
import { LeadNoteAnswer } from './schemas.ts'
import { visibleLeadOf } from './leads.ts'

/**
 * A lead's comments and attachments (note-routes.ts): added by whoever may access the lead (admin,
 * creator or assignee), with the file in `lead_attachment`; downloads at
 * /api/leads/attachment/{id}/download/. Events on the lead's stream (`LeadCommentAdded` …).
 */
export function leadNoteRoutes(deps: Deps, files: FileStore): FastifyPluginAsyncZod {
  const { db, clock } = deps
  return noteRoutes(deps, files, {
    plural: 'leads',
    noun: { indefinite: 'a lead', adders: 'admin, creator or assignee' },
    fileField: 'lead_attachment',
    visible: (request, id) => visibleLeadOf(deps, request, id),
    run: (commands, id, command) => commands.run(leadDecider, leadStreams.stream(id), command),
    ...noteLookups(db, LEAD_NOTES),
    answer: LeadNoteAnswer,
    answerOf: async (request, id) => {
      const { orgId } = identityOf(request)
      const [shown] = await leadsOf(db, orgId, [await orNotFound(leadOf(db, orgId, id))], clock())
      return { lead_obj: shown!, ...(await leadNotesView(db, orgId, id)) }
    },
  })
}
