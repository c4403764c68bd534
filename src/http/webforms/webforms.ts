import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { createWebForm, updateWebForm } from '../../commands/webform/design-webform.ts'
import { releaseSubmission } from '../../commands/webform/release-submission.ts'
import { defaultFields, webFormDecider, webFormStream } from '../../commands/webform/webform.ts'
import type { FormDesign, WebFormCommand } from '../../commands/webform/webform.ts'
import type { Deps } from '../../deps.ts'
import { orNotFound } from '../../errors.ts'
import { listSubmissions, listWebForms, submissionAnalytics, submissionOf, webFormOf } from '../../projections/webform/webforms.ts'
import { requireAdmin } from '../kernel/auth.ts'
import { callerOf, requestCommands, settle } from '../kernel/commands.ts'
import { ErrorBody, IdParams, Message, PageQuery, authErrors, iso, pageOf } from '../kernel/schemas/common.ts'
import { Analytics, CreateBody, DEFAULT_SUCCESS_MESSAGE, UpdateBody, WebForm, WebFormSubmission, submissionBody, webFormBody } from './schemas.ts'

const TAGS = ['webforms']
const errors = { ...authErrors, 404: ErrorBody }
const ANALYTICS_DAYS = 30

const ListQuery = PageQuery.extend({ is_published: z.enum(['true', 'false']).optional().describe('Only published (true) or unpublished (false) forms') })
const SubmissionParams = IdParams.extend({ submission_id: z.uuid() })
const SubmissionQuery = PageQuery.extend({ status: z.enum(['accepted', 'quarantined']).optional() })

/**
 * Web forms, admins only (docs/web-forms.md): the design, the on/off switch, and what came in.
 * Submissions hold visitors' personal data, so members do not read them; the public side is
 * public-forms.ts.
 */
