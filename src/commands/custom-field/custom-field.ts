import { NotFoundError, ValidationError } from '../../errors.ts'
import type { Decider } from '../decider.ts'
import { streamCategory } from '../streams.ts'

/**
 * A custom field definition (the original's CustomFieldDefinition): an extra value the records of
 * one module may carry, validated on every record write (see values.ts; deals and leads carry
 * values today). Its key is unique per organization and module (a name claim, scope
 * `custom_field_key:<module>`) and never changes; nor do its module and type. Deactivating (what
 * DELETE does, as in the original) hides it and ignores its values on writes while records keep
 * them; the older final removal (CustomFieldRemoved) is still folded.
 *
 * The API speaks the original's names (target_model Opportunity, field_type dropdown, is_required);
 * the events keep theirs (module opportunities, type select, required): see the HTTP schemas.
 */
export const CUSTOM_FIELD_MODULES = ['opportunities', 'leads', 'accounts', 'contacts', 'cases', 'tasks', 'invoices', 'estimates', 'recurring_invoices'] as const
export type CustomFieldModule = (typeof CUSTOM_FIELD_MODULES)[number]
export const CUSTOM_FIELD_TYPES = ['text', 'textarea', 'number', 'date', 'boolean', 'select'] as const
export type CustomFieldType = (typeof CUSTOM_FIELD_TYPES)[number]
export const CUSTOM_FIELD_KEY = /^[a-z][a-z0-9_]{0,63}$/

/** One choice of a select (dropdown) field: `value` is what records store, `label` what people read. */
export type CustomFieldOption = { value: string; label: string }

/** The name-claim scope that keeps keys unique within one module of an organization. */
export const customFieldKeyScope = (module: CustomFieldModule) => `custom_field_key:${module}`

// Events: the storage contract. `options` is always a list, empty unless the type is select.
// v2 (src/events/versions.ts): options became {value, label} pairs (a v1 string is both), and
// definitions gained is_filterable and display_order.
export type CustomFieldEvent =
  | {
      type: 'CustomFieldDefined'
      data: {
        field_id: string
        org_id: string
        module: CustomFieldModule
        key: string
        label: string
        type: CustomFieldType
        options: CustomFieldOption[]
        required: boolean
        is_filterable: boolean
        display_order: number
        is_active: boolean
        created_by: string | null
        at: string
      }
    }
  | { type: 'CustomFieldChanged'; data: { label?: string; required?: boolean; options?: CustomFieldOption[]; is_filterable?: boolean; display_order?: number; is_active?: boolean; at: string } }
  | { type: 'CustomFieldRemoved'; data: { at: string } }

// Fold.
export type CustomFieldState = {
  exists: boolean
  orgId: string | null
  module: CustomFieldModule | null
  key: string
  type: CustomFieldType | null
  label: string
  options: CustomFieldOption[]
  required: boolean
  isFilterable: boolean
  displayOrder: number
  isActive: boolean
  deleted: boolean
}

export const initialCustomFieldState = (): CustomFieldState => ({ exists: false, orgId: null, module: null, key: '', type: null, label: '', options: [], required: false, isFilterable: false, displayOrder: 0, isActive: true, deleted: false })

export function evolveCustomField(state: CustomFieldState, event: CustomFieldEvent): CustomFieldState {
  switch (event.type) {
    case 'CustomFieldDefined': {
      const { org_id, module, key, type, label, options, required, is_filterable, display_order, is_active } = event.data
      return { ...state, exists: true, orgId: org_id, module, key, type, label, options, required, isFilterable: is_filterable, displayOrder: display_order, isActive: is_active }
    }
    case 'CustomFieldChanged': {
      const { label, required, options, is_filterable, display_order, is_active } = event.data
      return {
        ...state,
        label: label ?? state.label,
        required: required ?? state.required,
        options: options ?? state.options,
        isFilterable: is_filterable ?? state.isFilterable,
        displayOrder: display_order ?? state.displayOrder,
        isActive: is_active ?? state.isActive,
      }
    }
    case 'CustomFieldRemoved':
      return { ...state, deleted: true, isActive: false }
  }
}

