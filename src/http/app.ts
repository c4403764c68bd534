import Fastify from 'fastify'
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod'
import type { Logger } from 'pino'
import type { Config } from '../config.ts'
import type { Db } from '../db/database.ts'
import type { EventStore } from '../eventstore/event-store.ts'
import type { ProjectionRunner } from '../projections/runner.ts'
import { createAuthenticator } from '../identity/authenticate.ts'
import { registerJwt } from '../identity/jwt.ts'
import { registerAuth } from './plugins/auth.ts'
import { registerErrorHandlers } from './plugins/error-handler.ts'
import { registerOpenApi } from './plugins/openapi.ts'
import { echoRequestId, requestIdFrom } from './plugins/request-id.ts'
import { apiKeyRoutes } from './routes/api-key.ts'
import { healthRoutes } from './routes/health.ts'
import { meRoutes } from './routes/me.ts'
import { tokenRoutes } from './routes/tokens.ts'

export type AppDeps = {
  config: Config
  db: Db
  store: EventStore
  projections: ProjectionRunner
  logger: Logger
  /** Injected so tests can fix time; deciders receive it through commands. */
  clock: () => Date
}

/** The whole HTTP app, used by the server and by tests (inject or a real listen). */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    // pino's Logger is a FastifyBaseLogger; the cast only stops Fastify typing the instance by it.
    loggerInstance: deps.logger as FastifyBaseLogger,
    genReqId: requestIdFrom,
    routerOptions: { ignoreTrailingSlash: true },
    bodyLimit: 1024 * 1024,
  })
  app.setValidatorCompiler(validatorCompiler)
  app.setSerializerCompiler(serializerCompiler)
  echoRequestId(app)
  registerErrorHandlers(app)
  await registerOpenApi(app)
  await registerJwt(app, deps.config)
  registerAuth(app, createAuthenticator({ ...deps, verifyJwt: (token) => app.jwt.verify(token) }))
  await app.register(healthRoutes(deps))
  await app.register(meRoutes(deps))
  await app.register(tokenRoutes(deps))
  await app.register(apiKeyRoutes(deps))
  return app
}
