import { escalationPolicyStreams } from '../../commands/case-escalation/escalation-policy.ts'
import type { EscalationPolicyEvent } from '../../commands/case-escalation/escalation-policy.ts'
import { insertRowsOnce } from '../../db/insert-rows.ts'
import { domainEventOf } from '../../events/versions.ts'
import type { Projector } from '../kernel/projector.ts'

/** Escalation policies (commands/case-escalation/): what the settings page and the escalator read. */
export const escalationPoliciesProjector: Projector = {
  name: 'case_escalation_policies',
  version: 1,
  eventTypes: ['EscalationPolicyCreated', 'EscalationPolicyUpdated', 'EscalationPolicyDeleted'],
  tables: ['case_escalation_policies'],
  async createTables(db) {
    await db.schema
      .createTable('case_escalation_policies')
      .addColumn('id', 'uuid', (c) => c.primaryKey())
      .addColumn('org_id', 'uuid', (c) => c.notNull())
      .addColumn('priority', 'text', (c) => c.notNull())
      .addColumn('first_response_action', 'text', (c) => c.notNull())
      .addColumn('resolution_action', 'text', (c) => c.notNull())
      .addColumn('first_response_target', 'uuid')
      .addColumn('resolution_target', 'uuid')
      .addColumn('notify_team', 'uuid')
      .addColumn('is_active', 'boolean', (c) => c.notNull())
      .addColumn('revision', 'bigint', (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
      .execute()
  },
  // Each change applies only past the row's revision: applying an event twice changes nothing. A
  // policy deleted and written again reuses its stream (its id is its priority's), so its row comes back.
  async apply(db, recorded) {
    const event = domainEventOf<EscalationPolicyEvent>(recorded)
    const id = escalationPolicyStreams.idOf(recorded.streamName)
    const revision = recorded.revision.toString()
    switch (event.type) {
      case 'EscalationPolicyCreated': {
        const { policy_id: _id, created_by: _by, at, ...fields } = event.data
        return insertRowsOnce(db, 'case_escalation_policies', 'id', [{ id, ...fields, revision, created_at: at, updated_at: at }])
      }
      case 'EscalationPolicyUpdated': {
        const { by: _by, at, ...changes } = event.data
        await db.updateTable('case_escalation_policies').set({ ...changes, revision, updated_at: new Date(at) }).where('id', '=', id).where('revision', '<', revision).execute()
        return
      }
      case 'EscalationPolicyDeleted':
        await db.deleteFrom('case_escalation_policies').where('id', '=', id).where('revision', '<', revision).execute()
    }
  },
}
