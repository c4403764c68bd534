import type { FastifySchemaCompiler } from 'fastify'
import { validatorCompiler as zodValidatorCompiler } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { ZodType } from 'zod'
import { CF_PREFIX } from '../../commands/custom-field/values.ts'

export const UNKNOWN_FIELD = 'Unknown field: this route does not store it (check its spelling against the API document)'

/**
 * The catchall of a body that takes custom field values as `cf_<key>` entries but still refuses any
 * other key it does not know (a task's). Recognised by identity: use this very schema.
 */
export const CUSTOM_FIELD_ENTRIES = z.unknown().describe('`cf_<key>`: a value of the custom field <key>')

/** Whether a body schema knows a top-level key. */
type KnownKey = (key: string) => boolean

/**
 * The top-level keys a body schema knows, or undefined where any key is welcome: a schema with a
 * catchall (deal and lead bodies take `cf_<key>` and ignore output-only fields a client sends back,
 * as the original does, and say so in their description), a record, or a shape this cannot see.
 * A `CUSTOM_FIELD_ENTRIES` catchall knows its fields and every `cf_<key>`.
 */
export function knownKeysOf(schema: ZodType): KnownKey | undefined {
  const def = (schema as unknown as { _zod: { def: Record<string, unknown> } })._zod.def
  switch (def.type) {
    case 'object': {
      const fields = new Set(Object.keys(def.shape as object))
      const catchall = def.catchall as ZodType | undefined
      if (catchall === CUSTOM_FIELD_ENTRIES) return (key) => fields.has(key) || key.startsWith(CF_PREFIX)
      return catchall && catchall._zod.def.type !== 'never' ? undefined : (key) => fields.has(key)
    }
    case 'pipe':
      return knownKeysOf(def.in as ZodType)
    case 'optional':
    case 'nullable':
    case 'default':
    case 'readonly':
      return knownKeysOf(def.innerType as ZodType)
    case 'union': {
      const known = (def.options as ZodType[]).map(knownKeysOf)
      return known.some((k) => k === undefined) ? undefined : (key) => known.some((k) => k!(key))
    }
    case 'intersection': {
      const [left, right] = [knownKeysOf(def.left as ZodType), knownKeysOf(def.right as ZodType)]
      return left && right ? (key) => left(key) || right(key) : undefined
    }
    default:
      return undefined
  }
}

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * fastify-type-provider-zod's validator, refusing body keys the route's schema does not know: zod
 * would drop them, and a client that misspells a field would never learn it. The refusal names each
 * key (`errors.<key>`) beside any other problem of the body. Query strings keep zod's leniency: a
 * link may carry parameters meant for someone else (utm_…, a client's own).
 */
export const validatorCompiler: FastifySchemaCompiler<ZodType> = (route) => {
  const validate = zodValidatorCompiler(route)
  const known = route.httpPart === 'body' ? knownKeysOf(route.schema) : undefined
  if (!known) return validate
  return (data) => {
    const unknown = isPlainObject(data) ? Object.keys(data).filter((key) => !known(key)) : []
    if (unknown.length === 0) return validate(data)
    const refusal = zodValidatorCompiler({ ...route, schema: z.object(Object.fromEntries(unknown.map((key) => [key, z.never({ error: UNKNOWN_FIELD })]))) })(data) as { error?: unknown[] }
    const other = validate(data) as { error?: unknown[] }
    return { error: [...(refusal.error ?? []), ...(other.error ?? [])] } as ReturnType<typeof validate>
  }
}
