import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { eventCatalogueDocument } from '../../events/catalogue.ts'
import type { Deps } from '../../deps.ts'
import { authErrors } from '../kernel/schemas/common.ts'

// Members named `$id`, `$ref`… would read as keywords to the OpenAPI generator's resolver: the document's own ones pass through unnamed.
const CatalogueDocument = z
  .looseObject({ title: z.string(), description: z.string() })
  .describe('A JSON Schema (2020-12) document: `$defs.<EventType>` describes `{ type, stream, schema_version, data }` at the current schema version; `oneOf` accepts any of them')

/**
 * Issue 8, "Event hygiene": the event catalogue as a JSON Schema document. Any authenticated
 * caller may read it (member, admin, the API key, a token with `events:read`): it describes the
 * shapes of the log, not any organization's data. The /api/events/ feed itself stays admin-only.
 */
export function eventSchemaRoutes(_deps: Deps): FastifyPluginAsyncZod {
  return async (app) => {
    const document = eventCatalogueDocument()
    app.get(
      '/api/events/schema/',
      {
        schema: {
          tags: ['events'],
          summary: 'The event catalogue as a JSON Schema document',
          description: 'Every stored event type with its stream category, current schema version and the JSON Schema of its data. Older versions are upcast to these shapes when read.',
          response: { 200: CatalogueDocument, ...authErrors },
        },
      },
      async () => document,
    )
  }
}
