import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { z } from 'zod'
import type { Deps } from '../../deps.ts'
import { mailTransportFor } from '../../identity/mail.ts'
import type { InvoiceDetailView } from './views.ts'

/**
 * §4.1: sending an invoice emails the customer. After the answer (the send is recorded whether or
 * not the mail goes out), through the app's mailer (SMTP_URL, or the log outside production), to the
 * invoice's client email, else its contact's: its number, what is due and when, and the client's
 * link. No PDF is attached: no PDF library is installed. Without a mailer or an address, no mail.
 */
export function invoiceMailer(deps: Deps, app: FastifyInstance) {
  const transport = deps.mail === undefined ? mailTransportFor(deps.config, deps.logger) : deps.mail
  return (request: FastifyRequest, invoice: z.infer<typeof InvoiceDetailView>) => {
    const to = invoice.client_email || invoice.contact?.email
    if (!transport || !to) return
    const text = [
      `Invoice ${invoice.invoice_number ?? ''}: ${invoice.invoice_title}`,
      `Amount due: ${invoice.currency} ${invoice.amount_due}${invoice.due_date ? `, by ${invoice.due_date}` : ''}`,
      ...(invoice.public_url ? [`View it online: ${request.protocol}://${request.host}${invoice.public_url}`] : []),
    ]
    app.afterReply.run(request.log, 'invoice mail', () => transport.send({ to, subject: `Invoice ${invoice.invoice_number ?? ''}`.trim(), text: text.join('\n') }))
  }
}
