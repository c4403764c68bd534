import { isDeepStrictEqual } from 'node:util'
import fastJson from 'fast-json-stringify'
import { ResponseSerializationError, serializerCompiler as zodSerializerCompiler } from 'fastify-type-provider-zod'
import type { FastifySerializerCompiler } from 'fastify/types/schema.js'
import { z } from 'zod'

type Compiler = FastifySerializerCompiler<unknown>

/**
 * Answers are written by fast-json-stringify, compiled from each route's zod response schema turned
 * into JSON Schema: like zod's encode + JSON.stringify it writes only the declared fields (internal
 * columns of a read-model row never leak), but several times faster on big answers (a 100k-deal
 * list carries 10,000 page numbers, a board 600 cards; zod's per-value checks were a quarter of
 * their CPU). A schema JSON Schema cannot express keeps the zod serializer.
 *
 * fast-json-stringify writes what it is given without validating it. With `assert` (tests), every
 * answer is also encoded by zod: an answer that breaks its schema fails as it always did, and one
 * the fast serializer writes differently from zod fails too, so the suite checks the serializer
 * production uses against the schemas it was compiled from.
 */
export function responseSerializerCompiler(options: { assert: boolean }): Compiler {
  return (route) => {
    const schema = route.schema as z.ZodType
    // Compiled on first use: an app has hundreds of (route, status) schemas and most answers are never sent by a given process.
    let write: ((data: unknown) => string) | undefined
    const serialize = (data: unknown) => (write ??= compileFast(schema) ?? (zodSerializerCompiler(route as Parameters<typeof zodSerializerCompiler>[0]) as (data: unknown) => string))(data)
    if (!options.assert) return serialize
    return (data) => {
      const encoded = z.safeEncode(schema, data)
      if (!encoded.success) throw new ResponseSerializationError(route.method, route.url, { cause: encoded.error })
      const text = serialize(data)
      if (!isDeepStrictEqual(JSON.parse(text), JSON.parse(JSON.stringify(encoded.data)))) {
        throw new Error(`${route.method} ${route.url}: the fast serializer wrote ${text.slice(0, 500)}, zod ${JSON.stringify(encoded.data).slice(0, 500)}`)
      }
      return text
    }
  }
}

export function compileFast(schema: z.ZodType): ((data: unknown) => string) | undefined {
  if (!(schema instanceof z.ZodType)) return undefined
  let jsonSchema: Record<string, unknown>
  try {
    jsonSchema = z.toJSONSchema(schema, { io: 'output', target: 'draft-7', unrepresentable: 'throw' }) as Record<string, unknown>
  } catch {
    return undefined
  }
  delete jsonSchema.$schema
  return fastJson(shapeOnly(jsonSchema) as Record<string, unknown>)
}

/** Keywords that only validate: the serializer does not validate, and they would make it refuse a `null`-or-object field holding a row with extra columns (anyOf branches are picked by validating). */
const VALIDATION_ONLY = new Set(['pattern', 'format', 'minLength', 'maxLength', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf', 'uniqueItems', 'description', 'title', 'examples', 'default'])

/** The JSON Schema with only what decides the shape written: types, properties, required, items, unions, constants. */
function shapeOnly(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(shapeOnly)
  if (node === null || typeof node !== 'object') return node
  const entries = Object.entries(node).filter(([key, value]) => !VALIDATION_ONLY.has(key) && !(key === 'additionalProperties' && value === false))
  return Object.fromEntries(entries.map(([key, value]) => [key, key === 'properties' || key === 'definitions' ? Object.fromEntries(Object.entries(value as object).map(([k, v]) => [k, shapeOnly(v)])) : shapeOnly(value)]))
}
