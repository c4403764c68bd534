import { sql } from 'kysely'
import type { CaseEmailReceived } from '../../commands/case/inbound.ts'
import { caseStreams } from '../../commands/case/case.ts'
import type { InboundRecordEvent } from '../../commands/case-mail/inbound-record.ts'
import { domainEventOf } from '../../events/versions.ts'
import { holdsNoPersonalData } from '../privacy/erasing.ts'

/**
 * Inbound messages by organization and Message-ID. A message's outcome (InboundMailAccepted or
 * Dropped) and, when it reached a case, its CaseEmailReceived come in one append; each fills its
 * own columns of the one row, so they may apply in either order, and twice.
 */
export const caseMailMessagesProjector = holdsNoPersonalData({
  name: 'case_mail_messages',
  version: 1,
  eventTypes: ['InboundMailAccepted', 'InboundMailDropped', 'CaseEmailReceived'],
  tables: ['case_mail_messages'],
  async createTables(db) {
    await db.schema
      .createTable('case_mail_messages')
      .addColumn('org_id', 'uuid', (c) => c.notNull())
      .addColumn('message_key', 'text', (c) => c.notNull())
      .addColumn('mailbox_id', 'uuid', (c) => c.notNull())
      .addColumn('case_id', 'uuid')
      .addColumn('created_case', 'boolean', (c) => c.notNull().defaultTo(false))
      .addColumn('drop_reason', 'text')
      .addColumn('requester_id', 'uuid')
      .addColumn('reopen_outcome', 'text')
      .addColumn('days_since_close', 'integer')
      .addColumn('auto_reply', 'text')
      .addColumn('received_at', 'timestamptz', (c) => c.notNull())
      .addPrimaryKeyConstraint('case_mail_messages_pk', ['org_id', 'message_key'])
      .execute()
  },
  async createIndexes(db) {
    await sql`CREATE INDEX case_mail_messages_mailbox ON case_mail_messages (mailbox_id, received_at)`.execute(db)
    await sql`CREATE INDEX case_mail_messages_replies ON case_mail_messages (org_id, requester_id, received_at) WHERE auto_reply = 'sent'`.execute(db)
    await sql`CREATE INDEX case_mail_messages_case ON case_mail_messages (case_id, received_at) WHERE auto_reply = 'sent'`.execute(db)
  },
  async apply(db, recorded) {
    const event = domainEventOf<InboundRecordEvent | CaseEmailReceived>(recorded)
    const at = new Date(event.data.at)
    if (event.type === 'CaseEmailReceived') {
      const { message_id, mailbox_id, requester_id, reopen, auto_reply } = event.data
      const orgId = String(recorded.metadata.orgId)
      const set = { case_id: caseStreams.idOf(recorded.streamName), requester_id, reopen_outcome: reopen?.outcome ?? null, days_since_close: reopen?.days_since_close ?? null, auto_reply: auto_reply?.status ?? null }
      await db.insertInto('case_mail_messages').values({ org_id: orgId, message_key: message_id.toLowerCase(), mailbox_id, received_at: at, created_case: false, ...set }).onConflict((c) => c.columns(['org_id', 'message_key']).doUpdateSet(set)).execute()
      return
    }
    const { org_id, message_id, mailbox_id } = event.data
    const set = event.type === 'InboundMailAccepted' ? { case_id: event.data.case_id, created_case: event.data.created_case } : { drop_reason: event.data.reason as string }
    await db.insertInto('case_mail_messages').values({ org_id, message_key: message_id.toLowerCase(), mailbox_id, received_at: at, created_case: false, ...set }).onConflict((c) => c.columns(['org_id', 'message_key']).doUpdateSet(set)).execute()
  },
}, "A message's key, ids and outcomes only: never the sender's address, name, subject or text (sealed in the log)")
