import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'

/** What a module's route factory answers: a fastify plugin of zod-typed routes. Named here so module manifests (src/modules/) can speak of routes without importing fastify. */
export type RoutePlugin = FastifyPluginAsyncZod
