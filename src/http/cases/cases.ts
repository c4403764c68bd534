import type { FastifyReply, FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { mayWriteCase } from '../../commands/case/case.ts'
import type { CaseInput } from '../../commands/case/case.ts'
import { changeCase, createCase, deleteCase, visibleCase } from '../../commands/case/write-case.ts'
import { actorOfCaller } from '../../commands/caller.ts'
import type { Deps } from '../../deps.ts'
import type { FileStore } from '../../files/file-store.ts'
import { activeMembers } from '../../identity/users.ts'
import { mergedFromCases } from '../../projections/case/merges.ts'
import { viewerOfIdentity } from '../../visibility/policy.ts'
import { fieldBody } from '../custom-fields/schemas.ts'
import { identityOf } from '../kernel/auth.ts'
import { callerOf, requestCommands } from '../kernel/commands.ts'
import { ErrorBody, IdParams, Message, authErrors } from '../kernel/schemas/common.ts'
import { Created } from '../kernel/schemas/records.ts'
import { caseBoardRoutes } from './case-board.ts'
import { CASE_CHOICES, caseListRoute } from './case-list.ts'
import { caseBulkRoutes } from './case-bulk.ts'
import { caseImportRoutes } from './case-import.ts'
import { MergedRedirect, caseMergeRoutes, mergedRedirect } from './case-merge.ts'
import { caseNoteRoutes, caseNotesView } from './case-notes.ts'
import { caseSolutionRoutes, caseSolutionsView } from './case-solutions.ts'
import { caseTreeRoutes } from './case-tree.ts'
import { activeCaseFields, casesOf } from './case-views.ts'
import { caseWatcherRoutes } from './case-watchers.ts'
import { CaseBodySchema, CaseDetail, CasePatch } from './schemas.ts'

const TAGS = ['cases']
const errors = { 400: ErrorBody, ...authErrors, 404: ErrorBody } as const

const ShowMerged = z.object({ show_merged: z.string().optional().describe('true: a merged duplicate answers its own detail, not where it went') })

const WRITABLE = Object.keys(CaseBodySchema.shape).filter((key) => key !== 'custom_fields')

/** A validated body as the use case takes it: the writable fields it names, its custom values (`cf_<key>`, `custom_fields`) apart. */
function inputOf(body: z.infer<typeof CasePatch>): CaseInput {
  const input = Object.fromEntries(Object.entries(body).filter(([key, value]) => WRITABLE.includes(key) && value !== undefined)) as CaseInput
  return { ...input, custom: { cfFields: body, customFields: body.custom_fields } }
}

/**
 * Cases (the original's CaseListView and CaseDetailView): the queue with its totals and the form's
 * pickers (case-list.ts), create, detail, PUT, PATCH, DELETE; comments, internal notes and attachments
 * (case-notes.ts); watchers (case-watchers.ts); linked knowledge-base solutions and suggestions
 * (case-solutions.ts); the problem → incident tree (case-tree.ts); the board and card moves
 * (case-board.ts). Who:
 * an admin, the creator, an assignee or a watcher reads a case; an admin, the creator or an
 * assignee changes it; an admin or the creator deletes it.
 */
export function caseRoutes(deps: Deps, files: FileStore): FastifyPluginAsyncZod {
  const { db, clock } = deps

  const write = async (request: FastifyRequest, reply: FastifyReply, id: string, input: CaseInput, replace: boolean) => {
    const commands = requestCommands(deps, request, reply)
    await changeCase(deps, callerOf(request), id, { input, replace }, commands.session)
    await commands.settle()
    return { error: false as const, message: 'Case Updated Successfully' }
  }

  return async (app) => {
    app.post('/api/cases/', { schema: { tags: TAGS, summary: 'Open a case (any member); its creator may then read, change and delete it', description: 'The account, contacts, teams, assignees, tags and parent must be live records of the caller\'s organization (400 naming the field otherwise). Its SLA targets follow its priority.', body: CaseBodySchema, response: { 200: Created, ...errors } } }, async (request, reply) => {
      const commands = requestCommands(deps, request, reply)
      const { id } = await createCase(deps, callerOf(request), inputOf(request.body), commands.session)
      await commands.settle()
      return { error: false as const, message: 'Case Created Successfully', id }
    })

    app.get('/api/cases/:id/', { schema: { tags: TAGS, summary: 'One case under cases_obj, with its comments, internal notes and attachments (admin, creator, assignee or watcher)', description: 'A merged duplicate answers where it went (`redirect_to`) instead, unless show_merged=true.', params: IdParams, querystring: ShowMerged, response: { 200: z.union([CaseDetail, MergedRedirect]), ...errors } } }, async (request) => {
      const identity = identityOf(request)
      const caller = callerOf(request)
      const viewer = viewerOfIdentity(identity)
      const redirect = request.query.show_merged === 'true' ? undefined : await mergedRedirect(db, caller, request.params.id)
      if (redirect) return redirect
      const row = await visibleCase(db, caller, request.params.id)
      const [[body], notes, definitions, mentions, mergedFrom, solutions] = await Promise.all([casesOf(deps, viewer, [row], clock()), caseNotesView(db, identity.orgId, row.id), activeCaseFields(deps, identity.orgId), mentionable(deps, viewer, row.created_by), mergedFromCases(db, identity.orgId, row.id), caseSolutionsView(db, identity.orgId, row.id)])
      return {
        cases_obj: body!,
        merged_from_cases: mergedFrom.map((m) => ({ ...m, merged_at: m.merged_at.toISOString() })),
        solutions,
        ...notes,
        contacts: body!.contacts,
        comment_permission: mayWriteCase({ createdBy: row.created_by, fields: row }, actorOfCaller(caller)),
        users_mention: mentions,
        custom_field_definitions: definitions.map(fieldBody),
        ...CASE_CHOICES,
      }
    })

    app.put('/api/cases/:id/', { schema: { tags: TAGS, summary: 'Replace a case (admin, creator or assignee)', description: 'Fields left out take their empty value and relation lists left out are cleared, except `account` (set on creation only) and `parent` (kept unless named).', params: IdParams, body: CaseBodySchema, response: { 200: Message, ...errors } } }, (request, reply) =>
      write(request, reply, request.params.id, inputOf(request.body), true),
    )

    app.patch('/api/cases/:id/', { schema: { tags: TAGS, summary: 'Change the named fields of a case (admin, creator or assignee)', description: 'Closing needs closed_on (in the body or already on the case); reopening clears it.', params: IdParams, body: CasePatch, response: { 200: Message, ...errors } } }, (request, reply) =>
      write(request, reply, request.params.id, inputOf(request.body), false),
    )

    app.delete('/api/cases/:id/', { schema: { tags: TAGS, summary: 'Delete a case (admin or its creator)', params: IdParams, response: { 200: Message, ...errors } } }, async (request, reply) => {
      const commands = requestCommands(deps, request, reply)
      await deleteCase(deps, callerOf(request), request.params.id, commands.session)
      await commands.settle()
      return { error: false as const, message: 'Case Deleted Successfully.' }
    })

    await app.register(caseListRoute(deps))
    await app.register(caseNoteRoutes(deps, files))
    await app.register(caseWatcherRoutes(deps))
    await app.register(caseSolutionRoutes(deps))
    await app.register(caseTreeRoutes(deps))
    await app.register(caseBoardRoutes(deps))
    await app.register(caseMergeRoutes(deps))
    await app.register(caseBulkRoutes(deps))
    await app.register(caseImportRoutes(deps))
  }
}

/** Whom the caller may @mention on a case, as the original lists them: every active member to an admin, the case's creator to anyone else. */
async function mentionable(deps: Deps, viewer: { orgId: string; isAdmin: boolean; profileId: string | null }, createdBy: string | null): Promise<{ user__email: string }[]> {
  const members = await activeMembers(deps.db, viewer.orgId)
  if (viewer.isAdmin) return members.map((m) => ({ user__email: m.email }))
  return members.filter((m) => m.id === createdBy && m.id !== viewer.profileId).map((m) => ({ user__email: m.email }))
}
