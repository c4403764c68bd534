import type { FastifyReply, FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { cancelInvoice, recordPayment, sendInvoice } from '../../commands/invoice/invoice-actions.ts'
import type { LineItemInput } from '../../commands/invoice/fields.ts'
import type { InvoiceInput } from '../../commands/invoice/invoice.ts'
import { invoiceFromOpportunity } from '../../commands/invoice/from-opportunity.ts'
import { changeInvoice, createInvoice, duplicateInvoice, todayOf, visibleInvoice } from '../../commands/invoice/write-invoice.ts'
import type { Deps } from '../../deps.ts'
import { ValidationError } from '../../errors.ts'
import type { FileStore } from '../../files/file-store.ts'
import { productNames } from '../../projections/invoice/products.ts'
import { countInvoices, invoiceConditions, invoicePage, invoiceTotals } from '../../projections/invoice/queries.ts'
import { INVOICE_NOTES } from '../../projections/invoice/invoices.ts'
import { viewerOf } from '../kernel/auth.ts'
import { callerOf, requestCommands } from '../kernel/commands.ts'
import type { RequestCommands } from '../kernel/commands.ts'
import { NoteLists } from '../kernel/note-routes.ts'
import { notesView } from '../kernel/note-views.ts'
import { pageLinks } from '../kernel/page-links.ts'
import { ErrorBody, IdParams, authErrors } from '../kernel/schemas/common.ts'
import { invoiceItemRoutes } from './invoice-items.ts'
import { invoiceNoteRoutes } from './invoice-notes.ts'
import { InvoiceBody, InvoiceListQuery, PaymentBody, lineInputOf, paymentOf } from './schemas.ts'
import { InvoiceDetailView, InvoiceListItem, invoiceDetail, invoiceListItem } from './views.ts'
import { publicUrl } from './public-links.ts'
import { invoiceMailer } from './invoice-mail.ts'

const TAGS = ['invoices']
const errors = { 400: ErrorBody, ...authErrors, 404: ErrorBody } as const
const Written = z.object({ error: z.literal(false), message: z.string(), invoice: InvoiceDetailView })
const Totals = z.object({ count: z.number().int(), outstanding: z.string(), overdue: z.string(), due_this_month: z.string(), paid_this_quarter: z.string(), draft: z.string(), action_needed: z.number().int() })
  .describe("Over every invoice the caller may see, not the page and not the filter (as the original's): what is owed, overdue and due this month; paid this quarter; drafts; and how many wait on someone (drafts to send, overdue ones to chase)")
const InvoiceList = z.object({ count: z.number().int(), next: z.string().nullable(), previous: z.string().nullable(), results: z.array(InvoiceListItem), totals: Totals })

/** A validated body as the use cases take it: the original's `<link>_id` names to the fields, the lines apart. */
function inputOf(body: z.infer<typeof InvoiceBody>): { fields: InvoiceInput; lines?: LineItemInput[] } {
  const { account_id, contact_id, opportunity_id, template_id, status: _ignored, custom_fields: _none, line_items, ...fields } = body
  if (template_id) throw new ValidationError({ template_id: ['Invoice templates are not available on this server yet.'] })
  return { fields: { ...fields, account: account_id, contact: contact_id, opportunity: opportunity_id } as InvoiceInput, lines: line_items?.map(lineInputOf) }
}

/**
 * Invoices (the original's invoices app): list with the header's totals, create, detail, PUT (no
 * PATCH or DELETE: the spec answers those 405), send, cancel, duplicate, mark-paid; lines and
 * payments in invoice-items.ts, comments and attachments in invoice-notes.ts. Who: an admin, the
 * creator or an assignee acts on an invoice; a member's list holds only those.
 */
export function invoiceRoutes(deps: Deps, files: FileStore): FastifyPluginAsyncZod {
  const { db, clock } = deps

  /** The invoice as its detail shows it, for a write's answer. */
  const detailOf = async (request: FastifyRequest, id: string) => {
    const row = await visibleInvoice(deps, callerOf(request), id)
    return invoiceDetail(row, await productNames(db, row.org_id, row.line_items.flatMap((line) => line.product ?? [])), publicUrl(deps, 'invoice', id))
  }
  /** After a write: read-your-writes, then the invoice as it now is. */
  const written = async (request: FastifyRequest, reply: FastifyReply, commands: RequestCommands, id: string, message: string, code = 200) => {
    await commands.settle()
    return reply.code(code).send({ error: false as const, message, invoice: await detailOf(request, id) })
  }

  return async (app) => {
    app.get('/api/invoices/', { schema: { tags: TAGS, summary: 'Invoices (by default newest first), with the list header\'s totals', description: 'A member sees the invoices they created or are assigned to, in the rows and the totals alike. The status filter reads the status as of today. Malformed id filters match nothing.', querystring: InvoiceListQuery, response: { 200: InvoiceList, ...errors } } }, async (request) => {
      const viewer = viewerOf(request)
      const { limit, offset, sort, ...query } = request.query
      const today = todayOf(clock())
      const filter = { search: query.search, status: query.status, account: query.account, contact: query.contact, opportunity: query.opportunity, assignedTo: query.assigned_to, createdBy: query.created_by, issueFrom: query.issue_date_gte, issueTo: query.issue_date_lte, dueFrom: query.due_date_gte, dueTo: query.due_date_lte }
      const conditions = invoiceConditions(viewer, filter, today)
      // Unfiltered, the list is every invoice the caller may see: what the totals count.
      const unfiltered = Object.values(filter).every((value) => value === undefined)
      const [rows, totals, filtered] = await Promise.all([invoicePage(db, viewer, conditions, { limit, offset, sort: sort ?? '-created_at', today }), invoiceTotals(db, viewer, today), unfiltered ? undefined : countInvoices(db, conditions)])
      const count = filtered ?? totals.count
      return { count, ...pageLinks(request, { count, limit, offset }), results: rows.map(invoiceListItem), totals }
    })

    app.post('/api/invoices/', { schema: { tags: TAGS, summary: 'Create a draft invoice (any member); its creator may then act on it', description: 'account_id and contact_id are required; the totals are computed here, never taken from the body. A draft has no number: it gets one when first sent.', body: InvoiceBody, response: { 201: Written, ...errors } } }, async (request, reply) => {
      const { fields, lines } = inputOf(request.body)
      const commands = requestCommands(deps, request, reply)
      const { id } = await createInvoice(deps, callerOf(request), { fields, lines: lines ?? [] }, commands.session)
      return written(request, reply, commands, id, 'Invoice created successfully', 201)
    })

    app.get('/api/invoices/:id/', { schema: { tags: TAGS, summary: 'One invoice under `invoice`, with its comments and attachments (admin, creator or assignee)', params: IdParams, response: { 200: z.object({ invoice: InvoiceDetailView, ...NoteLists }), ...errors } } }, async (request) => {
      const invoice = await detailOf(request, request.params.id)
      return { invoice, ...(await notesView(db, viewerOf(request).orgId, INVOICE_NOTES, 'invoices', invoice.id)) }
    })

    app.put('/api/invoices/:id/', { schema: { tags: TAGS, summary: 'Change an invoice: the fields sent (admin, creator or assignee)', description: 'Partial, as the original\'s PUT. `line_items` replaces the lines. An issued invoice\'s lines and money fields cannot change, and a paid or cancelled invoice cannot change at all (400).', params: IdParams, body: InvoiceBody, response: { 200: Written, ...errors } } }, async (request, reply) => {
      const commands = requestCommands(deps, request, reply)
      await changeInvoice(deps, callerOf(request), request.params.id, inputOf(request.body), commands.session)
      return written(request, reply, commands, request.params.id, 'Invoice updated successfully')
    })

    const mail = invoiceMailer(deps, files, app)
    app.post('/api/invoices/:id/send/', { schema: { tags: TAGS, summary: 'Send an invoice to its client (admin, creator or assignee)', description: "The first send issues it: the organization's next number is given in the same write (gap-free, per organization and year). 400 for a paid or cancelled invoice, or one without lines. Sending again records a re-send. After the answer, the client (client_email, else the contact's email) is mailed the number, what is due and the invoice's link, with the invoice's PDF attached.", params: IdParams, body: z.object({}).optional(), response: { 200: Written, ...errors } } }, async (request, reply) => {
      const commands = requestCommands(deps, request, reply)
      await sendInvoice(deps, callerOf(request), request.params.id, commands.session)
      await commands.settle()
      const invoice = await detailOf(request, request.params.id)
      mail(request, invoice.id)
      return { error: false as const, message: 'Invoice sent successfully', invoice }
    })

    app.post('/api/invoices/:id/cancel/', { schema: { tags: TAGS, summary: 'Cancel an invoice (admin, creator or assignee)', description: '400 when already cancelled or paid.', params: IdParams, body: z.object({}).optional(), response: { 200: Written, ...errors } } }, async (request, reply) => {
      const commands = requestCommands(deps, request, reply)
      await cancelInvoice(deps, callerOf(request), request.params.id, commands.session)
      return written(request, reply, commands, request.params.id, 'Invoice cancelled successfully')
    })

    app.post('/api/invoices/:id/duplicate/', { schema: { tags: TAGS, summary: 'Copy an invoice to a new draft: "Copy of …", its lines, no payments, no number (admin, creator or assignee)', description: 'Answers the new draft.', params: IdParams, body: z.object({}).optional(), response: { 201: Written, ...errors } } }, async (request, reply) => {
      const commands = requestCommands(deps, request, reply)
      const { id } = await duplicateInvoice(deps, callerOf(request), request.params.id, commands.session)
      return written(request, reply, commands, id, 'Invoice duplicated successfully', 201)
    })

    app.post('/api/invoices/from-opportunity/:opportunity_id/', { schema: { tags: TAGS, summary: 'A draft invoice from a won deal: its account, first contact, assignees, currency and line items (whoever may see the deal)', description: '404 for a deal of another organization; 400 unless the deal is won and has line items, an account and a contact. Lines take the invoice\'s tax rate. Like every draft, it has no number until sent.', params: z.object({ opportunity_id: z.uuid() }), body: z.object({}).optional(), response: { 201: Written, ...errors } } }, async (request, reply) => {
      const commands = requestCommands(deps, request, reply)
      const { id } = await invoiceFromOpportunity(deps, callerOf(request), request.params.opportunity_id, commands.session)
      return written(request, reply, commands, id, 'Invoice created successfully from opportunity', 201)
    })

    app.post('/api/invoices/:id/mark-paid/', { schema: { tags: TAGS, summary: 'Record a payment: all that is due unless an amount is given (admin, creator or assignee)', description: 'More than zero, at most what is due; never on a draft or a cancelled invoice (400). The status follows: Partially_Paid, then Paid.', params: IdParams, body: PaymentBody.optional(), response: { 200: Written, ...errors } } }, async (request, reply) => {
      const commands = requestCommands(deps, request, reply)
      await recordPayment(deps, callerOf(request), request.params.id, paymentOf(request.body ?? {}, clock()), commands.session)
      return written(request, reply, commands, request.params.id, 'Payment recorded successfully')
    })

    await app.register(invoiceItemRoutes(deps))
    await app.register(invoiceNoteRoutes(deps, files))
  }
}
