import type { CustomFieldEvent } from '../../commands/custom-field/custom-field.ts'

/**
 * The custom field definitions read model: one row per definition; a removed one (the older,
 * final delete) stays (is_deleted) but no query here returns it. `options` is a JSON list of
 * {value, label}, empty unless select.
 * `position` is the log position of the definition's creation: creation order, also within one
 * clock tick, and the same after a rebuild.
 */
export type Defined = Extract<CustomFieldEvent, { type: 'CustomFieldDefined' }>

/** The definition as created (then changed), plus the row's own columns; `position` is a bigint, as pg returns it. */
export type CustomFieldDefinitionRow = Omit<Defined['data'], 'field_id' | 'at'> & { id: string; is_deleted: boolean; position: string; created_at: Date; updated_at: Date }

export type CustomFieldTables = { custom_field_definitions: CustomFieldDefinitionRow }

// This module's tables join the one Database type (db/database.ts).
declare module '../../db/database.ts' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging: the tables are the members
  interface Database extends CustomFieldTables {}
}