export function webFormRoutes(deps: Deps): FastifyPluginAsyncZod {
  const { db, clock } = deps
  return async (app) => {
    const found = async (orgId: string, id: string) => webFormBody(await orNotFound(webFormOf(db, orgId, id)))

    app.get('/api/webforms/', { schema: { tags: TAGS, summary: 'Web forms of the organization, oldest first (admins)', querystring: ListQuery, response: { 200: pageOf(WebForm), ...authErrors } } }, async (request) => {
      const { orgId } = requireAdmin(request)
      const { limit, offset, is_published } = request.query
      const { count, rows } = await listWebForms(db, orgId, { limit, offset }, is_published === undefined ? undefined : is_published === 'true')
      return { count, offset, limit, results: rows.map(webFormBody) }
    })

    app.post(
      '/api/webforms/',
      { schema: { tags: TAGS, summary: 'Design a web form (admins); it starts unpublished', description: "Left out: a lead form; a contact form's fields (first name, last name, email, phone, message; for a case: first name, email, subject, message), a thank-you message, any origin, no assignee, no consent box. Each field may fill only a field of the target (400 on fields otherwise). The record needs a name, so one required field must fill a lead's first_name or last_name, a contact's first_name, a case's name (its subject).", body: CreateBody, response: { 201: WebForm, 400: ErrorBody, ...authErrors } } },
      async (request, reply) => {
        const { orgId } = requireAdmin(request)
        const body = request.body
        const design: FormDesign = {
          target: body.target,
          name: body.name,
          description: body.description ?? '',
          fields: body.fields ?? [...defaultFields(body.target)],
          success_message: body.success_message ?? DEFAULT_SUCCESS_MESSAGE,
          allowed_origins: body.allowed_origins ?? [],
          assigned_to: body.assigned_to ?? [],
          consent: body.consent ?? null,
        }
        const { formId, position } = await createWebForm(deps, callerOf(request), design)
        await settle(deps, reply, position)
        return reply.code(201).send(await found(orgId, formId))
      },
    )

    app.get('/api/webforms/:id/', { schema: { tags: TAGS, summary: 'One web form (admins)', params: IdParams, response: { 200: WebForm, ...errors } } }, async (request) => found(requireAdmin(request).orgId, request.params.id))

    app.put(
      '/api/webforms/:id/',
      { schema: { tags: TAGS, summary: "Change a web form's design (admins)", description: 'Only what is given changes; `fields` replaces the whole list. A published form serves the new design at once. A changed consent wording gets a new version.', params: IdParams, body: UpdateBody, response: { 200: WebForm, 400: ErrorBody, ...errors } } },
      async (request, reply) => {
        const { orgId } = requireAdmin(request)
        const { position } = await updateWebForm(deps, callerOf(request), request.params.id, request.body)
        await settle(deps, reply, position)
        return found(orgId, request.params.id)
      },
    )

    /** One command on the form's own stream: the decider answers 404 for another organization's form. */
    const switchRoute = (path: string, summary: string, command: (orgId: string, at: string) => WebFormCommand) =>
      app.post(path, { schema: { tags: TAGS, summary, description: 'Doing it twice changes nothing the second time.', params: IdParams, response: { 200: WebForm, ...errors } } }, async (request, reply) => {
        const { orgId } = requireAdmin(request)
        const commands = requestCommands(deps, request, reply)
        await commands.run(webFormDecider, webFormStream(request.params.id), command(orgId, clock().toISOString()))
        await commands.settle()
        return found(orgId, request.params.id)
      })
    switchRoute('/api/webforms/:id/publish/', 'Switch a web form on (admins): its public address serves and accepts it', (orgId, at) => ({ type: 'PublishWebForm', orgId, at }))
    switchRoute('/api/webforms/:id/unpublish/', 'Switch a web form off (admins): its public address answers 404', (orgId, at) => ({ type: 'UnpublishWebForm', orgId, at }))

    app.delete('/api/webforms/:id/', { schema: { tags: TAGS, summary: 'Delete a web form (admins): its address stops answering; its submissions and their leads stay', params: IdParams, response: { 200: Message, ...errors } } }, async (request, reply) => {
      const { orgId } = requireAdmin(request)
      await orNotFound(webFormOf(db, orgId, request.params.id))
      const commands = requestCommands(deps, request, reply)
      await commands.run(webFormDecider, webFormStream(request.params.id), { type: 'DeleteWebForm', orgId, at: clock().toISOString() })
      await commands.settle()
      return { error: false as const, message: 'Web form deleted' }
    })

    app.get(
      '/api/webforms/:id/submissions/',
      { schema: { tags: TAGS, summary: "A web form's submissions, newest first (admins): the answers, the lead, the consent recorded", params: IdParams, querystring: SubmissionQuery, response: { 200: pageOf(WebFormSubmission), ...errors } } },
      async (request) => {
        const { orgId } = requireAdmin(request)
        const form = await orNotFound(webFormOf(db, orgId, request.params.id))
        const { limit, offset, status } = request.query
        const { count, rows } = await listSubmissions(db, orgId, form.id, { limit, offset }, status)
        return { count, offset, limit, results: rows.map(submissionBody) }
      },
    )

    app.post(
      '/api/webforms/:id/submissions/:submission_id/release/',
      {
        schema: {
          tags: TAGS,
          summary: "Release a quarantined submission (admins): its answers make the form's record now",
          description: 'Through the same use case as a submission, from the answers as kept and the consent the visitor gave: 400 naming each answer the form\'s fields no longer accept, and for a submission that was not quarantined. Releasing again answers the same record.',
          params: SubmissionParams,
          response: { 200: WebFormSubmission, 400: ErrorBody, ...errors },
        },
      },
      async (request, reply) => {
        const { orgId } = requireAdmin(request)
        const { id, submission_id } = request.params
        const { position } = await releaseSubmission(deps, callerOf(request), id, submission_id)
        await settle(deps, reply, position)
        return submissionBody(await orNotFound(submissionOf(db, orgId, id, submission_id)))
      },
    )

    app.get('/api/webforms/:id/analytics/', { schema: { tags: TAGS, summary: "A web form's submission counts: totals and the last 30 days (admins)", params: IdParams, response: { 200: Analytics, ...errors } } }, async (request) => {
      const { orgId } = requireAdmin(request)
      const form = await orNotFound(webFormOf(db, orgId, request.params.id))
      const { totals, daily } = await submissionAnalytics(db, orgId, form.id, clock(), ANALYTICS_DAYS)
      return { submissions: totals.accepted, leads_created: totals.leads_created, leads_matched: totals.matched, quarantined: totals.quarantined, last_submission_at: iso(totals.last_submission_at), daily }
    })
  }
}
