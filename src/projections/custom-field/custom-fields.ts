import { sql } from 'kysely'
import { customFieldStreams } from '../../commands/custom-field/custom-field.ts'
import type { CustomFieldEvent, CustomFieldModule, CustomFieldOption } from '../../commands/custom-field/custom-field.ts'
import type { FreshTables } from '../../db/copy-rows.ts'
import { insertRowsOnce } from '../../db/insert-rows.ts'
import type { RecordedEvent } from '../../eventstore/event-store.ts'
import { applyInRuns } from '../kernel/projector.ts'
import { domainEventOf } from '../../events/versions.ts'
import type { Projector } from '../kernel/projector.ts'
import type { CustomFieldDefinitionRow, Defined } from './tables.ts'
import type { Db } from '../../db/database.ts'

export type { CustomFieldDefinitionRow } from './tables.ts'

export const customFieldsProjector: Projector = {
  name: 'custom_fields',
  // 2: options as {value, label} pairs, is_filterable, display_order.
  version: 2,
  eventTypes: ['CustomFieldDefined', 'CustomFieldChanged', 'CustomFieldRemoved'],
  tables: ['custom_field_definitions'],
  async createTables(db) {
    await sql`CREATE TABLE custom_field_definitions (
      id uuid PRIMARY KEY,
      org_id uuid NOT NULL,
      module text NOT NULL,
      key text NOT NULL,
      label text NOT NULL,
      type text NOT NULL,
      options jsonb NOT NULL,
      required boolean NOT NULL,
      is_filterable boolean NOT NULL,
      display_order integer NOT NULL,
      is_active boolean NOT NULL,
      is_deleted boolean NOT NULL DEFAULT false,
      position bigint NOT NULL,
      created_by uuid,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`.execute(db)
    await sql`CREATE INDEX custom_field_definitions_org_module ON custom_field_definitions (org_id, module, position)`.execute(db)
  },
  // Every statement sets values rather than adjusting them, so applying an event twice changes nothing.
  async apply(db, recorded) {
    const event = domainEventOf<CustomFieldEvent>(recorded)
    if (event.type === 'CustomFieldDefined') return insertDefined(db, [recorded])
    const { at, options, ...changes } = event.type === 'CustomFieldChanged' ? event.data : { at: event.data.at, options: undefined, is_active: false, is_deleted: true }
    await db
      .updateTable('custom_field_definitions')
      .set({ ...changes, ...(options !== undefined && { options: jsonList(options) }), updated_at: new Date(at) })
      .where('id', '=', customFieldStreams.idOf(recorded.streamName))
      .execute()
  },
  // A field's stream is defined once: into a rebuild's fresh tables, its row is copied.
  applyBatch: (trx, events, fresh) => applyInRuns(events, 'CustomFieldDefined', (run) => insertDefined(trx, run, fresh), (event) => customFieldsProjector.apply(trx, event)),
}

async function insertDefined(db: Db, defined: readonly RecordedEvent[], fresh?: FreshTables): Promise<void> {
  const rows = defined.map((recorded) => {
    const { field_id: _id, options, at, ...data } = domainEventOf<Defined>(recorded).data
    return { ...data, id: customFieldStreams.idOf(recorded.streamName), options, is_deleted: false, position: recorded.position.prepare.toString(), created_at: new Date(at), updated_at: new Date(at) }
  })
  await insertRowsOnce(db, 'custom_field_definitions', 'id', rows, fresh)
}

// pg would send a JS array as a PostgreSQL array; jsonb wants the JSON text.
const jsonList = (list: readonly CustomFieldOption[]) => JSON.stringify(list) as unknown as CustomFieldOption[]


const liveOf = (db: Db, orgId: string) => db.selectFrom('custom_field_definitions').where('org_id', '=', orgId).where('is_deleted', '=', false)

export type DefinitionListFilter = { module?: CustomFieldModule; activeOnly?: boolean }

/** The organization's definitions (active and inactive), by module, display_order, label, then creation. */
export function listDefinitions(db: Db, orgId: string, filter: DefinitionListFilter): Promise<CustomFieldDefinitionRow[]> {
  let query = liveOf(db, orgId).selectAll()
  if (filter.module) query = query.where('module', '=', filter.module)
  if (filter.activeOnly) query = query.where('is_active', '=', true)
  return query.orderBy('module').orderBy('display_order').orderBy(sql`lower(label)`).orderBy('position').execute()
}

/** The modules whose records carry custom values, and their read-model tables (each with org_id, is_deleted and a custom_fields object). */
const VALUE_TABLES: Partial<Record<CustomFieldModule, string>> = { opportunities: 'opportunities', leads: 'leads', tasks: 'tasks' }

/**
 * For each live definition of the organization, how many of its module's live records hold no
 * value for it (what marking a field required leaves behind: the rule binds new writes only). 0
 * for a module whose records carry no custom values yet.
 */
export async function recordsMissingValue(db: Db, orgId: string): Promise<Map<string, number>> {
  const definitions = await liveOf(db, orgId).select(['id', 'module', 'key']).execute()
  const missing = new Map<string, number>(definitions.map((d) => [d.id, 0]))
  for (const [module, table] of Object.entries(VALUE_TABLES)) {
    const keys = definitions.filter((d) => d.module === module)
    if (!keys.length) continue
    const counts = await sql<{ id: string; n: number }>`SELECT d.id, (SELECT count(*)::int FROM ${sql.table(table)} r WHERE r.org_id = ${orgId} AND NOT r.is_deleted AND NOT r.custom_fields ? d.key) AS n
      FROM custom_field_definitions d WHERE d.id = ANY (${keys.map((d) => d.id)}::uuid[])`.execute(db)
    for (const row of counts.rows) missing.set(row.id, row.n)
  }
  return missing
}

/**
 * The definitions of one module, in display order: what record writes validate against (all of
 * them, for values.ts) and what a record's detail shows (`activeOnly`).
 */
export function definitionsOf(db: Db, orgId: string, module: CustomFieldModule, options: { activeOnly: boolean }): Promise<CustomFieldDefinitionRow[]> {
  const query = liveOf(db, orgId).selectAll().where('module', '=', module)
  return (options.activeOnly ? query.where('is_active', '=', true) : query).orderBy('display_order').orderBy(sql`lower(label)`).orderBy('position').execute()
}

/** A live definition of the organization, or undefined: another org's id, or a deleted one's, looks exactly like a missing one. */
export function definitionOf(db: Db, orgId: string, id: string): Promise<CustomFieldDefinitionRow | undefined> {
  return liveOf(db, orgId).selectAll().where('id', '=', id).executeTakeFirst()
}
