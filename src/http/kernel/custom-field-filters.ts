import { CF_PREFIX, customFieldFilter } from '../../commands/custom-field/values.ts'
import type { CustomValues, Definition } from '../../commands/custom-field/values.ts'

/**
 * The `cf_<key>=value` filters of a list query (§4.1) as the values a record must hold: undefined
 * when none is given (a repeated key takes its last value, a blank one is no filter), null when one
 * matches nothing (no active definition has the key, or the value is malformed for its type).
 */
export function customFieldFilters(query: Readonly<Record<string, unknown>>, definitions: readonly Definition[]): CustomValues | null | undefined {
  const given: Record<string, string> = {}
  for (const [name, value] of Object.entries(query)) {
    const last = Array.isArray(value) ? value.at(-1) : value
    if (name.startsWith(CF_PREFIX) && typeof last === 'string' && last.trim() !== '') given[name.slice(CF_PREFIX.length)] = last.trim()
  }
  return Object.keys(given).length ? customFieldFilter(definitions, given) : undefined
}
