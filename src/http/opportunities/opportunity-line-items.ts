import { randomUUID } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { lineItemsTotal } from '../../commands/opportunity/line-items.ts'
import { opportunityDecider, opportunityStreams } from '../../commands/opportunity/opportunity.ts'
import type { OpportunityCommand } from '../../commands/opportunity/opportunity.ts'
import { orNotFound } from '../../errors.ts'
import { lineItemOf, lineItemsOf } from '../../projections/opportunity/opportunities.ts'
import type { Deps } from '../../deps.ts'
import { actorOf, callerOf } from '../kernel/commands.ts'
import { visibleDeal } from '../../commands/opportunity/visible-opportunity.ts'
import { requestCommands } from '../kernel/commands.ts'
import { lineItemBody } from './opportunity-views.ts'
import { ErrorBody, Message, authErrors } from '../kernel/schemas/common.ts'
import { DealParams, LineItemBody, LineItemList, LineItemParams, LineItemView } from './schemas.ts'

const TAGS = ['opportunities']
const errors = { 400: ErrorBody, ...authErrors, 404: ErrorBody } as const

/**
 * A deal's line items (§4.8 index; payloads where-the-spec-is-silent.md leaves to us): whoever may
 * see or edit the deal (admin, creator or assignee) reads and changes them. Each change is a
 * command on the deal's stream that also moves the deal's amount (see commands/opportunity/line-items.ts).
 */
export function opportunityLineItemRoutes(deps: Deps): FastifyPluginAsyncZod {
  const { db, clock } = deps
  const dealOf = (request: FastifyRequest, id: string) => visibleDeal(db, callerOf(request), id)
  const run = async (request: FastifyRequest, reply: FastifyReply, dealId: string, command: OpportunityCommand) => {
    const commands = requestCommands(deps, request, reply)
    await commands.run(opportunityDecider, opportunityStreams.stream(dealId), command)
    await commands.settle()
  }
  const itemBody = async (orgId: string, dealId: string, id: string) => lineItemBody(await orNotFound(lineItemOf(db, orgId, dealId, id)))
  const base = '/api/opportunities/:opportunity_id/line-items/'

  return async (app) => {
    app.get(base, { schema: { tags: TAGS, summary: "A deal's line items, their total and the deal's amount source", params: DealParams, response: { 200: LineItemList, ...errors } } }, async (request) => {
      const deal = await dealOf(request, request.params.opportunity_id)
      const items = await lineItemsOf(db, [deal.id])
      return { line_items: items.map(lineItemBody), line_items_total: items.length ? lineItemsTotal(items) : '0', amount_source: items.length ? ('CALCULATED' as const) : ('MANUAL' as const) }
    })

    app.post(base, { schema: { tags: TAGS, summary: 'Add a line item; the deal amount becomes the line items\' total', params: DealParams, body: LineItemBody, response: { 201: LineItemView, ...errors } } }, async (request, reply) => {
      const deal = await dealOf(request, request.params.opportunity_id)
      const id = randomUUID()
      const { discount_type = null, discount_value = null, description = null, ...item } = request.body
      await run(request, reply, deal.id, { type: 'AddLineItem', orgId: deal.org_id, actor: actorOf(request), lineItemId: id, item: { ...item, description, discount_type, discount_value }, at: clock().toISOString() })
      return reply.code(201).send(await itemBody(deal.org_id, deal.id, id))
    })

    app.get(`${base}:line_item_id/`, { schema: { tags: TAGS, summary: 'One line item', params: LineItemParams, response: { 200: LineItemView, ...errors } } }, async (request) => {
      const deal = await dealOf(request, request.params.opportunity_id)
      return itemBody(deal.org_id, deal.id, request.params.line_item_id)
    })

    app.put(`${base}:line_item_id/`, { schema: { tags: TAGS, summary: 'Replace a line item (fields left out are cleared); the deal amount follows', params: LineItemParams, body: LineItemBody, response: { 200: LineItemView, ...errors } } }, async (request, reply) => {
      const deal = await dealOf(request, request.params.opportunity_id)
      const found = await orNotFound(lineItemOf(db, deal.org_id, deal.id, request.params.line_item_id))
      const { discount_type = null, discount_value = null, description = null, ...item } = request.body
      await run(request, reply, deal.id, { type: 'ChangeLineItem', orgId: deal.org_id, actor: actorOf(request), lineItemId: found.id, item: { ...item, description, discount_type, discount_value }, at: clock().toISOString() })
      return itemBody(deal.org_id, deal.id, found.id)
    })

    app.delete(`${base}:line_item_id/`, { schema: { tags: TAGS, summary: 'Remove a line item; without line items the deal amount is MANUAL again (it keeps its value)', params: LineItemParams, response: { 200: Message, ...errors } } }, async (request, reply) => {
      const deal = await dealOf(request, request.params.opportunity_id)
      const found = await orNotFound(lineItemOf(db, deal.org_id, deal.id, request.params.line_item_id))
      await run(request, reply, deal.id, { type: 'RemoveLineItem', orgId: deal.org_id, actor: actorOf(request), lineItemId: found.id, at: clock().toISOString() })
      return { error: false as const, message: 'Line item removed' }
    })
  }
}
