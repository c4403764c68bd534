import type { FastifyInstance, FastifyRequest } from 'fastify'
import { visibleEstimate } from '../../commands/invoice/write-estimate.ts'
import { visibleInvoice } from '../../commands/invoice/write-invoice.ts'
import type { Deps } from '../../deps.ts'
import type { FileStore } from '../../files/file-store.ts'
import { mailTransportFor } from '../../identity/mail.ts'
import type { MailMessage } from '../../identity/mail.ts'
import type { Caller } from '../../commands/caller.ts'
import type { LinkKind } from '../../commands/invoice/public-links.ts'
import { callerOf } from '../kernel/commands.ts'
import { estimatePdf, invoicePdf, pdfAttachment } from './pdf/document-pdf.ts'
import { publicUrl } from './public-links.ts'

type Addressed = { id: string; client_email: string; contact_email: string | null; public_link_enabled: boolean }
type Letter = Omit<MailMessage, 'to'>

/**
 * §4.1: sending an invoice or an estimate emails the client. After the answer (the send is recorded
 * whether or not the mail goes out), through the app's mailer (SMTP_URL, or the log outside
 * production), to the document's client email, else its contact's: its number, what is due (or
 * its total) and the client's link, with the document's PDF attached (pdf/document-pdf.ts), drawn
 * as the document stands once the send is recorded. Without a mailer or an address, no mail.
 */
function documentMailer<Row extends Addressed>(deps: Deps, app: FastifyInstance, kind: LinkKind, load: (caller: Caller, id: string) => Promise<Row>, letter: (row: Row, link: string | null) => Promise<Letter>) {
  const transport = deps.mail === undefined ? mailTransportFor(deps.config, deps.logger) : deps.mail
  return (request: FastifyRequest, id: string) => {
    if (!transport) return
    // Read now, while the request is current: who sends, and the origin of the client's link.
    const caller = callerOf(request)
    const origin = `${request.protocol}://${request.host}`
    app.afterReply.run(request.log, `${kind} mail`, async () => {
      const row = await load(caller, id)
      const to = row.client_email || row.contact_email
      if (!to) return
      await transport.send({ to, ...(await letter(row, row.public_link_enabled ? `${origin}${publicUrl(deps, kind, id)}` : null)) })
    })
  }
}

/** Mails an issued invoice (`id`) to its client. */
export const invoiceMailer = (deps: Deps, files: FileStore, app: FastifyInstance) =>
  documentMailer(deps, app, 'invoice', (caller, id) => visibleInvoice(deps, caller, id), async (row, link) => ({
    subject: `Invoice ${row.invoice_number ?? ''}`.trim(),
    text: [
      `Invoice ${row.invoice_number ?? ''}: ${row.invoice_title}`,
      `Amount due: ${row.currency} ${row.amount_due}${row.due_date ? `, by ${row.due_date}` : ''}`,
      ...(link ? [`View it online: ${link}`] : []),
      'The invoice is attached as a PDF.',
    ].join('\n'),
    attachments: [pdfAttachment(await invoicePdf(deps.db, files, row))],
  }))

/** Mails a sent estimate (`id`) to its client. */
export const estimateMailer = (deps: Deps, files: FileStore, app: FastifyInstance) =>
  documentMailer(deps, app, 'estimate', (caller, id) => visibleEstimate(deps, caller, id), async (row, link) => ({
    subject: `Estimate ${row.estimate_number ?? ''}`.trim(),
    text: [
      `Estimate ${row.estimate_number ?? ''}: ${row.title}`,
      `Total: ${row.currency} ${row.total_amount}${row.expiry_date ? `, valid until ${row.expiry_date}` : ''}`,
      ...(link ? [`View, accept or decline it online: ${link}`] : []),
      'The estimate is attached as a PDF.',
    ].join('\n'),
    attachments: [pdfAttachment(await estimatePdf(deps.db, files, row))],
  }))
