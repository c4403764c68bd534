import type { FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import type { z } from 'zod'
import { changeMailbox, createMailbox, deleteMailbox } from '../../commands/case-mail/mailboxes.ts'
import type { MailboxInput } from '../../commands/case-mail/mailboxes.ts'
import { mailboxesWithSecret } from '../../commands/case-mail/mailbox-secrets.ts'
import type { Deps } from '../../deps.ts'
import { NotFoundError } from '../../errors.ts'
import { membersByIds } from '../../identity/users.ts'
import { mailboxFigures, mailboxOf, mailboxesOf } from '../../projections/case-mail/queries.ts'
import type { CaseMailboxRow, MailboxFigures } from '../../projections/case-mail/queries.ts'
import { identityOf } from '../kernel/auth.ts'
import { callerOf, settle } from '../kernel/commands.ts'
import { ErrorBody, IdParams, Message, authErrors, iso } from '../kernel/schemas/common.ts'
import { profileRefOf } from '../kernel/relations.ts'
import { Mailbox, MailboxCreate, MailboxList, MailboxUpdate } from './schemas.ts'

const TAGS = ['cases']
const errors = { 400: ErrorBody, ...authErrors, 404: ErrorBody } as const

/** Rows as the original's InboundMailboxSerializer answers them: the secret never, whether one is set to admins only. */
async function mailboxViews(deps: Deps, request: FastifyRequest, rows: readonly CaseMailboxRow[], figures?: Map<string, MailboxFigures>): Promise<z.infer<typeof Mailbox>[]> {
  const identity = identityOf(request)
  const assignees = rows.flatMap((row) => (row.default_assignee ? [row.default_assignee] : []))
  const [members, secrets] = await Promise.all([membersByIds(deps.db, identity.orgId, assignees), mailboxesWithSecret(deps.db, rows.map((row) => row.id))])
  const people = new Map(members.map((member) => [member.id, { ...profileRefOf(member), user_details: { ...profileRefOf(member).user_details, name: `${member.first_name} ${member.last_name}`.trim() || member.email } }]))
  return rows.map((row) => ({
    id: row.id,
    address: row.address,
    provider: row.provider,
    ...(identity.role === 'ADMIN' && { has_webhook_secret: secrets.has(row.id) }),
    has_topic_arn: secrets.has(row.id),
    default_priority: row.default_priority,
    default_case_type: row.default_case_type,
    default_assignee: row.default_assignee === null ? null : (people.get(row.default_assignee) ?? null),
    is_active: row.is_active,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    ...(figures && { cases_last_30d: figures.get(row.id)?.cases_last_30d ?? 0, last_received_at: iso(figures.get(row.id)?.last_received_at ?? null) }),
  }))
}

const inputOf = ({ default_assignee_id, webhook_secret, ...fields }: z.infer<typeof MailboxUpdate>): MailboxInput => ({ ...fields, ...(default_assignee_id !== undefined && { default_assignee: default_assignee_id }), ...(webhook_secret !== undefined && { webhook_secret }) })

/** Inbound mailboxes (the original's cases/inbound_views.py): every member reads them, admins change them. */
export function mailboxRoutes(deps: Deps): FastifyPluginAsyncZod {
  const { db, clock } = deps
  const one = async (request: FastifyRequest, id: string) => {
    const row = await mailboxOf(db, identityOf(request).orgId, id)
    if (!row) throw new NotFoundError('Mailbox not found')
    return (await mailboxViews(deps, request, [row]))[0]!
  }
  return async (app) => {
    app.get('/api/cases/mailboxes/', { schema: { tags: TAGS, summary: "The organization's inbound mailboxes by address, each with the cases its mail opened in 30 days and its newest message; totals", response: { 200: MailboxList, ...authErrors } } }, async (request) => {
      const { orgId } = identityOf(request)
      const [rows, figures] = await Promise.all([mailboxesOf(db, orgId), mailboxFigures(db, orgId, clock())])
      const mailboxes = await mailboxViews(deps, request, rows, figures.byMailbox)
      return { mailboxes, totals: { count: rows.length, active: rows.filter((row) => row.is_active).length, cases_last_30d: figures.total } }
    })
    app.post('/api/cases/mailboxes/', { schema: { tags: TAGS, summary: 'Add an inbound mailbox (admins)', description: 'Mail delivered to POST /api/cases/inbound/{mailbox_id}/, signed with its `webhook_secret`, becomes cases with these defaults. The address is unique in the organization.', body: MailboxCreate, response: { 201: Mailbox, ...errors } } }, async (request, reply) => {
      const { webhook_secret, default_assignee_id, ...fields } = request.body
      const { id, position } = await createMailbox(deps, callerOf(request), { ...fields, default_assignee: default_assignee_id }, webhook_secret)
      await settle(deps, reply, position)
      return reply.code(201).send(await one(request, id))
    })
    app.get('/api/cases/mailboxes/:id/', { schema: { tags: TAGS, summary: 'An inbound mailbox', params: IdParams, response: { 200: Mailbox, ...errors } } }, (request) => one(request, request.params.id))
    app.put('/api/cases/mailboxes/:id/', { schema: { tags: TAGS, summary: 'Change an inbound mailbox (admins); fields left out stay', params: IdParams, body: MailboxUpdate, response: { 200: Mailbox, ...errors } } }, async (request, reply) => {
      const { position } = await changeMailbox(deps, callerOf(request), request.params.id, inputOf(request.body))
      await settle(deps, reply, position)
      return one(request, request.params.id)
    })
    app.delete('/api/cases/mailboxes/:id/', { schema: { tags: TAGS, summary: 'Delete an inbound mailbox (admins): its address is freed and its secret destroyed, so deliveries signed with it are refused', params: IdParams, response: { 200: Message, ...errors } } }, async (request, reply) => {
      const { position } = await deleteMailbox(deps, callerOf(request), request.params.id)
      await settle(deps, reply, position)
      return { error: false as const, message: 'Mailbox deleted' }
    })
  }
}
