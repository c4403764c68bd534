import { NotFoundError, ValidationError } from '../../errors.ts'
import type { Decider } from '../decider.ts'
import { streamCategory } from '../streams.ts'

/**
 * A custom field definition: an extra value the records of one module (deals for now) may carry,
 * validated on every record write (see values.ts). Its key is unique per organization and module
 * (a name claim, scope `custom_field_key:<module>`) and never changes; nor do its module and type.
 * Deactivating hides it and ignores its values on writes; deleting is soft and final.
 */
export const CUSTOM_FIELD_MODULES = ['opportunities', 'leads', 'accounts', 'contacts'] as const
export type CustomFieldModule = (typeof CUSTOM_FIELD_MODULES)[number]
export const CUSTOM_FIELD_TYPES = ['text', 'number', 'date', 'boolean', 'select'] as const
export type CustomFieldType = (typeof CUSTOM_FIELD_TYPES)[number]
export const CUSTOM_FIELD_KEY = /^[a-z][a-z0-9_]{0,49}$/

/** The name-claim scope that keeps keys unique within one module of an organization. */
export const customFieldKeyScope = (module: CustomFieldModule) => `custom_field_key:${module}`

// Events: the storage contract. `options` is always a list, empty unless the type is select.
export type CustomFieldEvent =
  | {
      type: 'CustomFieldDefined'
      data: { field_id: string; org_id: string; module: CustomFieldModule; key: string; label: string; type: CustomFieldType; options: string[]; required: boolean; is_active: boolean; created_by: string | null; at: string }
    }
  | { type: 'CustomFieldChanged'; data: { label?: string; required?: boolean; options?: string[]; is_active?: boolean; at: string } }
  | { type: 'CustomFieldRemoved'; data: { at: string } }

// Fold.
export type CustomFieldState = {
  exists: boolean
  orgId: string | null
  module: CustomFieldModule | null
  key: string
  type: CustomFieldType | null
  label: string
  options: string[]
  required: boolean
  isActive: boolean
  deleted: boolean
}

export const initialCustomFieldState = (): CustomFieldState => ({ exists: false, orgId: null, module: null, key: '', type: null, label: '', options: [], required: false, isActive: true, deleted: false })

export function evolveCustomField(state: CustomFieldState, event: CustomFieldEvent): CustomFieldState {
  switch (event.type) {
    case 'CustomFieldDefined': {
      const { org_id, module, key, type, label, options, required, is_active } = event.data
      return { ...state, exists: true, orgId: org_id, module, key, type, label, options, required, isActive: is_active }
    }
    case 'CustomFieldChanged': {
      const { label, required, options, is_active } = event.data
      return { ...state, label: label ?? state.label, required: required ?? state.required, options: options ?? state.options, isActive: is_active ?? state.isActive }
    }
    case 'CustomFieldRemoved':
      return { ...state, deleted: true, isActive: false }
  }
}

// Decisions. Time, ids and the caller arrive in the command; the org check makes other orgs' fields invisible.
export type CustomFieldCommand =
  | { type: 'DefineCustomField'; fieldId: string; orgId: string; module: CustomFieldModule; key: string; label: string; fieldType: CustomFieldType; options: string[]; required: boolean; isActive: boolean; actorId: string | null; at: string }
  | {
      type: 'ChangeCustomField'
      orgId: string
      label?: string
      required?: boolean
      options?: string[]
      isActive?: boolean
      /** Immutable: accepted only when equal to the stored value (a client echoing the whole definition). */
      module?: string
      key?: string
      fieldType?: string
      at: string
    }
  | { type: 'RemoveCustomField'; orgId: string; at: string }

function checkOptions(type: CustomFieldType, options: readonly string[]): void {
  if (type !== 'select') {
    if (options.length) throw new ValidationError({ options: ['Only select fields have options.'] })
    return
  }
  if (!options.length) throw new ValidationError({ options: ['A select field needs at least one option.'] })
  if (options.some((o) => o.trim() === '')) throw new ValidationError({ options: ['Options may not be blank.'] })
  if (new Set(options).size !== options.length) throw new ValidationError({ options: ['Options must be distinct.'] })
}

function existing(state: CustomFieldState, orgId: string): void {
  if (!state.exists || state.orgId !== orgId || state.deleted) throw new NotFoundError()
}

const sameList = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((v, i) => v === b[i])

function decideChange(command: Extract<CustomFieldCommand, { type: 'ChangeCustomField' }>, state: CustomFieldState): CustomFieldEvent[] {
  existing(state, command.orgId)
  const immutable = { module: [command.module, state.module], key: [command.key, state.key], type: [command.fieldType, state.type] } as const
  for (const [field, [given, stored]] of Object.entries(immutable)) {
    if (given !== undefined && given !== stored) throw new ValidationError({ [field]: [`The ${field} of a custom field cannot be changed (it is "${stored}").`] })
  }
  if (command.options !== undefined) checkOptions(state.type!, command.options)
  const changes: { label?: string; required?: boolean; options?: string[]; is_active?: boolean } = {}
  if (command.label !== undefined && command.label !== state.label) changes.label = command.label
  if (command.required !== undefined && command.required !== state.required) changes.required = command.required
  if (command.options !== undefined && !sameList(command.options, state.options)) changes.options = command.options
  if (command.isActive !== undefined && command.isActive !== state.isActive) changes.is_active = command.isActive
  return Object.keys(changes).length ? [{ type: 'CustomFieldChanged', data: { ...changes, at: command.at } }] : []
}

export function decideCustomField(command: CustomFieldCommand, state: CustomFieldState): CustomFieldEvent[] {
  switch (command.type) {
    case 'DefineCustomField': {
      if (state.exists) return []
      const { fieldId, orgId, module, key, label, fieldType, options, required, isActive, actorId, at } = command
      if (!CUSTOM_FIELD_KEY.test(key)) throw new ValidationError({ key: [`Expected a lowercase key matching ${CUSTOM_FIELD_KEY.source}.`] })
      checkOptions(fieldType, options)
      return [{ type: 'CustomFieldDefined', data: { field_id: fieldId, org_id: orgId, module, key, label, type: fieldType, options, required, is_active: isActive, created_by: actorId, at } }]
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
