import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { receiveMail } from '../../commands/case-mail/receive-mail.ts'
import type { Deps } from '../../deps.ts'
import { NotFoundError } from '../../errors.ts'
import type { FileStore } from '../../files/file-store.ts'
import { mailTransportFor } from '../../identity/mail.ts'
import { settle } from '../kernel/commands.ts'
import { ErrorBody } from '../kernel/schemas/common.ts'
import { InboundAnswer, InboundParams } from './schemas.ts'

/** A raw message's size limit: larger deliveries answer 413 before anything is parsed. */
export const MAX_INBOUND_BYTES = 10 * 1024 * 1024
const MEDIA_TYPE = 'message/rfc822'

const description = [
  `The raw RFC 5322 message as the body, \`Content-Type: ${MEDIA_TYPE}\`, at most ${MAX_INBOUND_BYTES / 1024 / 1024} MiB (413 above).`,
  "Signed with the mailbox's secret: `X-Inbound-Signature: sha256=<hex HMAC-SHA256(secret, body)>`; an unsigned or wrongly signed delivery, a body not sent raw, or one to a mailbox that is off, answers 404 as for no mailbox.",
  'A message that cannot be parsed, or has no From address or Message-ID, answers 400 and writes nothing.',
  'Once per Message-ID: a repeat answers the first outcome (`duplicate`). Auto-replies, bounces and list mail (RFC 3834) are dropped and recorded.',
  'Threading: our signed token in In-Reply-To or References, then a stored message they name; otherwise the mail opens a case with the mailbox defaults.',
  'A reply ends a Pending pause, and reopens a Closed case within the reopen policy window, in the same append as the message. A case opened or reopened is acknowledged to the sender (`Auto-Submitted: auto-replied`), at most 5 an hour per sender and 3 per case.',
].join(' ')

/** Inbound mail (the original's InboundMailboxWebhookView, with a per-mailbox signature in place of SNS's). */
export function inboundRoutes(deps: Deps, files: FileStore): FastifyPluginAsyncZod {
  const transport = deps.mail === undefined ? mailTransportFor(deps.config, deps.logger) : deps.mail
  return async (app) => {
    app.addContentTypeParser(MEDIA_TYPE, { parseAs: 'buffer', bodyLimit: MAX_INBOUND_BYTES }, (_request, body, done) => done(null, body))
    app.post(
      '/api/cases/inbound/:mailbox_id/',
      {
        bodyLimit: MAX_INBOUND_BYTES,
        config: { auth: 'public' },
        schema: { tags: ['cases'], summary: 'Deliver an email to an inbound mailbox (signed with its secret, no sign-in)', description, security: [], params: InboundParams, response: { 200: InboundAnswer, 400: ErrorBody, 404: ErrorBody, 413: ErrorBody } },
      },
      async (request, reply) => {
        const raw = request.body
        // No signature can be checked over a body that was not sent raw: refused as an unsigned delivery.
        if (!Buffer.isBuffer(raw)) throw new NotFoundError('Mailbox not found')
        const signature = request.headers['x-inbound-signature']
        const received = await receiveMail(deps, files, { mailboxId: request.params.mailbox_id, raw, signature: Array.isArray(signature) ? signature[0] : signature })
        await settle(deps, reply, received.position)
        const { acknowledgement } = received
        if (acknowledgement && transport) app.afterReply.run(request.log, 'case acknowledgement', () => transport.send(acknowledgement))
        const { outcome, duplicate } = received
        return 'dropped' in outcome
          ? { ok: true as const, case_id: null, created_case: false, dropped: true, reason: outcome.dropped, duplicate }
          : { ok: true as const, case_id: outcome.case_id, created_case: outcome.created_case, dropped: false, reason: '', duplicate }
      },
    )
  }
}
