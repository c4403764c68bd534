import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { OPEN_STATUSES } from '../../commands/case/fields.ts'
import { openPortalCase, portalCase, portalViewer, replyToPortalCase } from '../../commands/portal/portal-cases.ts'
import type { Caller } from '../../commands/caller.ts'
import type { Deps } from '../../deps.ts'
import { CASE_NOTES, caseConditions, internalNoteIds, listCases } from '../../projections/case/queries.ts'
import { notesView } from '../kernel/note-views.ts'
import { settle } from '../kernel/commands.ts'
import { CommentBody } from '../kernel/schemas/notes.ts'
import { IdParams, Message, PageQuery, pageOf } from '../kernel/schemas/common.ts'
import { signedIn } from './portal-caller.ts'
import { PortalCase, PortalCaseBody, PortalCaseDetail, portalCaseView, portalErrors } from './schemas.ts'
import type { PortalComment } from './schemas.ts'

const TAGS = ['portal']
const config = { auth: 'portal' as const }
const PortalCaseAnswer = Message.extend({ case: PortalCaseDetail })

/**
 * The customer's cases (docs/portal.md): those that name the signed-in contact among their
 * contacts, by the visibility policy's `contact` rule (the cases module's own list query and
 * check, given a contact as the viewer). Another contact's or organization's case is a 404.
 */
export function portalCaseRoutes(deps: Deps): FastifyPluginAsyncZod {
  const { db } = deps

  /** The case as the customer sees it: its public comments only, the team's internal notes left out. */
  async function detail(caller: Caller, id: string): Promise<z.infer<typeof PortalCaseDetail>> {
    const row = await portalCase(deps, caller, id)
    const [notes, internal] = await Promise.all([notesView(db, caller.orgId, CASE_NOTES, 'cases', id), internalNoteIds(db, id)])
    const comments = notes.comments.filter((c) => !internal.has(c.id)).map((c): z.infer<typeof PortalComment> => {
      const by = c.commented_by
      return { id: c.id, comment: c.comment, from: by ? 'support' : 'customer', author: by ? by.first_name || 'Support' : 'You', created_at: c.commented_on }
    })
    return { ...portalCaseView(row), comments: comments.sort((a, b) => a.created_at.localeCompare(b.created_at)) }
  }

  return async (app) => {
    app.get('/api/portal/cases/', {
      config,
      schema: {
        tags: TAGS,
        summary: "The signed-in customer's cases, newest first",
        querystring: PageQuery.extend({ status: z.enum(['open', 'closed']).optional().describe('`open`: New, Assigned or Pending; `closed`: the others') }),
        response: { 200: pageOf(PortalCase), ...portalErrors },
      },
    }, async (request) => {
      const { caller } = await signedIn(deps, request)
      const { limit, offset, status } = request.query
      const conditions = caseConditions(portalViewer(caller), status === undefined ? {} : { status: status === 'open' ? [...OPEN_STATUSES] : ['Closed', 'Rejected', 'Duplicate'] })
      const { count, rows } = await listCases(db, conditions, { limit, offset })
      return { count, offset, limit, results: rows.map(portalCaseView) }
    })

    app.post('/api/portal/cases/', {
      config,
      schema: { tags: TAGS, summary: 'Open a case as the signed-in customer (its contact; their account its account)', body: PortalCaseBody, response: { 201: PortalCaseAnswer, ...portalErrors } },
    }, async (request, reply) => {
      const { caller, contact } = await signedIn(deps, request)
      const { id, position } = await openPortalCase(deps, caller, contact, request.body)
      await settle(deps, reply, position)
      reply.code(201)
      return { error: false as const, message: 'Case opened', case: await detail(caller, id) }
    })

    app.get('/api/portal/cases/:id/', {
      config,
      schema: { tags: TAGS, summary: "One of the signed-in customer's cases, with its public comments", params: IdParams, response: { 200: PortalCaseDetail, ...portalErrors } },
    }, async (request) => {
      const { caller } = await signedIn(deps, request)
      return detail(caller, request.params.id)
    })

    app.post('/api/portal/cases/:id/comment/', {
      config,
      schema: {
        tags: TAGS,
        summary: "Reply to one of the signed-in customer's cases (a public comment)",
        description: 'A case waiting on the customer (Pending) goes back to the team (Assigned, or New when nobody holds it), which resumes its SLA clock.',
        params: IdParams,
        body: CommentBody,
        response: { 201: PortalCaseAnswer, ...portalErrors },
      },
    }, async (request, reply) => {
      const { caller } = await signedIn(deps, request)
      const { position } = await replyToPortalCase(deps, caller, request.params.id, request.body.comment)
      await settle(deps, reply, position)
      reply.code(201)
      return { error: false as const, message: 'Comment added', case: await detail(caller, request.params.id) }
    })
  }
}
