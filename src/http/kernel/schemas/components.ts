import { z } from 'zod'
import type { ZodType } from 'zod'
import { ProfileRef, TagRef } from '../relations.ts'
import { ErrorBody, Message } from './common.ts'

/**
 * Shapes the OpenAPI document names once under `components.schemas` and `$ref`s everywhere else
 * (the error body alone was inlined over a thousand times). Registered on the very instances the
 * routes use: zod's global registry is what fastify-type-provider-zod turns into components.
 */
export function registerComponents(named: Record<string, ZodType>): void {
  for (const [id, schema] of Object.entries(named)) if (!z.globalRegistry.has(schema)) z.globalRegistry.add(schema, { id })
}

registerComponents({ ErrorBody, Message, ProfileRef, TagRef })
