import { randomUUID } from 'node:crypto'
import { writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Deps } from '../../deps.ts'
import { ConflictError, NotFoundError } from '../../errors.ts'
import type { Position } from '../../eventstore/event-store.ts'
import { domainEventOf } from '../../events/versions.ts'
import type { FileStore } from '../../files/file-store.ts'
import type { MailMessage } from '../../identity/mail.ts'
import { currentBusinessCalendar } from '../../projections/business-hours/queries.ts'
import { activeMailbox, autoRepliesSince, ownAddresses, reopenPolicyOf } from '../../projections/case-mail/queries.ts'
import type { CaseMailboxRow } from '../../projections/case-mail/queries.ts'
import { contactByEmail } from '../../projections/contact/contacts.ts'
import type { Caller } from '../caller.ts'
import { caseDecider, caseStream } from '../case/case.ts'
import type { CaseCommand } from '../case/case.ts'
import type { CaseEmailReceived, InboundMessage } from '../case/inbound.ts'
import { routeCase } from '../case-routing/route-case.ts'
import { commandSession } from '../command-session.ts'
import { companion } from '../handle-command.ts'
import { nameBasedId } from '../name-based-id.ts'
import type { AttachmentData } from '../notes.ts'
import { AUTO_REPLY_WINDOW_MS, acknowledgementOf, autoReplyVerdict } from './acknowledgement.ts'
import { inboundRecordDecider, inboundRecordStream, outcomeOf } from './inbound-record.ts'
import type { InboundOutcome, InboundRecordEvent } from './inbound-record.ts'
import { verifyDelivery } from './mailbox-secrets.ts'
import { parseInbound } from './parse-mail.ts'
import type { ParsedInbound } from './parse-mail.ts'
import { dropReasonOf } from './screening.ts'
import { threadMessageId, threadTokenKey } from './thread-token.ts'
import { threadOf } from './threading.ts'

type MailDeps = Pick<Deps, 'db' | 'store' | 'clock' | 'config'>
export type Delivery = { mailboxId: string; raw: Buffer; signature: string | undefined }
/** `acknowledgement`: the mail to send now that the append holds (its sending is the caller's, after the answer). */
export type Received = { outcome: InboundOutcome; duplicate: boolean; position: Position | null; acknowledgement: MailMessage | null }

/** The case name a mail opens, as the original: its subject, at most 64 characters. */
const caseNameOf = (subject: string): string => (subject.trim() || '(no subject)').slice(0, 64)
const domainOf = (from: string): string => /@([^>\s]+)/.exec(from)?.[1] ?? 'localhost'

async function recordedOutcome(deps: MailDeps, stream: string): Promise<InboundOutcome | null> {
  const [first] = await deps.store.readStream(stream)
  return first ? outcomeOf(domainEventOf<InboundRecordEvent>(first)) : null
}

/** The message's attachments into the file store (`<org>/<id>`, as uploads), before the append that names them. */
async function storeAttachments(files: FileStore, orgId: string, mail: ParsedInbound): Promise<AttachmentData[]> {
  const stored: AttachmentData[] = []
  for (const attachment of mail.attachments) {
    const id = randomUUID()
    const temp = join(tmpdir(), `inbound-${id}`)
    await writeFile(temp, attachment.content)
    await files.adopt(temp, `${orgId}/${id}`)
    stored.push({ attachment_id: id, file_name: attachment.fileName.replace(/[\\/]/g, '_').slice(0, 255), content_type: attachment.contentType, size: attachment.content.length, storage_key: `${orgId}/${id}` })
  }
  return stored
}

/**
 * One delivery to a mailbox (POST /api/cases/inbound/{mailbox_id}/): authenticated by the mailbox's
 * secret (404 otherwise, as for no mailbox: a prober learns nothing), parsed (400 when malformed,
 * nothing written), then, once per Message-ID: dropped as a recorded event when no person wrote it,
 * else threaded onto its case or opening one, in one append with its outcome.
 */
export async function receiveMail(deps: MailDeps, files: FileStore, delivery: Delivery): Promise<Received> {
  const mailbox = await activeMailbox(deps.db, delivery.mailboxId)
  if (!mailbox || !(await verifyDelivery(deps.db, mailbox.id, delivery.raw, delivery.signature))) throw new NotFoundError('Mailbox not found')
  const mail = await parseInbound(delivery.raw)
  const orgId = mailbox.org_id
  const recordStream = inboundRecordStream(orgId, mail.messageId)
  const prior = await recordedOutcome(deps, recordStream)
  if (prior) return { outcome: prior, duplicate: true, position: null, acknowledgement: null }
  const caller: Caller = { orgId, profileId: null, isAdmin: false }
  const session = commandSession(deps.store, caller)
  const at = deps.clock().toISOString()
  const base = { org_id: orgId, mailbox_id: mailbox.id, message_id: mail.messageId, at }
  const record = (event: InboundRecordEvent) => companion(inboundRecordDecider, recordStream, { type: 'RecordInbound', event }, { expectNew: true })
  try {
    const reason = dropReasonOf(mail, await ownAddresses(deps.db, orgId))
    if (reason) {
      const dropped: InboundRecordEvent = { type: 'InboundMailDropped', data: { ...base, reason, from_email: mail.fromEmail, subject: mail.subject.slice(0, 512) } }
      await session.run(inboundRecordDecider, recordStream, { type: 'RecordInbound', event: dropped }, { expectNew: true })
      return { outcome: outcomeOf(dropped), duplicate: false, position: session.position(), acknowledgement: null }
    }
    return await deliver(deps, files, { mailbox, mail, session, record, at })
  } catch (error) {
    // Two deliveries of one message raced: the one that lost answers what the winner recorded.
    const recorded = error instanceof ConflictError ? await recordedOutcome(deps, recordStream) : null
    if (recorded) return { outcome: recorded, duplicate: true, position: null, acknowledgement: null }
    throw error
  }
}

