import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { invoiceFromTimeEntries } from '../../commands/invoice/from-time-entries.ts'
import type { Deps } from '../../deps.ts'
import { callerOf, requestCommands } from '../kernel/commands.ts'
import { ErrorBody, authErrors } from '../kernel/schemas/common.ts'

/** POST /api/invoices/from-time-entries/ (the original's InvoiceFromTimeEntriesView and its web client's dialog). */
const Body = z.object({
  account_id: z.uuid().describe('The account billed: one of this organization'),
  entry_ids: z.array(z.uuid()).min(1, 'entry_ids must be a non-empty list.').max(500).describe('Billable, stopped, not yet billed time entries the caller sees (their own; an admin any), in one currency'),
})
const Created = z.object({ error: z.literal(false), message: z.string(), invoice_id: z.uuid(), invoice_number: z.string().nullable().describe('null: a draft is numbered when sent'), currency: z.string(), line_count: z.number().int(), entry_ids: z.array(z.uuid()) })

export function fromTimeEntriesRoutes(deps: Deps): FastifyPluginAsyncZod {
  return async (app) => {
    app.post('/api/invoices/from-time-entries/', { schema: { tags: ['invoices'], summary: 'A draft invoice from billable time entries: one line per entry, hours × hourly rate (any member, for the entries they see)', description: "The account's first contact is billed. A line's quantity is the entry's hours to the hundredth (20 minutes: 0.33), its price the entry's rate. The entries are marked billed in the same write as the invoice is created, so two conversions of the same time make one invoice: the other answers 400. 404 for an account or an entry not found; 400 for entries running, not billable, already billed or in several currencies.", body: Body, response: { 201: Created, 400: ErrorBody, ...authErrors, 404: ErrorBody, 409: ErrorBody } } }, async (request, reply) => {
      const commands = requestCommands(deps, request, reply)
      const made = await invoiceFromTimeEntries(deps, callerOf(request), { accountId: request.body.account_id, entryIds: request.body.entry_ids }, commands.session)
      await commands.settle()
      return reply.code(201).send({ error: false as const, message: 'Draft invoice created from time entries.', invoice_id: made.id, invoice_number: null, currency: made.currency, line_count: made.lineCount, entry_ids: made.entryIds })
    })
  }
}
