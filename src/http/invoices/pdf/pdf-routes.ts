import type { FastifyReply } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { openInvoiceLink, useEstimateLink } from '../../../commands/invoice/public-links.ts'
import { visibleEstimate } from '../../../commands/invoice/write-estimate.ts'
import { visibleInvoice } from '../../../commands/invoice/write-invoice.ts'
import type { Deps } from '../../../deps.ts'
import type { FileStore } from '../../../files/file-store.ts'
import { callerOf, settle } from '../../kernel/commands.ts'
import { ErrorBody, IdParams, authErrors } from '../../kernel/schemas/common.ts'
import { TokenParams, publicLinkConfig } from '../public-links.ts'
import { estimatePdf, invoicePdf } from './document-pdf.ts'
import type { RenderedPdf } from './document-pdf.ts'

const sendPdf = (reply: FastifyReply, pdf: RenderedPdf) =>
  reply.type('application/pdf').header('content-disposition', `attachment; filename="${pdf.fileName.replace(/[^\w.-]/g, '_')}"`).header('cache-control', 'private, no-store').send(pdf.bytes)

const PDF = { description: 'The document as a PDF (A4)', content: { 'application/pdf': { schema: z.string().describe("The PDF's bytes") } } }
const TAGS = ['invoices']
const errors = { ...authErrors, 404: ErrorBody } as const
const publicErrors = { 404: ErrorBody, 429: ErrorBody } as const
const WHAT = 'The seller is the organization\'s company profile; colours, footer, default notes and terms and logo (a PNG or JPEG one) come from its default template. Lines with their nets, the tax per rate (each rate\'s base and tax), the totals as exact decimals'

/**
 * The PDFs of invoices and estimates (the original's InvoicePDFView, EstimatePDFView and their
 * public twins): the signed-in routes check access as the detail does; the public ones check the
 * token as the public links do (public-links.ts) and count as the client opening the document.
 */
export function pdfRoutes(deps: Deps, files: FileStore): FastifyPluginAsyncZod {
  const { db } = deps
  return async (app) => {
    app.get('/api/invoices/:id/pdf/', { schema: { tags: TAGS, summary: 'An invoice as a PDF (admin, creator or assignee)', description: `${WHAT}, the payment status and the payments not reversed. A draft prints as a draft, with no number.`, params: IdParams, response: { 200: PDF, ...errors } } }, async (request, reply) =>
      sendPdf(reply, await invoicePdf(db, files, await visibleInvoice(deps, callerOf(request), request.params.id))))

    app.get('/api/invoices/estimates/:id/pdf/', { schema: { tags: TAGS, summary: 'An estimate as a PDF (admin, creator or assignee)', description: `${WHAT} and the estimate's status.`, params: IdParams, response: { 200: PDF, ...errors } } }, async (request, reply) =>
      sendPdf(reply, await estimatePdf(db, files, await visibleEstimate(deps, callerOf(request), request.params.id))))

    const config = publicLinkConfig(deps)
    app.get('/api/public/invoice/:token/pdf/', { config, schema: { tags: ['public'], summary: "An invoice as a PDF through its client's link (no sign-in); a first opening marks it Viewed", description: '404 as the link itself: unknown, expired, switched off, or a draft.', security: [], params: TokenParams, response: { 200: PDF, ...publicErrors } } }, async (request, reply) => {
      const { row, position } = await openInvoiceLink(deps, request.params.token)
      await settle(deps, reply, position)
      return sendPdf(reply, await invoicePdf(db, files, { ...row, status: row.status === 'Sent' ? 'Viewed' : row.status }))
    })

    app.get('/api/public/estimate/:token/pdf/', { config, schema: { tags: ['public'], summary: "An estimate as a PDF through its client's link (no sign-in); a first opening marks it Viewed", description: '404 as the link itself: unknown, expired, switched off, or a draft.', security: [], params: TokenParams, response: { 200: PDF, ...publicErrors } } }, async (request, reply) => {
      const { row, position } = await useEstimateLink(deps, request.params.token)
      await settle(deps, reply, position)
      return sendPdf(reply, await estimatePdf(db, files, { ...row, status: row.status === 'Sent' ? 'Viewed' : row.status }))
    })
  }
}
