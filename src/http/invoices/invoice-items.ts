import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { addLineItem, changeLineItem, recordPayment, removeLineItem, reversePayment } from '../../commands/invoice/invoice-actions.ts'
import type { LineItemInput } from '../../commands/invoice/fields.ts'
import { visibleInvoice } from '../../commands/invoice/write-invoice.ts'
import type { Deps } from '../../deps.ts'
import { NotFoundError } from '../../errors.ts'
import { productNames } from '../../projections/invoice/products.ts'
import type { InvoiceView } from '../../projections/invoice/queries.ts'
import { callerOf, requestCommands } from '../kernel/commands.ts'
import { ErrorBody, Message, authErrors } from '../kernel/schemas/common.ts'
import { InvoiceItemParams, InvoiceParams, LineItemBody, PaymentBody, lineInputOf, paymentOf } from './schemas.ts'
import { LineItemView, PaymentView, lineItemView, paymentView } from './views.ts'

const TAGS = ['invoices']
const errors = { 400: ErrorBody, ...authErrors, 404: ErrorBody } as const
const WHO = '(admin, creator or assignee)'

/** The fields a line-item PUT names, as the use case takes them (blank product, discount and rate to none). */
function linePatchOf(body: Partial<z.infer<typeof LineItemBody>>): Partial<LineItemInput> {
  const full = lineInputOf(body, 0)
  return Object.fromEntries(Object.keys(body).filter((key) => key in full && body[key as keyof typeof body] !== undefined).map((key) => [key, full[key as keyof LineItemInput]])) as Partial<LineItemInput>
}

/**
 * An invoice's lines and payments (the original's line-items/ and payments/ routes). Lines change
 * only on a draft; a payment is recorded, or reversed by DELETE (an event, never a deletion: the
 * payment stays on record, and the status follows).
 */
export function invoiceItemRoutes(deps: Deps): FastifyPluginAsyncZod {
  const { db, clock } = deps
  const lineOf = async (row: InvoiceView, lineId: string) => {
    const line = row.line_items.find((l) => l.id === lineId)
    if (!line) throw new NotFoundError('Line item not found')
    return lineItemView(line, row, await productNames(db, row.org_id, line.product ? [line.product] : []))
  }

  return async (app) => {
    app.get('/api/invoices/:invoice_id/line-items/', { schema: { tags: TAGS, summary: `An invoice's lines, in order ${WHO}`, params: InvoiceParams, response: { 200: z.array(LineItemView), ...errors } } }, async (request) => {
      const row = await visibleInvoice(deps, callerOf(request), request.params.invoice_id)
      const names = await productNames(db, row.org_id, row.line_items.flatMap((line) => line.product ?? []))
      return row.line_items.map((line) => lineItemView(line, row, names))
    })

    app.post('/api/invoices/:invoice_id/line-items/', { schema: { tags: TAGS, summary: `Add a line to a draft ${WHO}`, description: 'The invoice\'s totals follow. 400 once the invoice is issued.', params: InvoiceParams, body: LineItemBody, response: { 201: z.object({ error: z.literal(false), message: z.string(), line_item: LineItemView }), ...errors } } }, async (request, reply) => {
      const commands = requestCommands(deps, request, reply)
      const current = await visibleInvoice(deps, callerOf(request), request.params.invoice_id)
      const { lineItemId } = await addLineItem(deps, callerOf(request), current.id, lineInputOf(request.body, current.line_items.length), commands.session)
      await commands.settle()
      const row = await visibleInvoice(deps, callerOf(request), current.id)
      return reply.code(201).send({ error: false as const, message: 'Line item added', line_item: await lineOf(row, lineItemId) })
    })

    app.put('/api/invoices/:invoice_id/line-items/:id/', { schema: { tags: TAGS, summary: `Change a line of a draft: the fields sent ${WHO}`, params: InvoiceItemParams, body: LineItemBody.partial(), response: { 200: z.object({ error: z.literal(false), message: z.string(), line_item: LineItemView }), ...errors } } }, async (request, reply) => {
      const commands = requestCommands(deps, request, reply)
      const { invoice_id, id } = request.params
      await changeLineItem(deps, callerOf(request), invoice_id, id, linePatchOf(request.body), commands.session)
      await commands.settle()
      return { error: false as const, message: 'Line item updated', line_item: await lineOf(await visibleInvoice(deps, callerOf(request), invoice_id), id) }
    })

    app.delete('/api/invoices/:invoice_id/line-items/:id/', { schema: { tags: TAGS, summary: `Remove a line of a draft ${WHO}`, params: InvoiceItemParams, response: { 200: Message, ...errors } } }, async (request, reply) => {
      const commands = requestCommands(deps, request, reply)
      await removeLineItem(deps, callerOf(request), request.params.invoice_id, request.params.id, commands.session)
      await commands.settle()
      return { error: false as const, message: 'Line item deleted' }
    })

    app.get('/api/invoices/:invoice_id/payments/', { schema: { tags: TAGS, summary: `An invoice's payments, reversed ones included and flagged ${WHO}`, params: InvoiceParams, response: { 200: z.array(PaymentView), ...errors } } }, async (request) => {
      const row = await visibleInvoice(deps, callerOf(request), request.params.invoice_id)
      return row.payments.map((payment) => paymentView(row.id, payment))
    })

    app.post('/api/invoices/:invoice_id/payments/', { schema: { tags: TAGS, summary: `Record a payment ${WHO}`, description: 'More than zero and at most what is due; only on an issued invoice that is not cancelled (400 otherwise).', params: InvoiceParams, body: PaymentBody.required({ amount: true }), response: { 201: z.object({ error: z.literal(false), message: z.string(), payment: PaymentView }), ...errors } } }, async (request, reply) => {
      const commands = requestCommands(deps, request, reply)
      const { invoice_id } = request.params
      const { paymentId } = await recordPayment(deps, callerOf(request), invoice_id, paymentOf(request.body, clock()), commands.session)
      await commands.settle()
      const payment = (await visibleInvoice(deps, callerOf(request), invoice_id)).payments.find((p) => p.payment_id === paymentId)!
      return reply.code(201).send({ error: false as const, message: 'Payment recorded', payment: paymentView(invoice_id, payment) })
    })

    app.delete('/api/invoices/:invoice_id/payments/:id/', { schema: { tags: TAGS, summary: `Reverse a payment ${WHO}`, description: 'Recorded as a reversal (the payment stays on record, flagged is_reversed); the amount due and the status follow.', params: InvoiceItemParams, response: { 200: Message, ...errors } } }, async (request, reply) => {
      const commands = requestCommands(deps, request, reply)
      await reversePayment(deps, callerOf(request), request.params.invoice_id, request.params.id, commands.session)
      await commands.settle()
      return { error: false as const, message: 'Payment reversed' }
    })
  }
}
