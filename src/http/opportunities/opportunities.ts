import type { FastifyReply, FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { currencyChoices, leadSourceChoices } from '../../commands/opportunity/enums.ts'
import { opportunityDecider, opportunityStreams } from '../../commands/opportunity/opportunity.ts'
import type { DealInput } from '../../commands/opportunity/opportunity.ts'
import { placeBetween } from '../../commands/opportunity/placement.ts'
import { withReleasedName, withRenamedClaim } from '../../commands/unique-name.ts'
import { ValidationError, orNotFound } from '../../errors.ts'
import { isAdmin } from '../../identity/identity.ts'
import { lookupsOf } from '../../lookups/lookups.ts'
import { activeMembers, isSuperuser } from '../../identity/users.ts'
import { contactRef, profileRefOf } from '../kernel/relations.ts'
import { liveContacts } from '../../projections/contact/contacts.ts'
import { cardOf, neighbourOrder, opportunityOf } from '../../projections/opportunity/opportunities.ts'
import type { OpportunityView } from '../../projections/opportunity/opportunities.ts'
import { pipelineOf } from '../../projections/pipeline/pipelines.ts'
import type { Stage } from '../../commands/pipeline/stage-rules.ts'
import { movedRow } from './moved-card.ts'
import { dateIn } from '../dashboard/dashboard-views.ts'
import type { FileStore } from '../../files/file-store.ts'
import type { Deps } from '../../deps.ts'
import { actorOf, callerOf } from '../kernel/commands.ts'
import { visibleDeal } from '../../commands/opportunity/visible-opportunity.ts'
import { requestCommands } from '../kernel/commands.ts'
import { opportunityAsOf } from './opportunity-history-views.ts'
import { DEAL_NAME_SCOPE, checkDealRelations, createDeal, withPipeline } from '../../commands/opportunity/create-opportunity.ts'
import { cardsOf, notesOf, opportunitiesOf } from './opportunity-views.ts'
import { identityOf } from '../kernel/auth.ts'
import type { UploadedFile } from '../kernel/bodies.ts'
import { fieldBody } from '../custom-fields/schemas.ts'
import { attachUpload } from './opportunity-notes.ts'
import { ErrorBody, IdParams, Message, authErrors } from '../kernel/schemas/common.ts'
import { Created } from '../kernel/schemas/records.ts'
import { AsOfQuery } from '../kernel/schemas/history.ts'
import { MoveAnswer, MoveBody, OpportunityBody, OpportunityDetail, OpportunityPatch } from './schemas.ts'
import type { CommandRunner } from '../../commands/command-runner.ts'

const TAGS = ['opportunities']
const errors = { 400: ErrorBody, ...authErrors, 404: ErrorBody } as const
const writeErrors = { ...errors, 409: ErrorBody, 412: ErrorBody } as const
/** A deal body as the routes receive it: the writable fields, and a file when multipart. */
type DealBody = Omit<DealInput, 'custom'> & { opportunity_attachment?: UploadedFile; custom_fields?: unknown; [key: string]: unknown }

const WRITABLE = Object.keys(OpportunityBody.shape).filter((key) => key !== 'opportunity_attachment' && key !== 'custom_fields')

/** A validated body as the decider's input (the writable fields only, custom values apart) and its file. */
function splitBody(body: DealBody): { input: DealInput; upload: UploadedFile | undefined } {
  const input = Object.fromEntries(Object.entries(body).filter(([key, value]) => WRITABLE.includes(key) && value !== undefined)) as DealInput
  return { input: { ...input, custom: { cfFields: body, customFields: body.custom_fields } }, upload: body.opportunity_attachment }
}
const IfMatch = z.object({ 'if-match': z.string().optional().describe('The ETag of the detail last read: the write is refused with 412 if the deal changed since') })

/** `"7"`, `W/"7"` or `7`: the deal revision an If-Match names; anything else matches no revision. */
function ifRevision(header: string | undefined): bigint | undefined {
  if (header === undefined) return undefined
  const match = /^(?:W\/)?"?(\d{1,19})"?$/.exec(header.trim())
  return match ? BigInt(match[1]!) : -1n
}


/**
 * Deals (§4.2, §4.4, §4.7): create, detail, PUT, PATCH, board move and delete. Each write is one
 * command on the deal's stream, decided against its pipeline as folded from the pipeline's stream
 * and appended only while that stream is unchanged (a guarded append): a deal can never enter a
 * stage whose removal is counting its deals. Names are unique per organization (name claims).
 */
export function opportunityRoutes(deps: Deps, files: FileStore): FastifyPluginAsyncZod {
  const { db, store, clock } = deps
  const lookups = lookupsOf(deps)

  const visible = (request: FastifyRequest, id: string) => visibleDeal(db, callerOf(request), id)

  // Relations must be records of the caller's organization; ids the deal already holds may stay.

  const update = async (request: FastifyRequest, reply: FastifyReply, id: string, ifMatch: string | undefined, body: DealBody, replace: boolean) => {
    const { input, upload } = splitBody(body)
    const { orgId } = identityOf(request)
    const current = await visible(request, id)
    await checkDealRelations(db, orgId, input, current)
    const [org, customFields] = await Promise.all([lookups.organization(orgId), lookups.customFields(orgId, 'opportunities')])
    const commands = requestCommands(deps, request, reply)
    const prepare = () =>
      withPipeline(store, input.pipeline ?? current.pipeline_id, (pipeline) => ({ type: 'UpdateOpportunity' as const, orgId, actor: actorOf(request), at: clock().toISOString(), defaultCurrency: org.default_currency, customFields, pipeline, input, replace }))
    const claim = { scope: DEAL_NAME_SCOPE, orgId, ownerId: current.id, name: input.name ?? current.name, previousName: current.name, field: 'name' }
    await withRenamedClaim(commands.run, claim, (run) => run(opportunityDecider, opportunityStreams.stream(current.id), prepare, { ifRevision: ifRevision(ifMatch) }))
    if (upload) await attachUpload(commands.run, files, { orgId, id: current.id }, actorOf(request), upload, clock().toISOString())
    await commands.settle()
    return { error: false as const, message: 'Opportunity updated' }
  }

  /** Where a moved card goes (rules in where-the-spec-is-silent.md): kanban_order, else next to above_id/below_id, else the column's end. */
  const placement = async (orgId: string, deal: OpportunityView, body: z.infer<typeof MoveBody>, stages: readonly Stage[]): Promise<number | null> => {
    if (body.kanban_order !== undefined) return body.kanban_order
    const stage = stages.find((s) => s.code === body.column_id)
    if (!stage) return null
    const neighbour = async (field: 'above_id' | 'below_id', id: string) => {
      const card = await cardOf(db, orgId, id)
      if (!card || card.stage_id !== stage.id) throw new ValidationError({ [field]: ['Expected a card of the target column.'] })
      return card.kanban_order
    }
    if (body.above_id) {
      const above = await neighbour('above_id', body.above_id)
      return placeBetween(above, await neighbourOrder(db, stage.id, above, 'next', deal.id))
    }
    if (body.below_id) {
      const below = await neighbour('below_id', body.below_id)
      return placeBetween(await neighbourOrder(db, stage.id, below, 'previous', deal.id), below)
    }
    return stage.id === deal.stage_id ? null : placeBetween(await neighbourOrder(db, stage.id, null, 'previous', deal.id), null)
  }

  return async (app) => {
    app.post('/api/opportunities/', { schema: { tags: TAGS, summary: 'Create a deal', description: 'Fields of §2.1; output-only fields are ignored. Pipeline defaults to the default pipeline, stage to its first open stage.', body: OpportunityBody, response: { 200: Created, ...writeErrors } } }, async (request, reply) => {
      const { orgId } = identityOf(request)
      const { input, upload } = splitBody(request.body)
      const commands = requestCommands(deps, request, reply)
      const { id } = await createDeal(deps, callerOf(request), { input }, commands.session)
      if (upload) await attachUpload(commands.run, files, { orgId, id }, actorOf(request), upload, clock().toISOString())
      await commands.settle()
      return { error: false as const, message: 'Opportunity created', id }
    })

    const detailDescription =
      "Answers an `ETag` of the deal's current revision, for `If-Match` on PUT, PATCH and move. `?as_of=<ISO instant>` answers `opportunity_obj` as it stood then, folded from its events (404 before it existed; access is checked on the deal as it is now; comments, attachments and choices stay current)."
    app.get('/api/opportunities/:id/', { schema: { tags: TAGS, summary: 'One deal, nested under opportunity_obj, with what its form needs', description: detailDescription, params: IdParams, querystring: AsOfQuery, response: { 200: OpportunityDetail, ...errors } } }, async (request, reply) => {
      const identity = identityOf(request)
      const current = await visible(request, request.params.id)
      const asOf = request.query.as_of
      const row = asOf ? await orNotFound(opportunityAsOf(deps, identity.orgId, current.id, asOf)) : current
      const now = asOf ?? clock()
      const [org, pipeline, contacts, members, notes, definitions] = await Promise.all([
        lookups.organization(identity.orgId),
        pipelineOf(db, identity.orgId, row.pipeline_id),
        liveContacts(db, identity.orgId),
        activeMembers(db, identity.orgId),
        notesOf(db, identity.orgId, row.id),
        lookups.customFields(identity.orgId, 'opportunities').then((all) => all.filter((d) => d.is_active)),
      ])
      const [opportunity] = await opportunitiesOf(deps, { id: org.id, name: org.name }, [row], now)
      const admin = isAdmin(identity)
      const creator = identity.profileId !== null && row.created_by === identity.profileId
      const creatorEmail = members.find((m) => m.id === row.created_by)?.email
      reply.header('etag', `"${current.revision}"`)
      return {
        opportunity_obj: opportunity!,
        ...notes,
        contacts: contacts.map(contactRef),
        users: members.map(profileRefOf),
        stage: (pipeline?.stages ?? []).map((s) => [s.code, s.label] as [string, string]),
        lead_source: leadSourceChoices(),
        currency: currencyChoices(),
        comment_permission: admin || creator,
        users_mention: admin ? members.map((m) => ({ user__email: m.email })) : creatorEmail ? [{ user__email: creatorEmail }] : [],
        custom_field_definitions: definitions.map(fieldBody),
      }
    })

    const replaceDescription = 'Every writable field is replaced: fields left out take their empty value and relation lists left out are cleared; pipeline and stage left out keep their values.'
    app.put('/api/opportunities/:id/', { schema: { tags: TAGS, summary: 'Replace a deal (admin, creator or assignee)', description: replaceDescription, params: IdParams, headers: IfMatch, body: OpportunityBody, response: { 200: Message, ...writeErrors } } }, (request, reply) =>
      update(request, reply, request.params.id, request.headers['if-match'], request.body, true),
    )

    app.patch('/api/opportunities/:id/', { schema: { tags: TAGS, summary: 'Change the named fields of a deal (admin, creator or assignee)', description: 'Fields and relation lists left out keep their values.', params: IdParams, headers: IfMatch, body: OpportunityPatch, response: { 200: Message, ...writeErrors } } }, (request, reply) =>
      update(request, reply, request.params.id, request.headers['if-match'], request.body, false),
    )

    app.delete('/api/opportunities/:id/', { schema: { tags: TAGS, summary: 'Delete a deal (admin, superuser or its creator); its name becomes free', description: 'Answers 200 `{"error": false, "message"}`. The deal keeps its history.', params: IdParams, response: { 200: Message, ...errors } } }, async (request, reply) => {
      const identity = identityOf(request)
      const current = await orNotFound(opportunityOf(db, identity.orgId, request.params.id))
      const actor = { ...actorOf(request), isSuperuser: await isSuperuser(db, identity.userId) }
      const commands = requestCommands(deps, request, reply)
      const remove = (run: CommandRunner = commands.run) => run(opportunityDecider, opportunityStreams.stream(current.id), { type: 'DeleteOpportunity', orgId: identity.orgId, actor, at: clock().toISOString() })
      await withReleasedName(commands.run, { scope: DEAL_NAME_SCOPE, orgId: identity.orgId, ownerId: current.id, name: current.name }, remove)
      await commands.settle()
      return { error: false as const, message: 'Opportunity deleted' }
    })

    app.patch('/api/opportunities/:id/move/', { schema: { tags: TAGS, summary: 'Move a card on the board (admin, creator or assignee)', description: 'Into a won or lost stage: closed_by is set and a missing closed_on becomes today (the organization\'s time zone); into won without an amount: 400. Never changes the pipeline. Answers the moved card.', params: IdParams, headers: IfMatch, body: MoveBody, response: { 200: MoveAnswer, ...writeErrors } } }, async (request, reply) => {
      const { orgId } = identityOf(request)
      const current = await visible(request, request.params.id)
      const org = await lookups.organization(orgId)
      const commands = requestCommands(deps, request, reply)
      const now = clock()
      // The card is placed among the stages of the pipeline the command decides on (folded from its stream, kept per process), not the read model's.
      let stages: readonly Stage[] = []
      const prepare = async () => {
        const prepared = await withPipeline(store, current.pipeline_id, (pipeline) => ({ type: 'MoveOpportunity' as const, orgId, actor: actorOf(request), at: now.toISOString(), today: dateIn(org.timezone, now), defaultCurrency: org.default_currency, pipeline, columnId: request.body.column_id, kanbanOrder: null as number | null }))
        stages = prepared.command.pipeline.state.stages
        return { ...prepared, command: { ...prepared.command, kanbanOrder: await placement(orgId, current, request.body, stages) } }
      }
      const { events, state } = await commands.run(opportunityDecider, opportunityStreams.stream(current.id), prepare, { ifRevision: ifRevision(request.headers['if-match']) })
      await commands.settle()
      const row = movedRow(current, events, state, stages) ?? (await orNotFound(opportunityOf(db, orgId, current.id)))
      // A deal without line items (the command folded them) needs no read of them; others are read, as the read model words their decimals.
      const [card] = await cardsOf(deps, orgId, [row], actorOf(request), now, state.lineItems.length ? undefined : new Map([[current.id, []]]))
      return { error: false as const, message: 'Opportunity moved', opportunity: card! }
    })
  }
}
