import type { FastifyReply, FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { leadDecider, leadStreams } from '../../commands/lead/lead.ts'
import { withReleasedName } from '../../commands/unique-name.ts'
import { orNotFound } from '../../errors.ts'
import type { FileStore } from '../../files/file-store.ts'
import { isAdmin } from '../../identity/identity.ts'
import { viewerOfIdentity } from '../../visibility/policy.ts'
import { activeMembers, isSuperuser } from '../../identity/users.ts'
import { definitionsOf } from '../../projections/custom-field/custom-fields.ts'
import { leadConditions, leadOf, leadSection, leadTotals } from '../../projections/lead/leads.ts'
import type { LeadRow } from '../../projections/lead/leads.ts'
import type { Deps } from '../../deps.ts'
import { actorOf, callerOf } from '../kernel/commands.ts'
import { requestCommands } from '../kernel/commands.ts'
import type { RequestCommands } from '../kernel/commands.ts'
import { leadFilterOf } from './lead-filter.ts'
import { fieldBody } from '../custom-fields/schemas.ts'
import { profileBody } from '../identity/schemas.ts'
import { LEAD_EMAIL_SCOPE, createLead } from '../../commands/lead/create-lead.ts'
import { splitBody } from './lead-body.ts'
import type { LeadBodyIn } from './lead-body.ts'
import { leadNotesView, leadsOf } from './lead-views.ts'
import { identityOf } from '../kernel/auth.ts'
import type { UploadedFile } from '../kernel/bodies.ts'
import { profileRefs } from '../kernel/relations.ts'
import { ErrorBody, IdParams, Message, authErrors, nextOffset } from '../kernel/schemas/common.ts'
import { LeadBody, LeadCreated, LeadDetail, LeadList, LeadListQuery, LeadPatch, LeadReplaceBody, LeadUpdated } from './schemas.ts'
import { adoptUpload } from '../kernel/uploads.ts'
import { leadNoteRoutes } from './lead-notes.ts'
import { changeLead, visibleLead } from '../../commands/lead/change-lead.ts'
import type { CommandRunner } from '../../commands/command-runner.ts'

const TAGS = ['leads']
const errors = { 400: ErrorBody, ...authErrors, 404: ErrorBody, 409: ErrorBody } as const

/** visibleLead for the request's caller. */
export const visibleLeadOf = (deps: Deps, request: FastifyRequest, id: string): Promise<LeadRow> => visibleLead(deps.db, callerOf(request), id)

/** Runs `action`; when it fails after appending (a conversion undone), the read models still catch up before the error answers. */
async function settledEvenIfRefused<T>(commands: RequestCommands, action: () => Promise<T>): Promise<T> {
  try {
    return await action()
  } catch (error) {
    await commands.settle()
    throw error
  }
}

/** Stores a multipart `lead_attachment` and records it on the lead. */
export const attachToLead = (deps: Deps, files: FileStore, commands: RequestCommands, request: FastifyRequest, leadId: string, upload: UploadedFile) =>
  adoptUpload(files, identityOf(request).orgId, upload, (attachment) =>
    commands.run(leadDecider, leadStreams.stream(leadId), { type: 'AddAttachment', orgId: identityOf(request).orgId, actor: actorOf(request), attachment, at: deps.clock().toISOString() }),
  )

/**
 * Leads (§4.1 lead filters, §4.8; where-the-spec-is-silent.md, Leads): list in an open and a closed
 * section with totals, create (JSON, form or multipart with `lead_attachment`), detail, PUT, PATCH
 * (status `converted` converts: see commands/lead/convert-lead.ts), DELETE; comments and attachments in
 * lead-notes.ts. Access as for deals: admin, creator or assignee; DELETE admin, superuser or creator.
 */
export function leadRoutes(deps: Deps, files: FileStore): FastifyPluginAsyncZod {
  const { db, clock } = deps

  const write = async (request: FastifyRequest, reply: FastifyReply, id: string, body: LeadBodyIn, replace: boolean) => {
    const { input, upload } = splitBody(body)
    const commands = requestCommands(deps, request, reply)
    const { converted } = await settledEvenIfRefused(commands, () => changeLead(deps, callerOf(request), id, { input, replace }, commands.session))
    if (upload) await attachToLead(deps, files, commands, request, id, upload)
    await commands.settle()
    return { error: false as const, message: converted.account_id ? 'Lead converted' : 'Lead updated', ...converted }
  }

  return async (app) => {
    app.get('/api/leads/', { schema: { tags: TAGS, summary: 'Leads in an open and a closed section, with totals over the whole filtered set', description: 'Each section is paged by the same limit and offset, newest first. A non-admin sees only leads they created or are assigned to, in sections and totals alike. Unknown or malformed filter values match nothing; blank values are no filter.', querystring: LeadListQuery, response: { 200: LeadList, ...authErrors } } }, async (request) => {
      const identity = identityOf(request)
      const query = request.query
      const { limit, offset } = query
      const definitions = await definitionsOf(db, identity.orgId, 'leads', { activeOnly: true })
      const conditions = leadConditions(viewerOfIdentity(identity), leadFilterOf(query, definitions))
      const now = clock()
      const [open, closed, totals] = await Promise.all([leadSection(db, conditions, false, { limit, offset }), leadSection(db, conditions, true, { limit, offset }), leadTotals(db, conditions, now)])
      const [openLeads, closeLeads] = await Promise.all([leadsOf(db, identity.orgId, open.rows, now), leadsOf(db, identity.orgId, closed.rows, now)])
      return {
        open_leads: { leads_count: open.count, open_leads: openLeads, offset: nextOffset(offset, openLeads.length, open.count) },
        close_leads: { leads_count: closed.count, close_leads: closeLeads, offset: nextOffset(offset, closeLeads.length, closed.count) },
        totals,
      }
    })

    app.post('/api/leads/', { schema: { tags: TAGS, summary: 'Create a lead (JSON, form or multipart with an optional lead_attachment)', description: 'Status `converted` creates it converted: answered with account_id, contact_id and opportunity_id.', body: LeadBody, response: { 200: LeadCreated, ...errors } } }, async (request, reply) => {
      const { input, upload } = splitBody(request.body)
      const commands = requestCommands(deps, request, reply)
      const { id, converted } = await settledEvenIfRefused(commands, () => createLead(deps, callerOf(request), input, { session: commands.session }))
      if (upload) await attachToLead(deps, files, commands, request, id, upload)
      await commands.settle()
      return { error: false as const, message: 'Lead created', id, ...converted }
    })

    app.get('/api/leads/:id/', { schema: { tags: TAGS, summary: 'One lead, nested under lead_obj, with its notes (admin, creator or assignee)', params: IdParams, response: { 200: LeadDetail, ...errors } } }, async (request) => {
      const identity = identityOf(request)
      const row = await visibleLeadOf(deps, request, request.params.id)
      const [[lead], notes, members, assignees, definitions] = await Promise.all([
        leadsOf(db, identity.orgId, [row], clock()),
        leadNotesView(db, identity.orgId, row.id),
        activeMembers(db, identity.orgId),
        profileRefs(db, identity.orgId, row.assigned_to),
        definitionsOf(db, identity.orgId, 'leads', { activeOnly: true }),
      ])
      const creatorEmail = members.find((m) => m.id === row.created_by)?.email
      return {
        lead_obj: lead!,
        ...notes,
        users_mention: isAdmin(identity) ? members.map((m) => ({ user__email: m.email })) : creatorEmail ? [{ user__email: creatorEmail }] : [],
        assigned_data: assignees.map((p) => ({ id: p.id, name: p.email })),
        // As the original: every active member for an admin, the admins for anyone else.
        users: members.filter((m) => isAdmin(identity) || m.role === 'ADMIN').map(profileBody),
        custom_field_definitions: definitions.map(fieldBody),
      }
    })

    app.put('/api/leads/:id/', { schema: { tags: TAGS, summary: 'Replace a lead (admin, creator or assignee)', description: 'Fields left out take their empty value and relation lists left out are cleared; status left out is kept. Status `converted` converts (see POST).', params: IdParams, body: LeadReplaceBody, response: { 200: LeadUpdated, ...errors } } }, (request, reply) =>
      write(request, reply, request.params.id, request.body, true),
    )

    app.patch('/api/leads/:id/', { schema: { tags: TAGS, summary: 'Change the named fields of a lead; `{"status": "converted"}` converts it (admin, creator or assignee)', description: 'Conversion (§3.3) needs an email, creates the account, contact and deal the lead describes (linked back: the lead\'s account and contacts, the deal\'s account and contacts) and answers their ids. It cannot be undone: naming a status on a converted lead is 400 on status.', params: IdParams, body: LeadPatch, response: { 200: LeadUpdated, ...errors } } }, (request, reply) =>
      write(request, reply, request.params.id, request.body, false),
    )

    app.delete('/api/leads/:id/', { schema: { tags: TAGS, summary: 'Delete a lead (admin, superuser or its creator); its email becomes free', description: 'Answers 200 `{"error": false, "message"}`. What a conversion created stays.', params: IdParams, response: { 200: Message, ...errors } } }, async (request, reply) => {
      const identity = identityOf(request)
      const current = await orNotFound(leadOf(db, identity.orgId, request.params.id))
      const actor = { ...actorOf(request), isSuperuser: await isSuperuser(db, identity.userId) }
      const commands = requestCommands(deps, request, reply)
      const remove = (run: CommandRunner = commands.run) => run(leadDecider, leadStreams.stream(current.id), { type: 'DeleteLead', orgId: identity.orgId, actor, at: clock().toISOString() })
      await (current.email === null ? remove() : withReleasedName(commands.run, { scope: LEAD_EMAIL_SCOPE, orgId: identity.orgId, ownerId: current.id, name: current.email }, remove))
      await commands.settle()
      return { error: false as const, message: 'Lead deleted' }
    })

    await app.register(leadNoteRoutes(deps, files))
  }
}
