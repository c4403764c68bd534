import { z } from 'zod'
import { CUSTOM_FIELD_MODULES } from '../../commands/custom-field/custom-field.ts'
import type { CustomFieldModule, CustomFieldType } from '../../commands/custom-field/custom-field.ts'
import type { CustomFieldDefinitionRow } from '../../projections/custom-field/custom-fields.ts'

/**
 * The shapes of a custom field definition (the original's CustomFieldDefinitionSerializer), which
 * the records that carry custom values (deals, leads, tasks) also answer with. The API speaks the
 * original's names; the events and read model keep theirs (module, type, required): mapped here.
 */

/** The original's target models, by module. */
export const TARGET_MODELS = {
  accounts: 'Account',
  cases: 'Case',
  contacts: 'Contact',
  estimates: 'Estimate',
  invoices: 'Invoice',
  leads: 'Lead',
  opportunities: 'Opportunity',
  recurring_invoices: 'RecurringInvoice',
  tasks: 'Task',
} as const satisfies Record<CustomFieldModule, string>
export type TargetModelName = (typeof TARGET_MODELS)[CustomFieldModule]
const TARGET_MODEL_NAMES = CUSTOM_FIELD_MODULES.map((module) => TARGET_MODELS[module]) as [TargetModelName, ...TargetModelName[]]
export const moduleOfTarget = (target: TargetModelName): CustomFieldModule => CUSTOM_FIELD_MODULES.find((module) => TARGET_MODELS[module] === target)!

/** The original's field types, by stored type. */
export const FIELD_TYPES = { text: 'text', textarea: 'textarea', number: 'number', date: 'date', boolean: 'checkbox', select: 'dropdown' } as const satisfies Record<CustomFieldType, string>
export type FieldTypeName = (typeof FIELD_TYPES)[CustomFieldType]
const FIELD_TYPE_NAMES = Object.values(FIELD_TYPES) as [FieldTypeName, ...FieldTypeName[]]
export const typeOfFieldType = (name: FieldTypeName): CustomFieldType => (Object.keys(FIELD_TYPES) as CustomFieldType[]).find((type) => FIELD_TYPES[type] === name)!

export const TargetModel = z.enum(TARGET_MODEL_NAMES, { error: `Expected one of ${TARGET_MODEL_NAMES.join(', ')}.` }).describe('The records the field belongs to (values are carried by Opportunity, Lead and Task records today)')
export const FieldType = z.enum(FIELD_TYPE_NAMES, { error: `Expected one of ${FIELD_TYPE_NAMES.join(', ')}.` })
export const FieldOption = z.object({ value: z.string().describe('What records store'), label: z.string().describe('What people read') })

export const CustomField = z.object({
  id: z.uuid(),
  target_model: TargetModel,
  key: z.string().describe('The key of the value in a record\'s custom_fields (and cf_<key>); never changes'),
  label: z.string(),
  field_type: FieldType,
  options: z.array(FieldOption).describe('The choices of a dropdown field; empty for other types'),
  is_required: z.boolean(),
  is_filterable: z.boolean(),
  display_order: z.number().int(),
  is_active: z.boolean().describe('An inactive field is hidden from records and new values for it are refused as unknown (dropped); records keep the values they hold'),
  created_by: z.uuid().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
})

export const fieldBody = (row: CustomFieldDefinitionRow): z.infer<typeof CustomField> => ({
  id: row.id,
  target_model: TARGET_MODELS[row.module],
  key: row.key,
  label: row.label,
  field_type: FIELD_TYPES[row.type],
  options: row.options,
  is_required: row.required,
  is_filterable: row.is_filterable,
  display_order: row.display_order,
  is_active: row.is_active,
  created_by: row.created_by,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
})
