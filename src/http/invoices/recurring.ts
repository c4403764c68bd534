import type { FastifyReply, FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { RecurringFields } from '../../commands/invoice/recurring.ts'
import { RECURRING_FREQUENCIES } from '../../commands/invoice/recurring-schedule.ts'
import { actOnRecurring, changeRecurring, createRecurring, visibleRecurring } from '../../commands/invoice/write-recurring.ts'
import { isIsoDate } from '../../db/date-range.ts'
import type { Deps } from '../../deps.ts'
import { productNames } from '../../projections/invoice/products.ts'
import { listRecurring } from '../../projections/invoice/recurring.ts'
import type { RecurringView } from '../../projections/invoice/recurring.ts'
import { blankable } from '../accounts/schemas.ts'
import { viewerOf } from '../kernel/auth.ts'
import { callerOf, requestCommands } from '../kernel/commands.ts'
import type { RequestCommands } from '../kernel/commands.ts'
import { pageLinks } from '../kernel/page-links.ts'
import { ContactErased, erasedMarkAs } from '../kernel/relations.ts'
import { ErrorBody, IdParams, Message, PageQuery, authErrors } from '../kernel/schemas/common.ts'
import { formBoolean, formNumber } from '../kernel/schemas/form-values.ts'
import { InvoiceBody, lineInputOf } from './schemas.ts'
import { LineItemView, lineItemView } from './views.ts'

const TAGS = ['invoices']
const errors = { 400: ErrorBody, ...authErrors, 404: ErrorBody } as const
const day = z.iso.date('Expected a date, YYYY-MM-DD.').refine(isIsoDate, 'Expected a real date, YYYY-MM-DD.')

/** The original's RecurringInvoiceCreateSerializer: an invoice's client, terms and lines, and the schedule. */
const RecurringBody = InvoiceBody.pick({ account_id: true, contact_id: true, opportunity_id: true, client_name: true, client_email: true, currency: true, discount_type: true, discount_value: true, tax_rate: true, payment_terms: true, notes: true, terms: true, line_items: true, assigned_to: true, teams: true })
  .extend({
    title: z.string().trim().max(100).optional().describe('Required when creating'),
    is_active: formBoolean(z.boolean()).optional().describe('false: paused (as `toggle/`)'),
    frequency: z.enum(RECURRING_FREQUENCIES).optional().describe('Default MONTHLY'),
    custom_days: blankable(formNumber(z.number().int().min(1).max(3650))).describe('Days between periods; required for CUSTOM'),
    start_date: day.optional().describe('Default today. Period n falls on the start date plus n periods, the day clamped to the month\'s end (Jan 31, Feb 28, Mar 31); periods dated before the schedule was made are not billed'),
    end_date: blankable(day).describe('No period after it is generated'),
    next_generation_date: blankable(day).describe('Accepted and ignored: the next date follows from the start date and the periods generated'),
    auto_send: formBoolean(z.boolean()).optional().describe('Recorded; generated invoices are drafts to review and send'),
    custom_fields: z.record(z.string(), z.unknown()).refine((v) => Object.keys(v).length === 0, 'Custom fields for recurring invoices are not available yet.').optional(),
  })
  .describe('PUT is partial: only the fields sent change; `line_items` replaces the lines. Once a period was generated, the start date and frequency stay.')

const Amount = z.string().describe('A decimal string with two places')
const RecurringListItem = z.object({
  id: z.uuid(), title: z.string(), account: z.uuid().nullable(), account_name: z.string().nullable(), contact: z.uuid().nullable(), contact_name: z.string().nullable(),
  contact_erased: ContactErased,
  client_name: z.string(), frequency: z.enum(RECURRING_FREQUENCIES), custom_days: z.number().int().nullable(), payment_terms: z.string(),
  start_date: z.string(), end_date: z.string().nullable(), next_generation_date: z.string().describe('The next period\'s date'), is_active: z.boolean(), auto_send: z.boolean(),
  total_amount: Amount.describe('One period\'s invoice total'), currency: z.string(), invoices_generated: z.number().int(), created_at: z.string(),
})
const RecurringDetail = RecurringListItem.extend({
  opportunity: z.uuid().nullable(), client_email: z.string(), discount_type: z.string().nullable(), discount_value: Amount, tax_rate: Amount, subtotal: Amount,
  notes: z.string(), terms: z.string(), line_items: z.array(LineItemView), assigned_to: z.array(z.uuid()), teams: z.array(z.uuid()), created_by: z.uuid().nullable(), updated_at: z.string(),
})
const Written = z.object({ error: z.literal(false), message: z.string(), recurring_invoice: RecurringDetail })
const ListQuery = PageQuery.extend({ is_active: z.enum(['true', 'false']).optional() })

function listItem(row: RecurringView): z.infer<typeof RecurringListItem> {
  const { id, title, account, account_name, contact, contact_name, client_name, frequency, custom_days, payment_terms, start_date, end_date, next_generation_date, is_active, auto_send, total_amount, currency, invoices_generated } = row
  return { id, title, account, account_name, contact, contact_name, ...erasedMarkAs('contact_erased', row.contact_is_erased), client_name, frequency, custom_days, payment_terms, start_date, end_date, next_generation_date, is_active, auto_send, total_amount, currency, invoices_generated, created_at: row.created_at.toISOString() }
}

function detail(row: RecurringView, names: ReadonlyMap<string, string>): z.infer<typeof RecurringDetail> {
  const { opportunity, client_email, discount_type, discount_value, tax_rate, subtotal, notes, terms, assigned_to, teams, created_by } = row
  return { ...listItem(row), opportunity, client_email, discount_type, discount_value, tax_rate, subtotal, notes, terms, assigned_to, teams, created_by, line_items: row.line_items.map((line) => lineItemView(line, row, names)), updated_at: row.updated_at.toISOString() }
}

/** A validated body as the use cases take it: the original's `<link>_id` names to the fields, the lines apart. */
function inputOf(body: z.infer<typeof RecurringBody>): { fields: Partial<RecurringFields>; lines?: ReturnType<typeof lineInputOf>[]; isActive?: boolean } {
  const { account_id, contact_id, opportunity_id, line_items, is_active, next_generation_date: _derived, custom_fields: _none, ...fields } = body
  return { fields: { ...fields, account: account_id, contact: contact_id, opportunity: opportunity_id } as Partial<RecurringFields>, lines: line_items?.map(lineInputOf), isActive: is_active }
}

/**
 * Recurring invoices (the original's RecurringInvoice views): list, create, detail, PUT, DELETE and
 * `toggle/` (pause, resume). The drafts are generated by a scheduled process
 * (processes/recurring-invoices.ts). Who: an admin, the creator or an assignee, as for invoices.
 */
export function recurringRoutes(deps: Deps): FastifyPluginAsyncZod {
  const { db } = deps

  const detailOf = async (request: FastifyRequest, id: string) => {
    const row = await visibleRecurring(deps, callerOf(request), id)
    return detail(row, await productNames(db, row.org_id, row.line_items.flatMap((line) => line.product ?? [])))
  }
  const written = async (request: FastifyRequest, reply: FastifyReply, commands: RequestCommands, id: string, message: string, code = 200) => {
    await commands.settle()
    return reply.code(code).send({ error: false as const, message, recurring_invoice: await detailOf(request, id) })
  }
  /** `is_active` in a body: a pause or a resume, when it differs from the schedule's. */
  const activeAs = async (request: FastifyRequest, commands: RequestCommands, id: string, wanted: boolean | undefined) => {
    if (wanted === undefined) return
    await commands.settle()
    if ((await visibleRecurring(deps, callerOf(request), id)).is_active !== wanted) await actOnRecurring(deps, callerOf(request), id, 'ToggleRecurring', commands.session)
  }

  return async (app) => {
    app.get('/api/invoices/recurring/', { schema: { tags: TAGS, summary: 'Recurring invoices, newest first', description: 'A member sees the schedules they created or are assigned to.', querystring: ListQuery, response: { 200: z.object({ count: z.number().int(), next: z.string().nullable(), previous: z.string().nullable(), results: z.array(RecurringListItem) }), ...errors } } }, async (request) => {
      const { limit, offset, is_active } = request.query
      const { count, rows } = await listRecurring(db, viewerOf(request), { isActive: is_active === undefined ? undefined : is_active === 'true' }, { limit, offset })
      return { count, ...pageLinks(request, { count, limit, offset }), results: rows.map(listItem) }
    })

    app.post('/api/invoices/recurring/', { schema: { tags: TAGS, summary: 'Create a recurring invoice (any member)', description: 'title, account_id and contact_id are required; CUSTOM needs custom_days.', body: RecurringBody, response: { 201: Written, ...errors } } }, async (request, reply) => {
      const { fields, lines, isActive } = inputOf(request.body)
      const commands = requestCommands(deps, request, reply)
      const { id } = await createRecurring(deps, callerOf(request), { fields, lines: lines ?? [] }, commands.session)
      await activeAs(request, commands, id, isActive)
      return written(request, reply, commands, id, 'Recurring invoice created', 201)
    })

    app.get('/api/invoices/recurring/:id/', { schema: { tags: TAGS, summary: 'One recurring invoice under `recurring_invoice` (admin, creator or assignee)', params: IdParams, response: { 200: z.object({ recurring_invoice: RecurringDetail, custom_field_definitions: z.array(z.unknown()) }), ...errors } } }, async (request) => ({ recurring_invoice: await detailOf(request, request.params.id), custom_field_definitions: [] }))

    app.put('/api/invoices/recurring/:id/', { schema: { tags: TAGS, summary: 'Change a recurring invoice: the fields sent (admin, creator or assignee)', params: IdParams, body: RecurringBody, response: { 200: Written, ...errors } } }, async (request, reply) => {
      const { fields, lines, isActive } = inputOf(request.body)
      const commands = requestCommands(deps, request, reply)
      await changeRecurring(deps, callerOf(request), request.params.id, { fields, lines }, commands.session)
      await activeAs(request, commands, request.params.id, isActive)
      return written(request, reply, commands, request.params.id, 'Recurring invoice updated')
    })

    app.delete('/api/invoices/recurring/:id/', { schema: { tags: TAGS, summary: 'Delete a recurring invoice (admin, creator or assignee); the invoices it generated stay', params: IdParams, response: { 200: Message, ...errors } } }, async (request, reply) => {
      const commands = requestCommands(deps, request, reply)
      await actOnRecurring(deps, callerOf(request), request.params.id, 'DeleteRecurring', commands.session)
      await commands.settle()
      return { error: false as const, message: 'Recurring invoice deleted' }
    })

    app.post('/api/invoices/recurring/:id/toggle/', { schema: { tags: TAGS, summary: 'Pause a running schedule or resume a paused one (admin, creator or assignee)', description: 'A resumed schedule picks up at its first period dated today or later: the periods a pause covered are not billed.', params: IdParams, body: z.object({}).optional(), response: { 200: Written, ...errors } } }, async (request, reply) => {
      const commands = requestCommands(deps, request, reply)
      await actOnRecurring(deps, callerOf(request), request.params.id, 'ToggleRecurring', commands.session)
      await commands.settle()
      const recurring = await detailOf(request, request.params.id)
      return reply.send({ error: false as const, message: `Recurring invoice ${recurring.is_active ? 'resumed' : 'paused'}`, recurring_invoice: recurring })
    })
  }
}
