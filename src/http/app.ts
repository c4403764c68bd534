import fastifyRateLimit from '@fastify/rate-limit'
import { join } from 'node:path'
import Fastify from 'fastify'
import type { FastifyBaseLogger, FastifyInstance, FastifyReply } from 'fastify'
import type { Deps } from '../deps.ts'
import { diskFileStore } from '../files/file-store.ts'
import { createAuthenticator } from '../identity/authenticate.ts'
import { registerJwt } from '../identity/jwt.ts'
import { boardRoutes } from './boards/boards.ts'
import { registerBodies } from './kernel/bodies.ts'
import { registerAuth } from './kernel/auth.ts'
import { responseSerializerCompiler } from './kernel/serializer.ts'
import { registerErrorHandlers } from './kernel/error-handler.ts'
import { registerHtmlPages } from './kernel/html.ts'
import { registerOpenApi } from './kernel/openapi.ts'
import { rateLimitOptions } from './kernel/rate-limit.ts'
import { registerSecurity } from './kernel/security.ts'
import { echoRequestId, requestIdFrom } from './kernel/request-id.ts'
import { accountMailRoutes } from './accounts/account-mail.ts'
import { accountNoteRoutes, accountRoutes } from './accounts/accounts.ts'
import { apiKeyRoutes } from './identity/api-key.ts'
import { authRoutes } from './identity/auth.ts'
import { contactNoteRoutes, contactRoutes } from './contacts/contacts.ts'
import { customFieldRoutes } from './custom-fields/custom-fields.ts'
import { dashboardRoutes } from './dashboard/dashboard.ts'
import { activityRoutes } from './activities/activities.ts'
import { notificationRoutes } from './notifications/notifications.ts'
import { goalRoutes } from './goals/goals.ts'
import { googleRoutes } from './identity/google.ts'
import { healthRoutes } from './health/health.ts'
import { leadRoutes } from './leads/leads.ts'
import { leadCaptureRoutes } from './leads/lead-capture.ts'
import { leadUploadRoutes } from './leads/lead-upload.ts'
import { magicLinkRoutes } from './identity/magic-link.ts'
import { meRoutes } from './identity/me.ts'
import { eventSchemaRoutes } from './events/event-schema.ts'
import { notBuiltRoutes } from './kernel/not-built.ts'
import { leadBoardRoutes } from './leads/lead-board.ts'
import { taskRoutes } from './tasks/tasks.ts'
import { taskPipelineRoutes } from './pipelines/task-pipelines.ts'
import { leadPipelineRoutes } from './pipelines/lead-pipelines.ts'
import { organizationRoutes } from './identity/organizations.ts'
import { opportunityHistoryRoutes } from './opportunities/opportunity-history.ts'
import { opportunityListRoutes } from './opportunities/opportunity-lists.ts'
import { opportunityLineItemRoutes } from './opportunities/opportunity-line-items.ts'
import { opportunityNoteRoutes } from './opportunities/opportunity-notes.ts'
import { opportunityRoutes } from './opportunities/opportunities.ts'
import { pipelineRoutes } from './pipelines/pipelines.ts'
import { profileRoutes } from './identity/profile.ts'
import { streamRoutes } from './events/streams.ts'
import { searchRoutes } from './search/search.ts'
import { solutionRoutes } from './solutions/solutions.ts'
import { stageChangeRoutes } from './opportunities/stage-changes.ts'
import { teamRoutes } from './teams/teams.ts'
import { tokenRoutes } from './identity/tokens.ts'
import { userRoutes } from './identity/user.ts'
import { usersRoutes } from './identity/users.ts'
import { webhookRoutes } from './webhooks/webhooks.ts'
import { validatorCompiler } from './kernel/unknown-fields.ts'
import { checkAnswersAgainstDocument } from './kernel/document-conformance.ts'
import { MODULES } from '../modules/modules.ts'


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
  for (const module of MODULES) for (const routes of module.routes?.(deps, files) ?? []) await app.register(routes)
  await app.register(accountRoutes(deps))
  await app.register(contactRoutes(deps))
  await app.register(teamRoutes(deps))
  await app.register(customFieldRoutes(deps))
  // Before any generic /api/opportunities/:id/ route a later module adds (see pipelines/pipelines.ts).
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
  await app.register(taskRoutes(deps, files))
  await app.register(taskPipelineRoutes(deps))
  await app.register(leadBoardRoutes(deps))
  await app.register(dashboardRoutes(deps))
  await app.register(activityRoutes(deps))
  await app.register(notificationRoutes(deps))
  await app.register(boardRoutes(deps))
  await app.register(searchRoutes(deps))
  await app.register(notBuiltRoutes(deps))
  return app
}
