import fastifyRateLimit from '@fastify/rate-limit'
import { join } from 'node:path'
import Fastify from 'fastify'
import type { FastifyBaseLogger, FastifyInstance, FastifyReply } from 'fastify'
import type { Deps } from '../deps.ts'
import { diskFileStore } from '../files/file-store.ts'
import { createAuthenticator } from '../identity/authenticate.ts'
import { registerJwt } from '../identity/jwt.ts'
import { createPortalAuthenticator } from '../identity/portal-sessions.ts'
import { registerAfterReply } from './kernel/after-reply.ts'
import { registerBodies } from './kernel/bodies.ts'
import { registerAuth } from './kernel/auth.ts'
import { responseSerializerCompiler } from './kernel/serializer.ts'
import { registerErrorHandlers } from './kernel/error-handler.ts'
import { registerHtmlPages } from './kernel/html.ts'
import { registerOpenApi } from './kernel/openapi.ts'
import { rateLimitOptions } from './kernel/rate-limit.ts'
import { registerSecurity } from './kernel/security.ts'
import { echoRequestId, requestIdFrom } from './kernel/request-id.ts'
import { healthRoutes } from './health/health.ts'
import { eventSchemaRoutes } from './events/event-schema.ts'
import { notBuiltRoutes } from './kernel/not-built.ts'
import { streamRoutes } from './events/streams.ts'
import { validatorCompiler } from './kernel/unknown-fields.ts'
import { checkAnswersAgainstDocument } from './kernel/document-conformance.ts'
import { MODULES, RECORD_KINDS } from '../modules/modules.ts'


/** API requests wait (up to READ_YOUR_WRITES_TIMEOUT_MS, then 503) until the read models' tables exist: a first start creates them. */
function waitForReadModels(app: FastifyInstance, { projections, config }: Deps): void {
  let ready = false
  app.addHook('onRequest', async (request) => {
    if (ready || !request.url.startsWith('/api/')) return
    await projections.tablesReady(config.readYourWritesTimeoutMs)
    ready = true
  })
}

/** The whole HTTP app, used by the server and by tests (inject or a real listen). */
export async function buildApp(deps: Deps): Promise<FastifyInstance> {
  const app = Fastify({
    // pino's Logger is a FastifyBaseLogger; the cast only stops Fastify typing the instance by it.
    loggerInstance: deps.logger as FastifyBaseLogger,
    genReqId: requestIdFrom,
    routerOptions: { ignoreTrailingSlash: true },
    bodyLimit: 1024 * 1024,
    // Router-level refusals in the spec's error shape: an over-long path id reads as a missing record.
    frameworkErrors: (error, _request, reply) => {
      const notFound = error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      void (reply as FastifyReply).code(notFound ? 404 : 400).send({ error: true, errors: notFound ? 'Not found' : error.message })
    },
  })
  app.setValidatorCompiler(validatorCompiler)
  app.setSerializerCompiler(responseSerializerCompiler({ assert: deps.config.env === 'test' }))
  echoRequestId(app)
  if (deps.config.env === 'test') checkAnswersAgainstDocument(app)
  registerErrorHandlers(app)
  registerAfterReply(app)
  await registerSecurity(app, { corsOrigins: deps.config.corsOrigins })
  await registerOpenApi(app)
  await registerJwt(app, deps.config)
  await app.register(fastifyRateLimit, rateLimitOptions)
  await registerBodies(app, { maxFileBytes: deps.config.maxUploadBytes, uploadDir: join(deps.config.dataDir, 'uploads') })
  registerHtmlPages(app)
  const verifyJwt = (token: string): unknown => app.jwt.verify(token)
  registerAuth(app, createAuthenticator({ ...deps, verifyJwt }), createPortalAuthenticator(verifyJwt))
  waitForReadModels(app, deps)
  const files = deps.files ?? diskFileStore(join(deps.config.dataDir, 'attachments'))
  await app.register(healthRoutes(deps))
  // Every module's routes (src/modules/modules.ts), between the service's own (health, the event log) and the 501s of paths not built yet.
  for (const module of MODULES) for (const routes of (await module.routes?.(deps, files)) ?? []) await app.register(routes)
  await app.register(streamRoutes(deps, RECORD_KINDS))
  await app.register(eventSchemaRoutes(deps))
  await app.register(notBuiltRoutes(deps))
  return app
}
