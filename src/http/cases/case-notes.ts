import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { caseDecider, caseStream } from '../../commands/case/case.ts'
import { visibleCase } from '../../commands/case/write-case.ts'
import type { Db } from '../../db/database.ts'
import type { Deps } from '../../deps.ts'
import type { FileStore } from '../../files/file-store.ts'
import { CASE_NOTES, internalNoteIds } from '../../projections/case/queries.ts'
import { viewerOf } from '../kernel/auth.ts'
import { callerOf } from '../kernel/commands.ts'
import { noteLookups, noteRoutes } from '../kernel/note-routes.ts'
import { notesView } from '../kernel/note-views.ts'
import { casesOf } from './case-views.ts'
import { CaseNoteAnswer } from './schemas.ts'

/** A case's notes as its detail shows them: public comments and internal notes apart, and attachments. */
export async function caseNotesView(db: Db, orgId: string, caseId: string) {
  const [notes, internal] = await Promise.all([notesView(db, orgId, CASE_NOTES, 'cases', caseId), internalNoteIds(db, caseId)])
  return { comments: notes.comments.filter((c) => !internal.has(c.id)), internal_notes: notes.comments.filter((c) => internal.has(c.id)), attachments: notes.attachments }
}

/**
 * A case's comments, internal notes and attachments (note-routes.ts): added by whoever may change
 * the case (admin, creator or assignee), `is_internal` for a note to the team, the file in
 * `case_attachment` (the original's field). The first public comment of a member stamps the
 * case's first response (its decider). Events on the case's stream (`CaseCommentAdded` …).
 */
export function caseNoteRoutes(deps: Deps, files: FileStore): FastifyPluginAsyncZod {
  const { db, clock } = deps
  return noteRoutes(deps, files, {
    plural: 'cases',
    noun: { indefinite: 'a case', adders: 'admin, creator or assignee' },
    fileField: 'case_attachment',
    internalNotes: true,
    visible: (request, id) => visibleCase(db, callerOf(request), id),
    run: (commands, id, command) => commands.run(caseDecider, caseStream(id), command),
    ...noteLookups(db, CASE_NOTES),
    answer: CaseNoteAnswer,
    answerOf: async (request, id) => {
      const viewer = viewerOf(request)
      const row = await visibleCase(db, callerOf(request), id)
      const [[body], notes] = await Promise.all([casesOf(deps, viewer, [row], clock()), caseNotesView(db, viewer.orgId, id)])
      return { cases_obj: body!, ...notes }
    },
  })
}
