import { DomainError } from '../../errors.ts'
import type { CustomFieldOption, CustomFieldType } from './custom-field.ts'

/**
 * Custom field values of a record, checked against the organization's definitions for its module.
 * Pure: the caller reads the definitions (projections/custom-field/custom-fields.ts `definitionsOf`, without
 * `activeOnly`) and the record's stored values, and stores what comes back.
 */

/** What a value check needs of a definition; a custom_field_definitions row fits. */
export type Definition = { key: string; type: CustomFieldType; options: readonly CustomFieldOption[]; required: boolean; is_active: boolean }
export type CustomValue = string | number | boolean
/** Stored values by key: text, date (YYYY-MM-DD) and select as strings, number, boolean. No value is no key. */
export type CustomValues = Record<string, CustomValue>
export type CustomValuesInput = {
  /** The request body's `cf_<key>` entries; other keys are ignored, so the whole body may be passed. */
  cfFields: Record<string, unknown>
  /** The body's `custom_fields` object (also as JSON text, as a form body carries it); wins over `cf_<key>`. */
  customFields?: unknown
}
export type CustomValuesMode = 'create' | 'replace' | 'patch'

/** 400 `{ errors: { custom_fields: { <key>: [message] } } }`, or `{ custom_fields: [message] }` for a malformed object. */
export class CustomFieldsError extends DomainError {
  constructor(errors: Record<string, string[]> | string[]) {
    super(400, { custom_fields: errors })
  }
}

export const CF_PREFIX = 'cf_'
export const MAX_TEXT_LENGTH = 1000
export const MAX_TEXTAREA_LENGTH = 10000
const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

function isCalendarDate(text: string): boolean {
  const match = DATE.exec(text)
  if (!match) return false
  const [year, month, day] = match.slice(1).map(Number) as [number, number, number]
  const date = new Date(Date.UTC(year, month - 1, day))
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day
}

const asText = (raw: unknown): string | undefined => (typeof raw === 'string' ? raw.trim() : typeof raw === 'number' && Number.isFinite(raw) ? String(raw) : undefined)

/** What a record stores for an option (a plain string, as callers holding version-1 definitions pass, is its own value). */
const optionValue = (option: CustomFieldOption | string): string => (typeof option === 'string' ? option : option.value)

/** One incoming value as stored, or an error message. Blank text (or null) is "no value". */
type Coerced = { value: CustomValue | null } | { error: string }

function coerce(definition: Definition, raw: unknown): Coerced {
  if (raw === null || raw === undefined || (typeof raw === 'string' && raw.trim() === '')) return { value: null }
  switch (definition.type) {
    case 'text':
    case 'textarea': {
      const text = asText(raw) ?? (typeof raw === 'boolean' ? String(raw) : undefined)
      if (text === undefined) return { error: 'Expected text.' }
      const max = definition.type === 'text' ? MAX_TEXT_LENGTH : MAX_TEXTAREA_LENGTH
      return text.length > max ? { error: `Ensure this value has at most ${max} characters.` } : { value: text }
    }
    case 'number': {
      if (typeof raw === 'number') return Number.isFinite(raw) ? { value: raw } : { error: 'A valid number is required.' }
      const text = asText(raw)
      return text !== undefined && NUMBER.test(text) && Number.isFinite(Number(text)) ? { value: Number(text) } : { error: 'A valid number is required.' }
    }
    case 'date': {
      const text = asText(raw)
      return text !== undefined && isCalendarDate(text) ? { value: text } : { error: 'Expected a date as YYYY-MM-DD.' }
    }
    case 'boolean': {
      // The original's checkbox words: true/1/yes/on, false/0/no/off.
      if (typeof raw === 'boolean') return { value: raw }
      const text = asText(raw)?.toLowerCase()
      if (text !== undefined && ['true', '1', 'yes', 'on'].includes(text)) return { value: true }
      return text !== undefined && ['false', '0', 'no', 'off'].includes(text) ? { value: false } : { error: 'Expected true or false.' }
    }
    case 'select': {
      // A dropdown stores the option's value.
      const text = asText(raw)
      const values = definition.options.map(optionValue)
      return text !== undefined && values.includes(text) ? { value: text } : { error: `"${String(raw)}" is not a valid choice; expected one of: ${values.join(', ')}.` }
    }
  }
}

/** Whether a stored value still has the definition's type (a key reused after a delete may hold another type's value). */
function fits(definition: Definition, value: unknown): value is CustomValue {
  switch (definition.type) {
    case 'number':
      return typeof value === 'number'
    case 'boolean':
      return typeof value === 'boolean'
    default:
      return typeof value === 'string'
  }
}

