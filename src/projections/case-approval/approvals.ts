import { sql } from 'kysely'
import type { CaseApprovalEvent } from '../../commands/case-approval/approval.ts'
import { approvalRuleStreams } from '../../commands/case-approval/rules.ts'
import type { ApprovalRuleEvent } from '../../commands/case-approval/rules.ts'
import type { Db } from '../../db/database.ts'
import { insertRowsOnce } from '../../db/insert-rows.ts'
import { domainEventOf } from '../../events/versions.ts'
import type { Projector } from '../kernel/projector.ts'

async function createTables(db: Db): Promise<void> {
  await db.schema
    .createTable('case_approval_rules')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('org_id', 'uuid', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('trigger_event', 'text', (c) => c.notNull())
    .addColumn('match_priority', 'text')
    .addColumn('match_case_type', 'text')
    .addColumn('match_team', 'uuid')
    .addColumn('approver_role', 'text', (c) => c.notNull())
    .addColumn('approvers', sql`uuid[]`, (c) => c.notNull())
    .addColumn('is_active', 'boolean', (c) => c.notNull())
    .addColumn('revision', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute()
  await db.schema
    .createTable('case_approvals')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('org_id', 'uuid', (c) => c.notNull())
    .addColumn('case_id', 'uuid', (c) => c.notNull())
    .addColumn('rule_id', 'uuid', (c) => c.notNull())
    .addColumn('rule_name', 'text', (c) => c.notNull())
    .addColumn('requested_by', 'uuid', (c) => c.notNull())
    .addColumn('approver', 'uuid')
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('note', 'text', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('judged_on', 'jsonb')
    .addColumn('decided_at', 'timestamptz')
    .addColumn('revision', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute()
}

async function createIndexes(db: Db): Promise<void> {
  await sql`CREATE INDEX case_approvals_org_state ON case_approvals (org_id, state, created_at DESC)`.execute(db)
  await sql`CREATE INDEX case_approvals_case ON case_approvals (case_id, state)`.execute(db)
}

type Event = ApprovalRuleEvent | CaseApprovalEvent
const DECIDED = { CaseApprovalApproved: 'approved', CaseApprovalRejected: 'rejected', CaseApprovalCancelled: 'cancelled' } as const

/** Approval rules and requests (commands/case-approval/): what the settings page, the queue and the close gate read. */
export const caseApprovalsProjector: Projector = {
  name: 'case_approvals',
  version: 1,
  eventTypes: ['CaseApprovalRuleCreated', 'CaseApprovalRuleUpdated', 'CaseApprovalRuleDeleted', 'CaseApprovalRequested', 'CaseApprovalApproved', 'CaseApprovalRejected', 'CaseApprovalCancelled'],
  tables: ['case_approval_rules', 'case_approvals'],
  createTables,
  createIndexes,
  // Each change applies only past the row's revision: applying an event twice changes nothing.
  async apply(db, recorded) {
    const event = domainEventOf<Event>(recorded)
    const revision = recorded.revision.toString()
    switch (event.type) {
      case 'CaseApprovalRuleCreated': {
        const { rule_id: _id, org_id, created_by: _by, at, ...fields } = event.data
        return insertRowsOnce(db, 'case_approval_rules', 'id', [{ id: approvalRuleStreams.idOf(recorded.streamName), org_id, ...fields, revision, created_at: at, updated_at: at }])
      }
      case 'CaseApprovalRuleUpdated': {
        const { by: _by, at, ...changes } = event.data
        await db.updateTable('case_approval_rules').set({ ...changes, revision, updated_at: new Date(at) }).where('id', '=', approvalRuleStreams.idOf(recorded.streamName)).where('revision', '<', revision).execute()
        return
      }
      case 'CaseApprovalRuleDeleted':
        await db.deleteFrom('case_approval_rules').where('id', '=', approvalRuleStreams.idOf(recorded.streamName)).execute()
        return
      case 'CaseApprovalRequested': {
        const { approval_id, at, ...request } = event.data
        return insertRowsOnce(db, 'case_approvals', 'id', [{ id: approval_id, ...request, approver: null, state: 'pending', reason: '', judged_on: null, decided_at: null, revision, created_at: at, updated_at: at }])
      }
      default: {
        const { approval_id, by, at } = event.data
        const decided = { state: DECIDED[event.type], decided_at: new Date(at), updated_at: new Date(at), revision }
        const details = event.type === 'CaseApprovalApproved' ? { approver: by, note: event.data.note, judged_on: JSON.stringify(event.data.judged_on) as never } : event.type === 'CaseApprovalRejected' ? { approver: by, reason: event.data.reason } : {}
        await db.updateTable('case_approvals').set({ ...decided, ...details }).where('id', '=', approval_id).where('revision', '<', revision).execute()
      }
    }
  },
}
