import fastifyRateLimit from '@fastify/rate-limit'
import { join } from 'node:path'
import Fastify from 'fastify'
import type { FastifyBaseLogger, FastifyInstance, FastifyReply } from 'fastify'
import { validatorCompiler } from 'fastify-type-provider-zod'
import type { Deps } from '../deps.ts'
import { diskFileStore } from '../files/file-store.ts'
import { createAuthenticator } from '../identity/authenticate.ts'
import { registerJwt } from '../identity/jwt.ts'
import { registerBodies } from './plugins/bodies.ts'
import { registerAuth } from './plugins/auth.ts'
import { responseSerializerCompiler } from './plugins/serializer.ts'
import { registerErrorHandlers } from './plugins/error-handler.ts'
import { registerHtmlPages } from './plugins/html.ts'
import { registerOpenApi } from './plugins/openapi.ts'
import { rateLimitOptions } from './plugins/rate-limit.ts'
import { registerSecurity } from './plugins/security.ts'
import { echoRequestId, requestIdFrom } from './plugins/request-id.ts'
import { accountMailRoutes } from './routes/account-mail.ts'
import { accountNoteRoutes, accountRoutes } from './routes/accounts.ts'
import { apiKeyRoutes } from './routes/api-key.ts'
import { authRoutes } from './routes/auth.ts'
import { contactNoteRoutes, contactRoutes } from './routes/contacts.ts'
import { customFieldRoutes } from './routes/custom-fields.ts'
import { goalRoutes } from './routes/goals.ts'
import { googleRoutes } from './routes/google.ts'
import { healthRoutes } from './routes/health.ts'
import { leadRoutes } from './routes/leads.ts'
import { leadCaptureRoutes } from './routes/lead-capture.ts'
import { leadUploadRoutes } from './routes/lead-upload.ts'
import { magicLinkRoutes } from './routes/magic-link.ts'
import { meRoutes } from './routes/me.ts'
import { eventSchemaRoutes } from './routes/event-schema.ts'
import { notBuiltRoutes } from './routes/not-built.ts'
import { leadBoardRoutes } from './routes/lead-board.ts'
import { leadPipelineRoutes } from './routes/lead-pipelines.ts'
import { organizationRoutes } from './routes/organizations.ts'
import { opportunityHistoryRoutes } from './routes/opportunity-history.ts'
import { opportunityListRoutes } from './routes/opportunity-lists.ts'
import { opportunityLineItemRoutes } from './routes/opportunity-line-items.ts'
import { opportunityNoteRoutes } from './routes/opportunity-notes.ts'
import { opportunityRoutes } from './routes/opportunities.ts'
import { pipelineRoutes } from './routes/pipelines.ts'
import { profileRoutes } from './routes/profile.ts'
import { streamRoutes } from './routes/streams.ts'
import { solutionRoutes } from './routes/solutions.ts'
import { stageChangeRoutes } from './routes/stage-changes.ts'
import { tagRoutes } from './routes/tags.ts'
import { teamRoutes } from './routes/teams.ts'
import { tokenRoutes } from './routes/tokens.ts'
import { userRoutes } from './routes/user.ts'
import { usersRoutes } from './routes/users.ts'
import { webhookRoutes } from './routes/webhooks.ts'


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
  registerErrorHandlers(app)
  await registerSecurity(app, { corsOrigins: deps.config.corsOrigins })
  await registerOpenApi(app)
  await registerJwt(app, deps.config)
  await app.register(fastifyRateLimit, rateLimitOptions)
  await registerBodies(app, { maxFileBytes: deps.config.maxUploadBytes, uploadDir: join(deps.config.dataDir, 'uploads') })
  registerHtmlPages(app)
  registerAuth(app, createAuthenticator({ ...deps, verifyJwt: (token) => app.jwt.verify(token) }))
  waitForReadModels(app, deps)
  const files = deps.files ?? diskFileStore(join(deps.config.dataDir, 'attachments'))
  await app.register(healthRoutes(deps))
  await app.register(meRoutes(deps))
  await app.register(tokenRoutes(deps))
  await app.register(apiKeyRoutes(deps))
  await app.register(authRoutes(deps))
  await app.register(magicLinkRoutes(deps))
  await app.register(googleRoutes(deps))
  await app.register(usersRoutes(deps))
  await app.register(userRoutes(deps))
  await app.register(profileRoutes(deps))
  await app.register(organizationRoutes(deps))
  await app.register(tagRoutes(deps))
  await app.register(accountRoutes(deps))
  await app.register(contactRoutes(deps))
  await app.register(teamRoutes(deps))
  await app.register(customFieldRoutes(deps))
  // Before any generic /api/opportunities/:id/ route a later module adds (see routes/pipelines.ts).
  await app.register(pipelineRoutes(deps))
  await app.register(stageChangeRoutes(deps))
  await app.register(goalRoutes(deps))
  await app.register(opportunityHistoryRoutes(deps))
  await app.register(opportunityRoutes(deps, files))
  await app.register(opportunityListRoutes(deps))
  await app.register(opportunityNoteRoutes(deps, files))
  await app.register(opportunityLineItemRoutes(deps))
  await app.register(streamRoutes(deps))
  await app.register(leadRoutes(deps, files))
  await app.register(webhookRoutes(deps))
  await app.register(eventSchemaRoutes(deps))
  await app.register(solutionRoutes(deps))
  await app.register(leadUploadRoutes(deps))
  await app.register(leadCaptureRoutes(deps))
  await app.register(accountNoteRoutes(deps, files))
  await app.register(contactNoteRoutes(deps, files))
  await app.register(accountMailRoutes(deps))
  await app.register(leadPipelineRoutes(deps))
  await app.register(leadBoardRoutes(deps))
  await app.register(notBuiltRoutes(deps))
  return app
}