type Delivering = { mailbox: CaseMailboxRow; mail: ParsedInbound; session: ReturnType<typeof commandSession>; record: (event: InboundRecordEvent) => ReturnType<typeof companion>; at: string }

async function deliver(deps: MailDeps, files: FileStore, { mailbox, mail, session, record, at }: Delivering): Promise<Received> {
  const { db, clock, config } = deps
  const orgId = mailbox.org_id
  const key = threadTokenKey(config.jwtSecret)
  const [thread, contact, reopen] = await Promise.all([threadOf(db, key, orgId, mail), contactByEmail(db, orgId, mail.fromEmail), reopenPolicyOf(db, orgId)])
  const caseId = thread?.caseId ?? randomUUID()
  const requesterId = nameBasedId(`case-requester:${orgId}:${mail.fromEmail}`)
  const now = clock()
  const sent = await autoRepliesSince(db, orgId, requesterId, thread?.caseId ?? null, new Date(now.getTime() - AUTO_REPLY_WINDOW_MS))
  const message: InboundMessage = {
    message_id: mail.messageId, mailbox_id: mailbox.id, from_email: mail.fromEmail, from_name: mail.fromName, subject: mail.subject, text: mail.text,
    in_reply_to: mail.inReplyTo, references: mail.references, sent_at: mail.sentAt, contact_id: contact?.id ?? null, requester_id: requesterId, threaded_by: thread?.by ?? null,
  }
  const open = thread ? undefined : await openingOf(deps, caller(orgId), caseId, mailbox, mail, contact?.id ?? null, at)
  const attachments = await storeAttachments(files, orgId, mail)
  const command: CaseCommand = {
    type: 'ReceiveCaseEmail', orgId, at, today: at.slice(0, 10), message, attachments, reopen, open,
    autoReply: autoReplyVerdict(sent, threadMessageId(key, orgId, caseId, randomUUID().slice(0, 8), domainOf(config.mailFrom))),
  }
  try {
    const { events } = await session.run(caseDecider, caseStream(caseId), command, { also: [record({ type: 'InboundMailAccepted', data: { org_id: orgId, mailbox_id: mailbox.id, message_id: mail.messageId, case_id: caseId, created_case: !thread, at } })] })
    // A case the mail opened unassigned goes through the routing rules, as one opened through the API does, with the mail's sender domain and mailbox.
    if (open && !open.input.assigned_to.length) await routeCase(deps, caller(orgId), caseId, { from_email_domain: domainOf(mail.fromEmail).toLowerCase(), mailbox_id: mailbox.id }, session)
    const received = events.find((e): e is CaseEmailReceived => e.type === 'CaseEmailReceived')
    const acknowledgement = acknowledgementOf(received?.data.auto_reply ?? null, { caseId, caseName: open?.input.name ?? thread?.name ?? '', created: !thread, to: mail.fromEmail, subject: mail.subject, inReplyTo: mail.messageId, references: mail.references })
    return { outcome: { case_id: caseId, created_case: !thread }, duplicate: false, position: session.position(), acknowledgement }
  } catch (error) {
    await Promise.all(attachments.map((a) => files.remove(a.storage_key)))
    throw error
  }
}

const caller = (orgId: string): Caller => ({ orgId, profileId: null, isAdmin: false })

/** The case a mail with no thread opens: its subject as the name, the mailbox's defaults, the sender's contact when known. Its text stays in the (sealed) message. */
async function openingOf(deps: MailDeps, by: Caller, caseId: string, mailbox: CaseMailboxRow, mail: ParsedInbound, contactId: string | null, at: string) {
  const calendar = await currentBusinessCalendar(deps.db, by.orgId)
  const input = { name: caseNameOf(mail.subject), priority: mailbox.default_priority, case_type: mailbox.default_case_type, assigned_to: mailbox.default_assignee ? [mailbox.default_assignee] : [], contacts: contactId ? [contactId] : [] }
  // Mail cannot fill custom fields: none are checked, so a required one does not refuse a customer's mail.
  return { caseId, orgId: by.orgId, actor: { profileId: null, isAdmin: false, isSuperuser: false }, input, customFields: [], calendarVersion: calendar.version, at }
}


