import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod'
import './schemas/components.ts'
import { API_SECURITY, routeSecurity, withOperationIds } from './operations.ts'

// ReDoc has no lightweight npm bundle; the page loads its standalone script from the official CDN.
const REDOC_PAGE = `<!DOCTYPE html>
<html><head><title>CRM deals API — ReDoc</title><meta charset="utf-8"/>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body><redoc spec-url="/schema/?format=json"></redoc>
<script src="https://cdn.redoc.ly/redoc/latest/bundles/redoc.standalone.js"></script></body></html>`

/**
 * Every registered shape is emitted twice, as read (`Lead`) and as written (`LeadInput`); most are
 * only ever answered, so the copies nothing refers to are dropped.
 */
const ERROR_REF = { $ref: '#/components/schemas/ErrorBody' }
const BODY_ENCODINGS = ['application/json', 'application/x-www-form-urlencoded', 'multipart/form-data']

/**
 * The answers every route can give whatever its own schema lists, because the framework gives them
 * (error-handler.ts, bodies.ts): 404 for a path id that is malformed or not the caller's, 400 for a
 * body or query that fails validation or holds text that cannot be stored, 413 for a body over the
 * limit, 429 where a rate limit applies. Documented on every route they apply to.
 */
function frameworkAnswers(schema: Record<string, unknown>, url: string, route: { method: string | string[]; config?: unknown }): { response?: Record<string, unknown> } {
  const response = schema.response as Record<string, unknown> | undefined
  if (!response) return {}
  const added: Record<string, unknown> = {}
  if (/[:{]\w+/.test(url) && !response['404']) added['404'] = ERROR_REF
  // Text PostgreSQL cannot store (a NUL) is refused in any query or body (bodies.ts), so any route may answer 400.
  if (!response['400']) added['400'] = ERROR_REF
  // A body over the limit (bodyLimit, MAX_UPLOAD_BYTES) is refused before the route runs.
  const methods = [route.method].flat()
  if (methods.some((m) => m === 'POST' || m === 'PUT' || m === 'PATCH') && !response['413']) added['413'] = ERROR_REF
  if ((route.config as { rateLimit?: unknown } | undefined)?.rateLimit && !response['429']) added['429'] = ERROR_REF
  return Object.keys(added).length ? { response: { ...response, ...added } } : {}
}

type OpenApiDocument = ReturnType<typeof jsonSchemaTransformObject>

function withoutUnusedComponents(document: OpenApiDocument): OpenApiDocument {
  const { components } = document as { components?: { schemas?: Record<string, unknown> } }
  if (!components?.schemas) return document
  const text = JSON.stringify({ ...document, components: { ...components, schemas: {} } }) + JSON.stringify(components.schemas)
  const used = (name: string) => text.includes(`"#/components/schemas/${name}"`)
  return { ...document, components: { ...components, schemas: Object.fromEntries(Object.entries(components.schemas).filter(([name]) => used(name))) } } as OpenApiDocument
}

/** The OpenAPI document is generated from the zod schemas every route declares. */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'CRM deals API',
        version: '0.1.0',
        description: 'Event-sourced CRM deals (opportunities) API. Every change is an event; reads are served from projections. A personal access token with scopes may call an operation when it holds the scope in the operation\'s `x-scopes` (`<resource>:<read|write>`, or `*:<read|write>`); a token without scopes may call every operation.',
        license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
      },
      servers: [{ url: '/', description: 'This server (the document is served by the API it describes)' }],
      // Every operation needs a credential unless it says `security: []` (operations.ts).
      security: API_SECURITY,
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'Interactive sign-in JWT, or a personal access token (svc_pat_...)' },
          token: { type: 'apiKey', in: 'header', name: 'Token', description: 'Personal access token or the organization API key (read-only)' },
          portal: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'Customer portal token (POST /api/portal/login/{org_id}/verify/): only the /api/portal/ operations take it, and they take nothing else' },
        },
      },
    },
    transform: (input) => {
      const transformed = jsonSchemaTransform(input)
      const schema = transformed.schema as Record<string, unknown>
      // Every write body is read from JSON, a urlencoded form or multipart (bodies.ts, §4.1): each is documented.
      const consumes = schema.body ? { consumes: BODY_ENCODINGS } : {}
      return { ...transformed, schema: { ...schema, ...consumes, ...routeSecurity(input.route, transformed.url), ...frameworkAnswers(schema, transformed.url, input.route) } }
    },
    // The dynamic mode with an `openapi` option hands over an OpenAPI 3 document.
    transformObject: (documentObject) => withOperationIds('openapiObject' in documentObject ? withoutUnusedComponents(jsonSchemaTransformObject(documentObject)) : {}),
  })
  await app.register(swaggerUi, { routePrefix: '/swagger-ui', uiConfig: { url: '/schema/?format=json' } })
  app.get('/schema/', { schema: { hide: true } }, async () => app.swagger())
  app.get('/api/schema/redoc/', { schema: { hide: true }, config: { auth: 'public' } }, async (_request, reply) => reply.type('text/html; charset=utf-8').send(REDOC_PAGE))
}
