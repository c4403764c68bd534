import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import type { Db } from '../../src/db/database.ts'

/**
 * The route table as the served OpenAPI document (/schema/) describes it, for tests that walk
 * every operation instead of listing them by hand: the isolation matrix and the fuzzer.
 */
export type JsonSchema = {
  type?: string | string[]
  format?: string
  enum?: unknown[]
  properties?: Record<string, JsonSchema>
  required?: string[]
  items?: JsonSchema
  anyOf?: JsonSchema[]
  oneOf?: JsonSchema[]
  nullable?: boolean
  minimum?: number
  maximum?: number
  minLength?: number
  maxLength?: number
  pattern?: string
  additionalProperties?: boolean | JsonSchema
}

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'

export type Operation = {
  method: Method
  /** OpenAPI form: `/api/tags/{id}/`. */
  path: string
  summary: string
  description: string
  tags: string[]
  pathParams: string[]
  query: Record<string, JsonSchema>
  /** The JSON request body, when the operation takes one. */
  body: JsonSchema | undefined
  /** Status codes the operation documents. */
  responses: string[]
  /** A Server-Sent Events stream: its answer never ends while the client listens. */
  streaming: boolean
  /** Who may call: `staff` (the document's default schemes), `public` (`security: []`), `portal` (the customer portal's token only). */
  access: 'staff' | 'public' | 'portal'
}

type OpenApiOperation = {
  summary?: string
  description?: string
  tags?: string[]
  parameters?: { name: string; in: string; schema?: JsonSchema }[]
  requestBody?: { content?: Record<string, { schema?: JsonSchema }> }
  responses?: Record<string, { content?: Record<string, unknown> }>
  security?: Record<string, unknown>[]
}

const METHODS: readonly Method[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']

/** Every documented operation of the app, the `not-built` stubs left out unless asked for. */
export async function operationsOf(app: FastifyInstance, options: { includeNotBuilt?: boolean } = {}): Promise<Operation[]> {
  const res = await app.inject({ url: '/schema/' })
  if (res.statusCode !== 200) throw new Error(`GET /schema/ answered ${res.statusCode}`)
  const doc = res.json() as { paths: Record<string, Record<string, OpenApiOperation>> }
  const operations: Operation[] = []
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [verb, op] of Object.entries(item)) {
      const method = verb.toUpperCase() as Method
      if (!METHODS.includes(method)) continue
      const tags = op.tags ?? []
      if (tags.includes('not-built') && !options.includeNotBuilt) continue
      const parameters = op.parameters ?? []
      operations.push({
        method,
        path,
        summary: op.summary ?? '',
        description: op.description ?? '',
        tags,
        pathParams: parameters.filter((p) => p.in === 'path').map((p) => p.name),
        query: Object.fromEntries(parameters.filter((p) => p.in === 'query').map((p) => [p.name, p.schema ?? {}])),
        body: op.requestBody?.content?.['application/json']?.schema,
        responses: Object.keys(op.responses ?? {}),
        streaming: /Server-Sent Events/i.test(op.description ?? '') || Object.values(op.responses ?? {}).some((r) => Object.keys(r.content ?? {}).includes('text/event-stream')),
        access: op.security === undefined ? 'staff' : op.security.some((scheme) => 'portal' in scheme) ? 'portal' : op.security.length === 0 ? 'public' : 'staff',
      })
    }
  }
  return operations
}

/** `/api/tags/{id}/merge/` with `{ id: 'x' }` → `/api/tags/x/merge/`. */
export const fillPath = (path: string, values: Record<string, string>): string => path.replace(/\{(\w+)\}/g, (_m, name: string) => encodeURIComponent(values[name] ?? name))

export const describe = (op: Pick<Operation, 'method' | 'path'>) => `${op.method} ${op.path}`

/** The types a schema admits (OpenAPI 3.0 `nullable` and `anyOf` unions flattened). */
export function typesOf(schema: JsonSchema): string[] {
  const own = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : []
  const nested = [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])].flatMap(typesOf)
  return [...new Set([...own, ...nested, ...(schema.nullable ? ['null'] : [])])]
}

/**
 * A small value the schema accepts, for bodies that must pass validation so the route's own
 * checks (tenant, role) decide the answer. `ids` fills uuid-formatted fields by name.
 */
export function sampleOf(schema: JsonSchema, name = '', ids: Record<string, string> = {}): unknown {
  if (schema.enum?.length) return schema.enum[0]
  const variants = [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])]
  if (variants.length) return sampleOf(variants.find((v) => !typesOf(v).includes('null') || typesOf(v).length > 1) ?? variants[0]!, name, ids)
  const type = typesOf(schema).find((t) => t !== 'null') ?? 'string'
  switch (type) {
    case 'object': {
      const entries = (schema.required ?? []).map((key) => [key, sampleOf(schema.properties?.[key] ?? {}, key, ids)])
      return Object.fromEntries(entries)
    }
    case 'array':
      return []
    case 'integer':
    case 'number':
      return Math.max(schema.minimum ?? 1, 1)
    case 'boolean':
      return true
    default:
      if (schema.format === 'uuid') return ids[name] ?? '00000000-0000-4000-8000-000000000000'
      if (schema.format === 'email') return `${name || 'someone'}@example.test`
      if (schema.format === 'date') return '2026-11-20'
      if (schema.format === 'date-time') return '2027-01-01T00:00:00Z'
      return `sample_${name || 'value'}`
  }
}

/** Every event of the log, all organizations together: a rejected request must not move it. */
export async function eventCount(db: Db): Promise<number> {
  const { rows } = await sql<{ n: string }>`SELECT count(*)::text AS n FROM events`.execute(db)
  return Number(rows[0]!.n)
}
