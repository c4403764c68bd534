import type { FastifyReply, FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { ESTIMATE_STATUSES } from '../../commands/invoice/estimate.ts'
import type { EstimateFields } from '../../commands/invoice/estimate.ts'
import { actOnEstimate, changeEstimate, convertEstimate, createEstimate, visibleEstimate } from '../../commands/invoice/write-estimate.ts'
import { todayOf, visibleInvoice } from '../../commands/invoice/write-invoice.ts'
import type { Deps } from '../../deps.ts'
import type { FileStore } from '../../files/file-store.ts'
import { listEstimates } from '../../projections/invoice/estimates.ts'
import type { EstimateView } from '../../projections/invoice/estimates.ts'
import { productNames } from '../../projections/invoice/products.ts'
import { viewerOf } from '../kernel/auth.ts'
import { callerOf, requestCommands } from '../kernel/commands.ts'
import type { RequestCommands } from '../kernel/commands.ts'
import { pageLinks } from '../kernel/page-links.ts'
import { ErrorBody, IdParams, Message, PageQuery, authErrors, iso } from '../kernel/schemas/common.ts'
import { ContactErased, IdFilter, erasedMarkAs } from '../kernel/relations.ts'
import { InvoiceBody, lineInputOf } from './schemas.ts'
import { InvoiceDetailView, LineItemView, invoiceDetail, lineItemView } from './views.ts'
import { publicUrl } from './public-links.ts'
import { estimateMailer } from './invoice-mail.ts'

const TAGS = ['invoices']
const errors = { 400: ErrorBody, ...authErrors, 404: ErrorBody } as const
const WHO = '(admin, creator or assignee)'

const EstimateBody = InvoiceBody.pick({
  status: true, account_id: true, contact_id: true, opportunity_id: true, client_name: true, client_email: true, client_phone: true, client_address_line: true, client_city: true, client_state: true, client_postcode: true, client_country: true,
  discount_type: true, discount_value: true, tax_rate: true, currency: true, issue_date: true, public_link_enabled: true, notes: true, terms: true, line_items: true, assigned_to: true, teams: true, custom_fields: true,
}).extend({
  title: InvoiceBody.shape.invoice_title.describe('Required when creating'),
  expiry_date: InvoiceBody.shape.due_date.describe('The last day it may be accepted or converted; none when blank'),
})

const Decimal = z.string()
const EstimateListItem = z.object({
  id: z.uuid(),
  estimate_number: z.string().nullable().describe('EST-<year>-<n>, gap-free per organization, given when the estimate is created'),
  title: z.string(),
  status: z.string().describe('Draft, Sent, Accepted, Declined, or Expired (sent, unanswered, past its expiry date: from the clock)'),
  account: z.uuid().nullable(),
  account_name: z.string().nullable(),
  contact: z.uuid().nullable(),
  contact_name: z.string().nullable(),
  contact_erased: ContactErased,
  opportunity: z.object({ id: z.uuid(), name: z.string() }).nullable(),
  converted_to_invoice: z.object({ id: z.uuid(), invoice_number: z.string().nullable() }).nullable(),
  client_name: z.string(),
  issue_date: z.string(),
  expiry_date: z.string().nullable(),
  total_amount: Decimal,
  currency: z.string(),
  is_expired: z.boolean(),
  created_at: z.string(),
})
const EstimateDetail = EstimateListItem.extend({
  client_email: z.string(), client_phone: z.string(), client_address_line: z.string(), client_city: z.string(), client_state: z.string(), client_postcode: z.string(), client_country: z.string(),
  subtotal: Decimal, discount_type: z.string().nullable(), discount_value: Decimal, discount_amount: Decimal, tax_rate: Decimal, tax_amount: Decimal,
  tax_breakdown: z.array(z.object({ tax_rate: Decimal, taxable_amount: Decimal, tax_amount: Decimal })),
  line_items: z.array(LineItemView), notes: z.string(), terms: z.string(), public_link_enabled: z.boolean(), sent_at: z.string().nullable(),
  assigned_to: z.array(z.uuid()), teams: z.array(z.uuid()), created_by: z.uuid().nullable(), updated_at: z.string(),
  public_url: z.string().nullable().describe("The client's link to view, accept or decline it (no sign-in), valid 90 days from this answer; null while a draft, or while its link is switched off"),
})
const Written = z.object({ error: z.literal(false), message: z.string(), estimate: EstimateDetail })
const EstimateQuery = PageQuery.extend({ search: z.string().optional(), status: z.enum(ESTIMATE_STATUSES).optional(), account: IdFilter('estimates of an account') })

function listItem(row: EstimateView): z.infer<typeof EstimateListItem> {
  return {
    id: row.id, estimate_number: row.estimate_number, title: row.title, status: row.status, account: row.account, account_name: row.account_name, contact: row.contact,
    contact_name: row.contact_first_name === null ? null : [row.contact_first_name, row.contact_last_name].filter(Boolean).join(' '),
    ...erasedMarkAs('contact_erased', row.contact_is_erased),
    opportunity: row.opportunity && row.opportunity_name !== null ? { id: row.opportunity, name: row.opportunity_name } : null,
    converted_to_invoice: row.converted_to_invoice ? { id: row.converted_to_invoice, invoice_number: row.invoice_number } : null,
    client_name: row.client_name, issue_date: row.issue_date, expiry_date: row.expiry_date, total_amount: row.total_amount, currency: row.currency, is_expired: row.is_expired, created_at: row.created_at.toISOString(),
  }
}

/** A validated body as the use cases take it. */
function inputOf(body: z.infer<typeof EstimateBody>) {
  const { account_id, contact_id, opportunity_id, status: _ignored, custom_fields: _none, line_items, ...fields } = body
  return { fields: { ...fields, account: account_id, contact: contact_id, opportunity: opportunity_id } as Partial<EstimateFields>, lines: line_items?.map(lineInputOf) }
}

/**
 * Estimates (/api/invoices/estimates/, the original's estimate views): list, create, detail, PUT,
 * DELETE, send (mailing the PDF, invoice-mail.ts), convert. Converting answers the new draft invoice. PDFs: pdf/pdf-routes.ts.
 */
export function estimateRoutes(deps: Deps, files: FileStore): FastifyPluginAsyncZod {
  const { db, clock } = deps
  const detailOf = async (request: FastifyRequest, id: string): Promise<z.infer<typeof EstimateDetail>> => {
    const row = await visibleEstimate(deps, callerOf(request), id)
    const names = await productNames(db, row.org_id, row.line_items.flatMap((line) => line.product ?? []))
    return {
      ...listItem(row),
      client_email: row.client_email, client_phone: row.client_phone, client_address_line: row.client_address_line, client_city: row.client_city, client_state: row.client_state, client_postcode: row.client_postcode, client_country: row.client_country,
      subtotal: row.subtotal, discount_type: row.discount_type, discount_value: row.discount_value, discount_amount: row.discount_amount, tax_rate: row.tax_rate, tax_amount: row.tax_amount,
      tax_breakdown: row.tax_breakdown, line_items: row.line_items.map((line) => lineItemView(line, row, names)), notes: row.notes, terms: row.terms, public_link_enabled: row.public_link_enabled,
      sent_at: iso(row.sent_at), assigned_to: row.assigned_to, teams: row.teams, created_by: row.created_by, updated_at: row.updated_at.toISOString(),
      public_url: row.status !== 'Draft' && row.public_link_enabled ? publicUrl(deps, 'estimate', row.id) : null,
    }
  }
  const written = async (request: FastifyRequest, reply: FastifyReply, commands: RequestCommands, id: string, message: string, code = 200) => {
    await commands.settle()
    return reply.code(code).send({ error: false as const, message, estimate: await detailOf(request, id) })
  }

  return async (app) => {
    const mail = estimateMailer(deps, files, app)
    app.get('/api/invoices/estimates/', { schema: { tags: TAGS, summary: 'Estimates, newest first (a member: those they created or are assigned to)', querystring: EstimateQuery, response: { 200: z.object({ count: z.number().int(), next: z.string().nullable(), previous: z.string().nullable(), results: z.array(EstimateListItem) }), ...errors } } }, async (request) => {
      const { limit, offset, search, status, account } = request.query
      const { count, rows } = await listEstimates(db, viewerOf(request), { search, status, account }, { limit, offset, today: todayOf(clock()) })
      return { count, ...pageLinks(request, { count, limit, offset }), results: rows.map(listItem) }
    })

    app.post('/api/invoices/estimates/', { schema: { tags: TAGS, summary: 'Create an estimate (any member); it is numbered at once', body: EstimateBody, response: { 201: Written, ...errors } } }, async (request, reply) => {
      const commands = requestCommands(deps, request, reply)
      const { fields, lines } = inputOf(request.body)
      const { id } = await createEstimate(deps, callerOf(request), { fields, lines: lines ?? [] }, commands.session)
      return written(request, reply, commands, id, 'Estimate created', 201)
    })

    app.get('/api/invoices/estimates/:id/', { schema: { tags: TAGS, summary: `One estimate under \`estimate\` ${WHO}`, params: IdParams, response: { 200: z.object({ estimate: EstimateDetail }), ...errors } } }, async (request) => ({ estimate: await detailOf(request, request.params.id) }))

    app.put('/api/invoices/estimates/:id/', { schema: { tags: TAGS, summary: `Change an estimate: the fields sent ${WHO}`, description: 'Refused (400) once it is accepted, declined or converted.', params: IdParams, body: EstimateBody, response: { 200: Written, ...errors } } }, async (request, reply) => {
      const commands = requestCommands(deps, request, reply)
      await changeEstimate(deps, callerOf(request), request.params.id, inputOf(request.body), commands.session)
      return written(request, reply, commands, request.params.id, 'Estimate updated')
    })

    app.delete('/api/invoices/estimates/:id/', { schema: { tags: TAGS, summary: `Delete an estimate ${WHO}`, params: IdParams, response: { 200: Message, ...errors } } }, async (request, reply) => {
      const commands = requestCommands(deps, request, reply)
      await actOnEstimate(deps, callerOf(request), request.params.id, 'DeleteEstimate', commands.session)
      await commands.settle()
      return { error: false as const, message: 'Estimate deleted' }
    })

    app.post('/api/invoices/estimates/:id/send/', { schema: { tags: TAGS, summary: `Send an estimate to its client ${WHO}`, description: "400 once accepted, declined, expired or without lines. After the answer, the client (client_email, else the contact's email) is mailed the number, the total and the estimate's link, with its PDF attached.", params: IdParams, body: z.object({}).optional(), response: { 200: Written, ...errors } } }, async (request, reply) => {
      const commands = requestCommands(deps, request, reply)
      await actOnEstimate(deps, callerOf(request), request.params.id, 'SendEstimate', commands.session)
      const answer = await written(request, reply, commands, request.params.id, 'Estimate sent successfully')
      mail(request, request.params.id)
      return answer
    })

    app.post('/api/invoices/estimates/:id/convert/', { schema: { tags: TAGS, summary: `Convert an estimate to a draft invoice, once ${WHO}`, description: 'Only a sent or accepted estimate that has not expired converts (400 otherwise, and for one already converted). The estimate records the invoice it became; both are written in one append.', params: IdParams, body: z.object({}).optional(), response: { 201: z.object({ error: z.literal(false), message: z.string(), invoice: InvoiceDetailView }), ...errors } } }, async (request, reply) => {
      const commands = requestCommands(deps, request, reply)
      const { invoiceId } = await convertEstimate(deps, callerOf(request), request.params.id, commands.session)
      await commands.settle()
      const row = await visibleInvoice(deps, callerOf(request), invoiceId)
      const invoice = invoiceDetail(row, await productNames(db, row.org_id, row.line_items.flatMap((line) => line.product ?? [])), null)
      return reply.code(201).send({ error: false as const, message: 'Estimate converted to invoice', invoice })
    })
  }
}