/** The raw values the request names, by key: `cf_<key>` entries, then the `custom_fields` object over them. */
function incoming(input: CustomValuesInput): Record<string, unknown> {
  // No prototype: a `__proto__` or `constructor` key is just a (dropped) key here.
  const raw: Record<string, unknown> = Object.create(null)
  for (const [name, value] of Object.entries(input.cfFields)) if (name.startsWith(CF_PREFIX)) raw[name.slice(CF_PREFIX.length)] = value
  let object = input.customFields
  if (typeof object === 'string') {
    try {
      object = object.trim() === '' ? undefined : JSON.parse(object)
    } catch {
      throw new CustomFieldsError(['Expected an object of custom field values.'])
    }
  }
  if (object === undefined || object === null) return raw
  if (!isPlainObject(object)) throw new CustomFieldsError(['Expected an object of custom field values.'])
  return Object.assign(raw, object)
}

/** Whether the request names any custom value at all (a PATCH naming none leaves them alone). */
export const namesCustomValues = (input: CustomValuesInput): boolean =>
  input.customFields !== undefined || Object.keys(input.cfFields).some((name) => name.startsWith(CF_PREFIX))

/**
 * The record's custom values after a write. Values come from `cf_<key>` entries and the
 * `custom_fields` object (the object wins on conflict). Keys without an active definition are
 * dropped; each value is coerced from its form text (number '12.5', boolean 'true'/'false' (or yes/no, on/off, 1/0), date
 * YYYY-MM-DD, select one of the options' values, text trimmed and at most 1000 characters, textarea 10000); null or blank
 * clears it.
 *
 * - create, replace: the result holds the named values only (PUT replaces the visible set);
 * - patch: the named values merge into `current`.
 * In every mode, values `current` holds for inactive definitions are kept (deactivating loses no
 * data), while values of keys no definition knows (a deleted one) or of the wrong type are dropped.
 * Every active required definition must have a value in the result, also on patch.
 * All problems are gathered into one CustomFieldsError (400, `errors.custom_fields.<key>`).
 */
export function resolveCustomValues(definitions: readonly Definition[], current: Readonly<Record<string, unknown>>, input: CustomValuesInput, mode: CustomValuesMode): CustomValues {
  const raw = incoming(input)
  const result: CustomValues = {}
  const errors: Record<string, string[]> = {}
  for (const definition of definitions) {
    const { key } = definition
    const stored = Object.hasOwn(current, key) ? current[key] : undefined
    const keep = definition.is_active ? mode === 'patch' : mode !== 'create'
    if (keep && fits(definition, stored)) result[key] = stored
    if (!definition.is_active || !Object.hasOwn(raw, key)) continue
    const coerced = coerce(definition, raw[key])
    if ('error' in coerced) errors[key] = [coerced.error]
    else if (coerced.value === null) delete result[key]
    else result[key] = coerced.value
  }
  for (const definition of definitions) {
    if (definition.is_active && definition.required && !Object.hasOwn(result, definition.key) && !Object.hasOwn(errors, definition.key)) errors[definition.key] = ['This field is required.']
  }
  if (Object.keys(errors).length) throw new CustomFieldsError(errors)
  return result
}

/** A record's custom values after a create, PUT or PATCH (`resolveCustomValues`); a PATCH naming none keeps `current` untouched. */
export function customValuesAfter(definitions: readonly Definition[], current: CustomValues, custom: CustomValuesInput | undefined, mode: CustomValuesMode): CustomValues {
  if (mode === 'patch' && (custom === undefined || !namesCustomValues(custom))) return current
  return resolveCustomValues(definitions, current, custom ?? { cfFields: {} }, mode)
}

/**
 * The value a `cf_<key>=<raw>` filter compares for equality with the stored one: coerced like a
 * write (number, boolean, date; text and select trimmed, any text), or null when malformed (a
 * blank value, 'abc' for a number): such a filter matches nothing.
 */
export function customFilterValue(definition: Pick<Definition, 'type'>, raw: string): CustomValue | null {
  // Any select text: a record may still hold an option removed since.
  if (definition.type === 'select') return raw.trim() === '' ? null : raw.trim()
  const coerced = coerce({ ...definition, key: '', options: [], required: false, is_active: true }, raw)
  return 'error' in coerced ? null : coerced.value
}

/**
 * Every `cf_<key>` filter of a query (keys with the prefix, or without), as one object of stored
 * values a record must all hold, e.g. for `custom_fields @> ${JSON.stringify(object)}::jsonb`; or
 * null when some filter matches nothing (no active definition has the key, or the value is malformed).
 */
export function customFieldFilter(definitions: readonly Definition[], filters: Readonly<Record<string, string>>): CustomValues | null {
  const wanted: CustomValues = {}
  for (const [name, raw] of Object.entries(filters)) {
    const key = name.startsWith(CF_PREFIX) ? name.slice(CF_PREFIX.length) : name
    const definition = definitions.find((d) => d.is_active && d.key === key)
    const value = definition ? customFilterValue(definition, raw) : null
    if (value === null) return null
    wanted[key] = value
  }
  return wanted
}
