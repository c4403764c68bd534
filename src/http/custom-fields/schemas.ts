import { z } from 'zod'
import { CUSTOM_FIELD_MODULES, CUSTOM_FIELD_TYPES } from '../../commands/custom-field/custom-field.ts'
import type { CustomFieldDefinitionRow } from '../../projections/custom-fields.ts'

/** The shapes of a custom field definition, which the records that carry custom values (deals, leads) also answer with. */

export const Module = z.enum(CUSTOM_FIELD_MODULES).describe('The records the field belongs to')
export const FieldType = z.enum(CUSTOM_FIELD_TYPES)

export const CustomField = z.object({
  id: z.uuid(),
  module: Module,
  key: z.string(),
  label: z.string(),
  type: FieldType,
  options: z.array(z.string()).describe('The choices of a select field; empty for other types'),
  required: z.boolean(),
  is_active: z.boolean().describe('An inactive field is hidden from records and its values are ignored on writes'),
  created_by: z.uuid().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
})

export const fieldBody = (row: CustomFieldDefinitionRow) => ({
  id: row.id,
  module: row.module,
  key: row.key,
  label: row.label,
  type: row.type,
  options: row.options,
  required: row.required,
  is_active: row.is_active,
  created_by: row.created_by,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
})
