import { z } from 'zod'
import { CASE_STATUSES } from '../commands/case/fields.ts'
import { Id, Ids, at } from '../events/event-schemas.ts'

/**
 * The case stream's inbound-mail event, declared in the case module's manifest (it is a case
 * event) and written by the inbound mail of the case-mail module. Its sender's fields are the
 * requester's: sealed under the contact's key when the sender is a contact, else under a key of
 * the requester's own (`case_requester-<id>`, one per organization and address).
 */
const requesterSubject = (_stream: string, data: Record<string, unknown>): string =>
  typeof data.contact_id === 'string' ? `contact-${data.contact_id}` : `case_requester-${String(data.requester_id)}`

const Reopen = z.union([
  z.strictObject({ outcome: z.literal('reopened'), to_status: z.enum(CASE_STATUSES), days_since_close: z.number().int() }),
  z.strictObject({ outcome: z.literal('out_of_window'), days_since_close: z.number().int() }),
])
const AutoReply = z.union([z.strictObject({ status: z.literal('sent'), message_id: z.string() }), z.strictObject({ status: z.enum(['recipient_limit', 'case_limit']), message_id: z.null() })])

export const caseEmailReceived = {
  CaseEmailReceived: {
    stream: 'case',
    description:
      "A customer's email landed on the case (inbound mail): its Message-ID, thread headers, sender, subject and text, the mailbox it came through, how it was threaded, the attachments it added (CaseAttachmentAdded in the same append), a reopen it caused or missed (the reopen policy's window), and the acknowledgement due (sent, or held back by a rate limit). A status it ends (Pending, Closed) follows as CaseUpdated with its SLA events, in the same append.",
    data: z.strictObject({
      message_id: z.string(),
      mailbox_id: Id,
      from_email: z.string(),
      from_name: z.string(),
      subject: z.string(),
      text: z.string(),
      in_reply_to: z.string().nullable(),
      references: z.array(z.string()),
      sent_at: z.string().nullable(),
      contact_id: Id.nullable(),
      requester_id: Id.nullable(),
      threaded_by: z.enum(['token', 'headers']).nullable(),
      attachments: Ids,
      reopen: Reopen.nullable(),
      auto_reply: AutoReply.nullable(),
      ...at,
    }),
    personal: ['from_email', 'from_name', 'subject', 'text'],
    subject: requesterSubject,
  },
}
