import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'

/**
 * Content negotiation for browsers (§4.1): a GET under /api/ whose Accept header lists text/html
 * before any JSON type answers the same data as a plain HTML page (the method and path as title,
 * the JSON pretty-printed, Previous/Next links on paged lists), with the same status code.
 * `Accept: application/json`, no Accept, or `*\/*` keep JSON. Only JSON answers are rendered:
 * event streams, downloads, CSV and NDJSON pass through untouched. Every /api/ GET answer varies
 * by Accept. The page has no script and no style, so the API's Content-Security-Policy allows it.
 */
export function registerHtmlPages(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply, payload) => {
    if (request.method !== 'GET' || !request.url.startsWith('/api/')) return payload
    addVaryAccept(reply)
    if (!prefersHtml(request.headers.accept) || !isJson(reply.getHeader('content-type'))) return payload
    const text = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : undefined
    if (text === undefined) return payload
    let data: unknown
    try {
      data = JSON.parse(text)
    } catch {
      return payload
    }
    reply.header('content-type', 'text/html; charset=utf-8')
    return htmlPage(request, data)
  })
}

function addVaryAccept(reply: FastifyReply): void {
  const current = reply.getHeader('vary')
  const values = (Array.isArray(current) ? current.join(',') : String(current ?? '')).split(',').map((v) => v.trim()).filter(Boolean)
  if (values.some((v) => v === '*' || v.toLowerCase() === 'accept')) return
  reply.header('vary', [...values, 'Accept'].join(', '))
}

const isJsonType = (type: string) => type === 'application/json' || /^[\w.+-]+\/[\w.+-]+\+json$/.test(type)

function isJson(contentType: unknown): boolean {
  const type = String(contentType ?? '').split(';')[0]!.trim().toLowerCase()
  return isJsonType(type)
}

/** Whether the Accept header names text/html (not refused with q=0) before any JSON type. */
export function prefersHtml(accept: string | undefined): boolean {
  if (!accept) return false
  const ranges = accept.split(',').map((range) => {
    const [type = '', ...params] = range.split(';').map((part) => part.trim().toLowerCase())
    const refused = params.some((p) => /^q=0(\.0*)?$/.test(p))
    return { type, refused }
  })
  const html = ranges.findIndex((r) => r.type === 'text/html' && !r.refused)
  if (html === -1) return false
  const json = ranges.findIndex((r) => isJsonType(r.type) && !r.refused)
  return json === -1 || html < json
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }
export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!)

type PageLinks = { previous?: string; next?: string }

const record = (value: unknown): Record<string, unknown> => (typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {})
const wholeNumber = (value: unknown): number | undefined => {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value
  return typeof n === 'number' && Number.isInteger(n) && n >= 0 ? n : undefined
}

/** Previous/Next for a limit/offset list: from the body's `next`/`previous` URLs, else from limit, offset and count. */
function pageLinks(request: FastifyRequest, data: unknown): PageLinks {
  const body = record(data)
  const [path = '', search = ''] = request.url.split('?', 2) as [string, string?]
  const query = new URLSearchParams(search)
  const paged = query.has('limit') || query.has('offset') || ['offset', 'count', 'limit', 'next'].some((key) => key in body)
  if (!paged) return {}
  const links: PageLinks = {}
  if (typeof body.previous === 'string') links.previous = body.previous
  if (typeof body.next === 'string') links.next = body.next
  const offset = wholeNumber(query.get('offset')) ?? 0
  const limit = wholeNumber(query.get('limit')) ?? wholeNumber(body.limit) ?? wholeNumber(body.per_page) ?? 10
  if (limit === 0) return links
  const at = (value: number) => {
    const params = new URLSearchParams(query)
    params.set('offset', String(value))
    params.set('limit', String(limit))
    return `${path}?${params.toString()}`
  }
  if (!('previous' in body) && offset > 0) links.previous = at(Math.max(0, offset - limit))
  if (!('next' in body)) {
    const count = wholeNumber(body.count)
    if (count === undefined || offset + limit < count) links.next = at(offset + limit)
  }
  return links
}

function htmlPage(request: FastifyRequest, data: unknown): string {
  const title = escapeHtml(`${request.method} ${request.url.split('?')[0]}`)
  const links = pageLinks(request, data)
  const nav = [
    links.previous === undefined ? '' : `<a rel="prev" href="${escapeHtml(links.previous)}">Previous</a>`,
    links.next === undefined ? '' : `<a rel="next" href="${escapeHtml(links.next)}">Next</a>`,
  ].filter(Boolean)
  return [
    '<!DOCTYPE html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${title}</title>`,
    '</head>',
    '<body>',
    `<h1>${title}</h1>`,
    nav.length ? `<nav>${nav.join(' | ')}</nav>` : '',
    `<pre>${escapeHtml(JSON.stringify(data, null, 2))}</pre>`,
    '</body>',
    '</html>',
    '',
  ]
    .filter((line, i, all) => line !== '' || i === all.length - 1)
    .join('\n')
}
