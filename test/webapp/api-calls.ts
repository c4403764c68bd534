import type { FastifyInstance } from 'fastify'

/** One answer of our API, as the web app's server received it. */
export type ApiCall = { method: string; url: string; status: number; notBuilt: boolean; route: string | undefined }

/**
 * Records every answer of the API. The web app renders on its server, so each page's API calls
 * arrive here, between the start and the end of that page's navigation; `since` slices them out.
 * A call is `notBuilt` when a stub of the route index answered it (a module not built yet), which
 * tells "the page waits on a later module" apart from "our built route failed".
 */
export function recordApiCalls(app: FastifyInstance) {
  const calls: ApiCall[] = []
  app.addHook('onResponse', async (request, reply) => {
    const tags = (request.routeOptions.schema as { tags?: string[] } | undefined)?.tags ?? []
    calls.push({ method: request.method, url: request.url, status: reply.statusCode, notBuilt: tags.includes('not-built'), route: request.routeOptions.url })
  })
  return {
    calls,
    mark: () => calls.length,
    since: (mark: number) => calls.slice(mark),
  }
}

/** Failed calls a page of a built module must not make: a built route answering ≥ 400, or a path we do not serve at all. */
export const isOurFailure = (call: ApiCall): boolean => call.status >= 400 && !call.notBuilt

export const describeCall = (call: ApiCall): string => `${call.method} ${call.url} → ${call.status}${call.notBuilt ? ' (not built)' : call.route ? '' : ' (no such route)'}`
