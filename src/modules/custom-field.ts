import { z } from 'zod'
import { CUSTOM_FIELD_MODULES, CUSTOM_FIELD_TYPES } from '../commands/custom-field/custom-field.ts'
import type { CustomFieldEvent } from '../commands/custom-field/custom-field.ts'
import { By, Id, at, eventsOf, noPersonalData } from '../events/event-schemas.ts'
import { customFieldsProjector } from '../projections/custom-field/custom-fields.ts'
import type { ModuleManifest } from './manifest.ts'

// Custom fields (custom_field-<id>): a select field's choice.
const FieldOption = z.strictObject({ value: z.string(), label: z.string() })

/** Custom fields: per-organization fields of deals, leads and tasks. */
export const customFieldModule: ModuleManifest = {
  name: 'custom-field',
  events: noPersonalData(eventsOf<CustomFieldEvent>()({
    // custom_field-<id>
    CustomFieldDefined: {
      stream: 'custom_field',
      description: 'A custom field was defined for a module (key, module and type never change; v2: options as {value, label} pairs, is_filterable, display_order).',
      data: z.strictObject({ field_id: Id, org_id: Id, module: z.enum(CUSTOM_FIELD_MODULES), key: z.string(), label: z.string(), type: z.enum(CUSTOM_FIELD_TYPES), options: z.array(FieldOption), required: z.boolean(), is_filterable: z.boolean(), display_order: z.number().int().min(0), is_active: z.boolean(), created_by: By, ...at }),
    },
    CustomFieldChanged: { stream: 'custom_field', description: 'A custom field changed label, required, options, filterable, display order or active: only the changed values (v2: options as pairs).', data: z.strictObject({ label: z.string().optional(), required: z.boolean().optional(), options: z.array(FieldOption).optional(), is_filterable: z.boolean().optional(), display_order: z.number().int().min(0).optional(), is_active: z.boolean().optional(), ...at }) },
    CustomFieldRemoved: { stream: 'custom_field', description: 'A custom field was (soft, finally) deleted.', data: z.strictObject(at) },
  })),
  routes: async (deps) => {
    const { customFieldRoutes } = await import('../http/custom-fields/custom-fields.ts')
    return [customFieldRoutes(deps)]
  },
  projectors: [customFieldsProjector],
  idKinds: [
    [/^\/api\/custom-fields\/\{id\}/, 'customField'],
  ],
}
