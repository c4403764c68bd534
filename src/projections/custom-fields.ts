import { sql } from 'kysely'
import type { Kysely } from 'kysely'
import { customFieldStreams } from '../commands/custom-field/custom-field.ts'
import type { CustomFieldEvent, CustomFieldModule } from '../commands/custom-field/custom-field.ts'
import { insertRowsOnce } from '../db/insert-rows.ts'
import type { RecordedEvent } from '../eventstore/event-store.ts'
import { applyInRuns, domainEventOf } from './projector.ts'
import { fetchPage } from './records.ts'
import type { Projector } from './projector.ts'

/**
 * The custom field definitions read model: one row per definition; a deleted one stays
 * (is_deleted) but no query here returns it. `options` is a JSON list, empty unless select.
 * `position` is the log position of the definition's creation: creation order, also within one
 * clock tick, and the same after a rebuild.
 */
type Defined = Extract<CustomFieldEvent, { type: 'CustomFieldDefined' }>
/** The definition as created (then changed), plus the row's own columns; `position` is a bigint, as pg returns it. */
export type CustomFieldDefinitionRow = Omit<Defined['data'], 'field_id' | 'at'> & { id: string; is_deleted: boolean; position: string; created_at: Date; updated_at: Date }

type Tables = { custom_field_definitions: CustomFieldDefinitionRow }

export const customFieldsProjector: Projector = {
  name: 'custom_fields',
  version: 1,
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
  async apply(trx, recorded) {
    const db = trx as unknown as Kysely<Tables>
    const event = domainEventOf<CustomFieldEvent>(recorded)
    if (event.type === 'CustomFieldDefined') return insertDefined(db, [recorded])
    const { at, options, ...changes } = event.type === 'CustomFieldChanged' ? event.data : { at: event.data.at, options: undefined, is_active: false, is_deleted: true }
    await db
      .updateTable('custom_field_definitions')
      .set({ ...changes, ...(options !== undefined && { options: jsonList(options) }), updated_at: new Date(at) })
      .where('id', '=', customFieldStreams.idOf(recorded.streamName))
      .execute()
  },
  applyBatch: (trx, events) => applyInRuns(events, 'CustomFieldDefined', (run) => insertDefined(trx as unknown as Kysely<Tables>, run), (event) => customFieldsProjector.apply(trx, event)),
}

async function insertDefined(db: Kysely<Tables>, defined: readonly RecordedEvent[]): Promise<void> {
  const rows = defined.map((recorded) => {
    const { field_id: _id, options, at, ...data } = domainEventOf<Defined>(recorded).data
    return { ...data, id: customFieldStreams.idOf(recorded.streamName), options, is_deleted: false, position: recorded.position.prepare.toString(), created_at: new Date(at), updated_at: new Date(at) }
  })
  await insertRowsOnce(db, 'custom_field_definitions', 'id', rows)
}

// pg would send a JS array as a PostgreSQL array; jsonb wants the JSON text.
const jsonList = (list: readonly string[]) => JSON.stringify(list) as unknown as string[]

const readDb = (db: Kysely<any>) => db as Kysely<Tables>

const liveOf = (db: Kysely<any>, orgId: string) => readDb(db).selectFrom('custom_field_definitions').where('org_id', '=', orgId).where('is_deleted', '=', false)

export type DefinitionListFilter = { limit: number; offset: number; module?: CustomFieldModule }

/** A page of the organization's definitions (active and inactive), by module then creation order. */
export function listDefinitions(db: Kysely<any>, orgId: string, filter: DefinitionListFilter): Promise<{ count: number; rows: CustomFieldDefinitionRow[] }> {
  const query = filter.module ? liveOf(db, orgId).where('module', '=', filter.module) : liveOf(db, orgId)
  return fetchPage<CustomFieldDefinitionRow>(query, filter, (q) => q.orderBy('module').orderBy('position'))
}

/**
 * The definitions of one module, in creation order: what record writes validate against (all of
 * them, for values.ts) and what a record's detail shows (`activeOnly`).
 */
export function definitionsOf(db: Kysely<any>, orgId: string, module: CustomFieldModule, options: { activeOnly: boolean }): Promise<CustomFieldDefinitionRow[]> {
  const query = liveOf(db, orgId).selectAll().where('module', '=', module)
  return (options.activeOnly ? query.where('is_active', '=', true) : query).orderBy('position').execute()
}

/** A live definition of the organization, or undefined: another org's id, or a deleted one's, looks exactly like a missing one. */
export function definitionOf(db: Kysely<any>, orgId: string, id: string): Promise<CustomFieldDefinitionRow | undefined> {
  return liveOf(db, orgId).selectAll().where('id', '=', id).executeTakeFirst()
}
