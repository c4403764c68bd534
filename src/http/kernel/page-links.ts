import type { FastifyRequest } from 'fastify'

/** The same list URL at another offset, keeping the other query parameters. */
function pageUrl(request: FastifyRequest, offset: number): string {
  const url = new URL(request.url, `${request.protocol}://${request.host}`)
  url.searchParams.set('offset', String(offset))
  return url.toString()
}

/** The standard `{count, next, previous, results}` envelope's links: URLs of the neighbouring pages, null at either end. */
export function pageLinks(request: FastifyRequest, { count, limit, offset }: { count: number; limit: number; offset: number }): { next: string | null; previous: string | null } {
  return {
    next: offset + limit < count && limit > 0 ? pageUrl(request, offset + limit) : null,
    previous: offset > 0 ? pageUrl(request, Math.max(0, offset - limit)) : null,
  }
}
