import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'
import { jsonSchemaTransform } from 'fastify-type-provider-zod'

// ReDoc has no lightweight npm bundle; the page loads its standalone script from the official CDN.
const REDOC_PAGE = `<!DOCTYPE html>
<html><head><title>CRM deals API — ReDoc</title><meta charset="utf-8"/>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body><redoc spec-url="/schema/?format=json"></redoc>
<script src="https://cdn.redoc.ly/redoc/latest/bundles/redoc.standalone.js"></script></body></html>`

/** The OpenAPI document is generated from the zod schemas every route declares. */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'CRM deals API',
        version: '0.1.0',
        description: 'Event-sourced CRM deals (opportunities) API. Every change is an event; reads are served from projections.',
      },
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'Interactive sign-in JWT, or a personal access token (svc_pat_...)' },
          token: { type: 'apiKey', in: 'header', name: 'Token', description: 'Personal access token or the organization API key (read-only)' },
        },
      },
    },
    transform: jsonSchemaTransform,
  })
  await app.register(swaggerUi, { routePrefix: '/swagger-ui', uiConfig: { url: '/schema/?format=json' } })
  app.get('/schema/', { schema: { hide: true } }, async () => app.swagger())
  app.get('/api/schema/redoc/', { schema: { hide: true }, config: { auth: 'public' } }, async (_request, reply) => reply.type('text/html; charset=utf-8').send(REDOC_PAGE))
}
