import { randomUUID } from 'node:crypto'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { accountStream } from '../../commands/account/account.ts'
import { accountMailDecider } from '../../commands/account/email.ts'
import { DomainError, ValidationError, orNotFound } from '../../errors.ts'
import { mailTransportFor } from '../../identity/mail.ts'
import type { MailTransport } from '../../identity/mail.ts'
import { accountOf } from '../../projections/account/accounts.ts'
import { liveContacts } from '../../projections/contact/contacts.ts'
import type { Deps } from '../../deps.ts'
import { requestCommands } from '../kernel/commands.ts'
import { identityOf } from '../kernel/auth.ts'
import { IdList } from '../kernel/relations.ts'
import { ErrorBody, IdParams, Message, authErrors } from '../kernel/schemas/common.ts'
import { formBoolean } from '../kernel/schemas/form-values.ts'

const blank = 'This field may not be blank.'
const MailBody = z.object({
  // Checked in the handler (at least one, each a live contact with an email) after the account, so another organization's account is a 404 whatever the body.
  recipients: IdList('live contacts with an email').optional().describe('Contact ids of this organization, each with an email; at least one'),
  message_subject: z.string().trim().min(1, blank).max(255).refine((subject) => !/[\r\n]/.test(subject), 'Expected a single line.'),
  message_body: z.string().trim().min(1, blank).max(100_000).describe('Plain text'),
  scheduled_later: formBoolean(z.boolean()).optional().describe('Scheduled sending is not supported: true is refused (400). Mail goes out now'),
  scheduled_date_time: z.string().optional().describe('Read only with scheduled_later, which is refused'),
  timezone: z.string().optional().describe('Read only with scheduled_later, which is refused'),
})

/**
 * POST /api/accounts/{id}/create_mail/ (the spec names the route only; the original CRM's fields):
 * any member mails some of the organization's contacts from an account, now. Each message goes
 * through the app's mailer (SMTP_URL, or the log outside production; 501 when neither), then
 * AccountEmailSent records subject, body and the recipients' contact ids on the account's stream.
 */
export function accountMailRoutes(deps: Deps): FastifyPluginAsyncZod {
  const { db, clock } = deps
  const transport = deps.mail === undefined ? mailTransportFor(deps.config, deps.logger) : deps.mail
  const mailer = (): MailTransport => {
    if (!transport) throw new DomainError(501, 'Sending mail is not configured (set SMTP_URL)')
    return transport
  }

  /** The recipients' addresses, in the order given; a 400 naming every id that is not a live contact with an email. */
  const addresses = async (orgId: string, ids: readonly string[]): Promise<[string, string][]> => {
    if (!ids.length) throw new ValidationError({ recipients: ['Expected at least one contact.'] })
    const emails = new Map((await liveContacts(db, orgId, ids)).map((contact) => [contact.id, contact.email]))
    const unusable = ids.filter((id) => !emails.get(id))
    if (unusable.length) throw new ValidationError({ recipients: [`Expected live contacts of this organization with an email: ${unusable.join(', ')} is not one.`] })
    return ids.map((id) => [id, emails.get(id)!])
  }

  return async (app) => {
    const description = 'The subject and body go to each recipient as a plain-text mail of its own. 400 naming `recipients` when one is not a live contact of the organization with an email; 400 for scheduled_later true (not supported); 501 when mail is not configured; 502 naming the recipients the mail server refused (the others were sent and recorded).'
    app.post('/api/accounts/:id/create_mail/', { schema: { tags: ['accounts'], summary: "Mail some of the organization's contacts from an account (any member)", description, params: IdParams, body: MailBody, response: { 200: Message, 400: ErrorBody, ...authErrors, 404: ErrorBody, 501: ErrorBody, 502: ErrorBody } } }, async (request, reply) => {
      const { orgId, profileId } = identityOf(request)
      const account = await orNotFound(accountOf(db, orgId, request.params.id))
      const { recipients, message_subject: subject, message_body: body, scheduled_later } = request.body
      if (scheduled_later) throw new ValidationError({ scheduled_later: ['Scheduled sending is not supported; leave scheduled_later out (or false) to send now.'] })
      const to = mailer()
      const sent: string[] = []
      const refused: string[] = []
      for (const [id, address] of await addresses(orgId, recipients ?? [])) {
        try {
          await to.send({ to: address, subject, text: body })
          sent.push(id)
        } catch (error) {
          request.log.error({ err: error, contact: id }, 'could not send an account mail')
          refused.push(id)
        }
      }
      const commands = requestCommands(deps, request, reply)
      await commands.run(accountMailDecider, accountStream(account.id), { type: 'RecordAccountEmail', orgId, actorId: profileId, emailId: randomUUID(), subject, body, recipients: sent, at: clock().toISOString() })
      await commands.settle()
      if (refused.length) throw new DomainError(502, { recipients: [`The mail server refused the mail to ${refused.join(', ')}; ${sent.length} other(s) were sent.`] })
      return { error: false as const, message: `Mail sent to ${sent.length} contact${sent.length === 1 ? '' : 's'}` }
    })
  }
}
