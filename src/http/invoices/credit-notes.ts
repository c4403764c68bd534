import type { FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { issueCreditNote } from '../../commands/invoice/issue-credit-note.ts'
import { visibleInvoice } from '../../commands/invoice/write-invoice.ts'
import type { Deps } from '../../deps.ts'
import { NotFoundError } from '../../errors.ts'
import { organizationSettings } from '../../identity/organizations.ts'
import { creditNoteOf, creditNotesOf } from '../../projections/invoice/credit-notes.ts'
import type { CreditNoteRow } from '../../projections/invoice/credit-notes.ts'
import { callerOf, requestCommands } from '../kernel/commands.ts'
import { ErrorBody, IdParams, authErrors } from '../kernel/schemas/common.ts'
import { Amount } from '../opportunities/schemas.ts'
import { creditNoteUblXml, invoiceUblXml } from './ubl/ubl-sources.ts'

/**
 * Credit notes, the corrections of an issued invoice (the spec and the original have none: these
 * paths are ours, beside the invoice's own), and the e-invoice export: an issued invoice or a
 * credit note as UBL 2.1 XML (EN 16931), refused with 400 naming each business rule it would
 * break. Who: whoever may act on the invoice (admin, creator or assignee).
 */
const TAGS = ['invoices']
const errors = { 400: ErrorBody, ...authErrors, 404: ErrorBody } as const
const WHO = '(admin, creator or assignee of the invoice)'

const Signed = z.string().describe('A decimal with two places, as a string')
const CreditNoteView = z.object({
  id: z.uuid(),
  credit_note_number: z.string().nullable().describe('CN-<year>-<n>: a gap-free series of its own per organization, given when issued'),
  invoice_id: z.uuid(),
  currency: z.string(),
  reason: z.string(),
  lines: z.array(z.object({ line_id: z.uuid(), name: z.string(), description: z.string(), quantity: z.string(), unit_price: z.string(), tax_rate: z.string(), subtotal: Signed, discount_amount: Signed, net: Signed })),
  subtotal: Signed,
  discount_amount: Signed,
  taxable_amount: Signed,
  tax_breakdown: z.array(z.object({ tax_rate: z.string(), taxable_amount: Signed, tax_amount: Signed })),
  tax_amount: Signed,
  shipping_amount: Signed,
  total_amount: Signed,
  created_by: z.uuid().nullable(),
  created_at: z.string(),
})
const CreditNoteBody = z.object({
  reason: z.string().trim().max(1000).optional().describe('Why the invoice is corrected (the credit note\'s note)'),
  lines: z.array(z.object({ line_id: z.uuid().describe('A line of this invoice'), quantity: Amount.describe('How much of it to credit: above 0, at most what is left of it') })).min(1).max(500).optional().describe('The quantities credited; none: all that is left of every line (a full credit, shipping included)'),
})
const Xml = z.string().describe('application/xml: UBL 2.1, EN 16931')

const creditNoteView = (row: CreditNoteRow) => ({ ...row, created_at: row.created_at.toISOString() })

export function creditNoteRoutes(deps: Deps): FastifyPluginAsyncZod {
  const { db } = deps
  /** A credit note whose invoice the caller may act on (404 for another organization's, 403 as for the invoice). */
  const visibleNote = async (request: FastifyRequest, id: string) => {
    const note = await creditNoteOf(db, callerOf(request).orgId, id)
    if (!note) throw new NotFoundError('Credit note not found')
    return { note, invoice: await visibleInvoice(deps, callerOf(request), note.invoice_id) }
  }

  return async (app) => {
    app.get('/api/invoices/:id/credit-notes/', { schema: { tags: TAGS, summary: `An invoice's credit notes, oldest first ${WHO}`, params: IdParams, response: { 200: z.object({ credit_notes: z.array(CreditNoteView) }), ...errors } } }, async (request) => {
      const invoice = await visibleInvoice(deps, callerOf(request), request.params.id)
      return { credit_notes: (await creditNotesOf(db, invoice.org_id, invoice.id)).map(creditNoteView) }
    })

    app.post('/api/invoices/:id/credit-notes/', { schema: { tags: TAGS, summary: `Issue a credit note against an issued invoice: lines, or all that is left ${WHO}`, description: "Its amounts are what the invoice bills before it less after it (EN 16931 order), so the credit notes and what is left add up to the total exactly; the amount due falls by its total. 400 for a draft or cancelled invoice, a line not on it, more than is left of a line, or a credit above the amount due (reverse a payment first). Numbered CN-<year>-<n> in the same write.", params: IdParams, body: CreditNoteBody, response: { 201: z.object({ error: z.literal(false), message: z.string(), credit_note: CreditNoteView }), ...errors } } }, async (request, reply) => {
      const commands = requestCommands(deps, request, reply)
      const { id } = await issueCreditNote(deps, callerOf(request), request.params.id, { reason: request.body.reason ?? '', lines: request.body.lines }, commands.session)
      await commands.settle()
      const { note } = await visibleNote(request, id)
      return reply.code(201).send({ error: false as const, message: `Credit note ${note.credit_note_number} issued`, credit_note: creditNoteView(note) })
    })

    app.get('/api/invoices/credit-notes/:id/', { schema: { tags: TAGS, summary: `One credit note ${WHO}`, params: IdParams, response: { 200: z.object({ credit_note: CreditNoteView }), ...errors } } }, async (request) => ({ credit_note: creditNoteView((await visibleNote(request, request.params.id)).note) }))

    app.get('/api/invoices/:id/ubl/', { schema: { tags: TAGS, summary: `An issued invoice as UBL 2.1 XML (EN 16931) ${WHO}`, description: "400 for a draft, or naming each business rule the document would break (e.g. BR-09: the organization's country, BR-11: the client's billing country).", params: IdParams, response: { 200: Xml, ...errors } } }, async (request, reply) => {
      const invoice = await visibleInvoice(deps, callerOf(request), request.params.id)
      const xml = invoiceUblXml(invoice, await organizationSettings(db, invoice.org_id))
      return reply.type('application/xml; charset=utf-8').header('content-disposition', `attachment; filename="${invoice.invoice_number}.xml"`).send(xml)
    })

    app.get('/api/invoices/credit-notes/:id/ubl/', { schema: { tags: TAGS, summary: `A credit note as UBL 2.1 XML (EN 16931), naming its invoice ${WHO}`, description: '400 naming each business rule the document would break.', params: IdParams, response: { 200: Xml, ...errors } } }, async (request, reply) => {
      const { note, invoice } = await visibleNote(request, request.params.id)
      const xml = creditNoteUblXml(note, invoice, await organizationSettings(db, invoice.org_id))
      return reply.type('application/xml; charset=utf-8').header('content-disposition', `attachment; filename="${note.credit_note_number}.xml"`).send(xml)
    })
  }
}
