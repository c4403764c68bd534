import { sql } from 'kysely'
import { mailboxStreams } from '../../commands/case-mail/mailbox.ts'
import type { MailboxEvent } from '../../commands/case-mail/mailbox.ts'
import type { ReopenPolicyEvent } from '../../commands/case-mail/reopen-policy.ts'
import { domainEventOf } from '../../events/versions.ts'
import type { Projector } from '../kernel/projector.ts'

/** The mailboxes and the reopen policies: settings, few per organization, applied one event at a time. */
export const caseMailSettingsProjector: Projector = {
  name: 'case_mail_settings',
  version: 1,
  eventTypes: ['CaseMailboxCreated', 'CaseMailboxUpdated', 'CaseMailboxDeleted', 'CaseReopenPolicySet'],
  tables: ['case_mailboxes', 'case_reopen_policies'],
  async createTables(db) {
    await db.schema
      .createTable('case_mailboxes')
      .addColumn('id', 'uuid', (c) => c.primaryKey())
      .addColumn('org_id', 'uuid', (c) => c.notNull())
      .addColumn('address', 'text', (c) => c.notNull())
      .addColumn('provider', 'text', (c) => c.notNull())
      .addColumn('default_priority', 'text', (c) => c.notNull())
      .addColumn('default_case_type', 'text')
      .addColumn('default_assignee', 'uuid')
      .addColumn('is_active', 'boolean', (c) => c.notNull())
      .addColumn('is_deleted', 'boolean', (c) => c.notNull().defaultTo(false))
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
      .execute()
    await sql`CREATE INDEX case_mailboxes_org ON case_mailboxes (org_id, address)`.execute(db)
    await db.schema
      .createTable('case_reopen_policies')
      .addColumn('org_id', 'uuid', (c) => c.primaryKey())
      .addColumn('is_enabled', 'boolean', (c) => c.notNull())
      .addColumn('reopen_window_days', 'integer', (c) => c.notNull())
      .addColumn('reopen_to_status', 'text', (c) => c.notNull())
      .addColumn('notify_assigned', 'boolean', (c) => c.notNull())
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
      .execute()
  },
  // Every statement sets values, so applying an event twice changes nothing.
  async apply(db, recorded) {
    const event = domainEventOf<MailboxEvent | ReopenPolicyEvent>(recorded)
    const at = new Date(event.data.at)
    switch (event.type) {
      case 'CaseMailboxCreated': {
        const { mailbox_id, created_by: _by, at: _at, ...fields } = event.data
        await db.insertInto('case_mailboxes').values({ id: mailbox_id, ...fields, is_deleted: false, created_at: at, updated_at: at }).onConflict((c) => c.column('id').doNothing()).execute()
        return
      }
      case 'CaseMailboxUpdated': {
        const { at: _at, ...changes } = event.data
        await db.updateTable('case_mailboxes').set({ ...changes, updated_at: at }).where('id', '=', mailboxStreams.idOf(recorded.streamName)).execute()
        return
      }
      case 'CaseMailboxDeleted':
        await db.updateTable('case_mailboxes').set({ is_deleted: true, is_active: false, updated_at: at }).where('id', '=', mailboxStreams.idOf(recorded.streamName)).execute()
        return
      case 'CaseReopenPolicySet': {
        const { org_id, by: _by, at: _at, ...policy } = event.data
        await db.insertInto('case_reopen_policies').values({ org_id, ...policy, updated_at: at }).onConflict((c) => c.column('org_id').doUpdateSet({ ...policy, updated_at: at })).execute()
        return
      }
    }
  },
}