// Decisions. Time, ids and the caller arrive in the command; the org check makes other orgs' fields invisible.
export type CustomFieldCommand =
  | {
      type: 'DefineCustomField'
      fieldId: string
      orgId: string
      module: CustomFieldModule
      key: string
      label: string
      fieldType: CustomFieldType
      options: CustomFieldOption[]
      required: boolean
      isFilterable?: boolean
      displayOrder?: number
      isActive: boolean
      actorId: string | null
      at: string
    }
  | {
      type: 'ChangeCustomField'
      orgId: string
      label?: string
      required?: boolean
      options?: CustomFieldOption[]
      isFilterable?: boolean
      displayOrder?: number
      isActive?: boolean
      /** Immutable: accepted only when equal to the stored value (a client echoing the whole definition). */
      module?: string
      key?: string
      fieldType?: string
      at: string
    }
  | { type: 'RemoveCustomField'; orgId: string; at: string }

function checkOptions(type: CustomFieldType, options: readonly CustomFieldOption[]): void {
  if (type !== 'select') {
    if (options.length) throw new ValidationError({ options: ['options is only valid for dropdown fields.'] })
    return
  }
  if (!options.length) throw new ValidationError({ options: ['Dropdown fields require a non-empty list of {value, label} pairs.'] })
  if (options.some((o) => o.value.trim() === '' || o.label.trim() === '')) throw new ValidationError({ options: ['Each option needs a non-empty value and label.'] })
  const duplicate = options.find((o, i) => options.findIndex((p) => p.value === o.value) !== i)
  if (duplicate) throw new ValidationError({ options: [`Duplicate dropdown value: "${duplicate.value}".`] })
}

function existing(state: CustomFieldState, orgId: string): void {
  if (!state.exists || state.orgId !== orgId || state.deleted) throw new NotFoundError()
}

const sameList = (a: readonly CustomFieldOption[], b: readonly CustomFieldOption[]) => a.length === b.length && a.every((v, i) => v.value === b[i]!.value && v.label === b[i]!.label)

function decideChange(command: Extract<CustomFieldCommand, { type: 'ChangeCustomField' }>, state: CustomFieldState): CustomFieldEvent[] {
  existing(state, command.orgId)
  const immutable = { module: [command.module, state.module], key: [command.key, state.key], type: [command.fieldType, state.type] } as const
  for (const [field, [given, stored]] of Object.entries(immutable)) {
    if (given !== undefined && given !== stored) throw new ValidationError({ [field]: [`The ${field} of a custom field cannot be changed (it is "${stored}").`] })
  }
  if (command.options !== undefined) checkOptions(state.type!, command.options)
  const changes: Omit<Extract<CustomFieldEvent, { type: 'CustomFieldChanged' }>['data'], 'at'> = {}
  if (command.label !== undefined && command.label !== state.label) changes.label = command.label
  if (command.required !== undefined && command.required !== state.required) changes.required = command.required
  if (command.options !== undefined && !sameList(command.options, state.options)) changes.options = command.options
  if (command.isFilterable !== undefined && command.isFilterable !== state.isFilterable) changes.is_filterable = command.isFilterable
  if (command.displayOrder !== undefined && command.displayOrder !== state.displayOrder) changes.display_order = command.displayOrder
  if (command.isActive !== undefined && command.isActive !== state.isActive) changes.is_active = command.isActive
  return Object.keys(changes).length ? [{ type: 'CustomFieldChanged', data: { ...changes, at: command.at } }] : []
}

export function decideCustomField(command: CustomFieldCommand, state: CustomFieldState): CustomFieldEvent[] {
  switch (command.type) {
    case 'DefineCustomField': {
      if (state.exists) return []
      const { fieldId, orgId, module, key, label, fieldType, options, required, isActive, actorId, at } = command
      const [is_filterable, display_order] = [command.isFilterable ?? false, command.displayOrder ?? 0]
      if (!CUSTOM_FIELD_KEY.test(key)) throw new ValidationError({ key: [`Expected a lowercase key matching ${CUSTOM_FIELD_KEY.source}.`] })
      checkOptions(fieldType, options)
      return [{ type: 'CustomFieldDefined', data: { field_id: fieldId, org_id: orgId, module, key, label, type: fieldType, options, required, is_filterable, display_order, is_active: isActive, created_by: actorId, at } }]
    }
    case 'ChangeCustomField':
      return decideChange(command, state)
    case 'RemoveCustomField':
      if (state.exists && state.orgId === command.orgId && state.deleted) return []
      existing(state, command.orgId)
      return [{ type: 'CustomFieldRemoved', data: { at: command.at } }]
  }
}

export const customFieldDecider: Decider<CustomFieldCommand, CustomFieldState, CustomFieldEvent> = { initialState: initialCustomFieldState, evolve: evolveCustomField, decide: decideCustomField }

export const customFieldStreams = streamCategory('custom_field')
