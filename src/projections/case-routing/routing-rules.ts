import { sql } from 'kysely'
import { routingRuleStreams } from '../../commands/case-routing/routing-rule.ts'
import type { RoutingRuleEvent } from '../../commands/case-routing/routing-rule.ts'
import type { Db } from '../../db/database.ts'
import { insertRowsOnce } from '../../db/insert-rows.ts'
import { domainEventOf } from '../../events/versions.ts'
import type { Projector } from '../kernel/projector.ts'

async function createTables(db: Db): Promise<void> {
  await db.schema
    .createTable('case_routing_rules')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('org_id', 'uuid', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('priority_order', 'integer', (c) => c.notNull())
    .addColumn('is_active', 'boolean', (c) => c.notNull())
    .addColumn('conditions', 'jsonb', (c) => c.notNull())
    .addColumn('strategy', 'text', (c) => c.notNull())
    .addColumn('stop_processing', 'boolean', (c) => c.notNull())
    .addColumn('target_assignees', sql`uuid[]`, (c) => c.notNull())
    .addColumn('target_team', 'uuid')
    .addColumn('next_index', 'integer')
    .addColumn('revision', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute()
  await db.schema
    .createTable('case_routings')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'uuid', (c) => c.notNull())
    .addColumn('rule_id', 'uuid', (c) => c.notNull())
    .addColumn('case_id', 'uuid', (c) => c.notNull())
    .addColumn('assigned_to', 'uuid')
    .addColumn('team', 'uuid')
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('routed_at', 'timestamptz', (c) => c.notNull())
    .execute()
}

async function createIndexes(db: Db): Promise<void> {
  await sql`CREATE INDEX case_routings_org_time ON case_routings (org_id, routed_at)`.execute(db)
}

// jsonb wants the JSON text (pg would send an array as a PostgreSQL array).
const json = <T>(value: T): T => JSON.stringify(value) as unknown as T

/** Routing rules and the cases they routed (commands/case-routing/): what the settings page and the rule walk's order read. */
export const caseRoutingProjector: Projector = {
  name: 'case_routing',
  version: 1,
  eventTypes: ['RoutingRuleCreated', 'RoutingRuleUpdated', 'RoutingRuleDeleted', 'CaseRouted'],
  tables: ['case_routing_rules', 'case_routings'],
  createTables,
  createIndexes,
  // Each change applies only past the row's revision: applying an event twice changes nothing.
  async apply(db, recorded) {
    const event = domainEventOf<RoutingRuleEvent>(recorded)
    const id = routingRuleStreams.idOf(recorded.streamName)
    const revision = recorded.revision.toString()
    const newer = db.updateTable('case_routing_rules').where('id', '=', id).where('revision', '<', revision)
    switch (event.type) {
      case 'RoutingRuleCreated': {
        const { rule_id: _id, org_id, created_by: _by, at, ...fields } = event.data
        return insertRowsOnce(db, 'case_routing_rules', 'id', [{ id, org_id, ...fields, next_index: null, revision, created_at: at, updated_at: at }])
      }
      case 'RoutingRuleUpdated': {
        const { by: _by, at, conditions, ...changes } = event.data
        await newer.set({ ...changes, ...(conditions && { conditions: json(conditions) }), revision, updated_at: new Date(at) }).execute()
        return
      }
      case 'RoutingRuleDeleted':
        await db.deleteFrom('case_routing_rules').where('id', '=', id).execute()
        return
      case 'CaseRouted': {
        const { case_id, assigned_to, team, reason, next_index, at } = event.data
        // Routing is no edit: the rule's `updated_at` stays.
        await newer.set({ revision, ...(next_index !== null && { next_index }) }).execute()
        const orgId = await db.selectFrom('case_routing_rules').select('org_id').where('id', '=', id).executeTakeFirst()
        if (orgId) await insertRowsOnce(db, 'case_routings', 'id', [{ id: `${recorded.streamName}@${revision}`, org_id: orgId.org_id, rule_id: id, case_id, assigned_to, team, reason, routed_at: at }])
      }
    }
  },
}
