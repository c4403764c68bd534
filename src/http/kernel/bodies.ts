import { randomUUID } from 'node:crypto'
import { createWriteStream } from 'node:fs'
import { mkdir, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { pipeline } from 'node:stream/promises'
import fastifyFormbody from '@fastify/formbody'
import fastifyMultipart from '@fastify/multipart'
import type { MultipartFile } from '@fastify/multipart'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { ValidationError } from '../../errors.ts'

/** A file of a multipart body, already on disk (streamed, never held in memory). */
export type UploadedFile = { filename: string; mimetype: string; path: string; size: number }

export type BodyLimits = { maxFileBytes: number; uploadDir: string }

const uploadsOf = new WeakMap<FastifyRequest, string[]>()

// The file objects the multipart parser made. Only these count as uploads: a JSON body shaped like
// one (`{"path": "/etc/passwd", ...}`) is just an object, never a file of this server.
const genuineUploads = new WeakSet<object>()

export const isUploadedFile = (value: unknown): value is UploadedFile => typeof value === 'object' && value !== null && genuineUploads.has(value)

/** A multipart/form-data Content-Type without its required boundary (RFC 7578 §4.1): no part of the body can be found. */
export const lacksBoundary = (contentType: string | undefined): boolean =>
  contentType !== undefined && /^\s*multipart\/form-data\s*(;|$)/i.test(contentType) && !/;\s*boundary\s*=\s*("[^"]+"|[^";\s]+)/i.test(contentType)

const hasNul = (text: string) => text.includes('\u0000')
/** A UTF-16 surrogate without its pair: no Unicode character, and PostgreSQL's JSON refuses its escape. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/
const hasLoneSurrogate = (text: string) => LONE_SURROGATE.test(text)

/** Whether any text (key or value) in a query or body is `bad`: text PostgreSQL cannot store is refused before anything is decided. */
function holds(value: unknown, bad: (text: string) => boolean, depth = 0): boolean {
  if (typeof value === 'string') return bad(value)
  if (depth > 20 || typeof value !== 'object' || value === null || isUploadedFile(value)) return false
  return Object.entries(value).some(([key, item]) => bad(key) || holds(item, bad, depth + 1))
}

/**
 * A request that says `Content-Type: application/json` but sends nothing has no body, not a broken
 * one: the original's phone app sets that header on every call, bodiless DELETEs included, and
 * fastify's own parser answers those 400. A route that needs a body still refuses the missing one
 * through its schema; any other text goes through fastify's parser (prototype poisoning refused).
 */
function acceptEmptyJsonBodies(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error')
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, text, done) => {
    if (text.length === 0) done(null, undefined)
    else parseJson(request, text as string, done)
  })
}

/**
 * Request bodies as JSON, `application/x-www-form-urlencoded` and `multipart/form-data` (§4.1),
 * all validated by the same route schema: form fields become the body's keys (repeated keys a
 * list), and a file field becomes an `UploadedFile` streamed to a temporary file, removed after
 * the response unless a route adopted it into the file store. A file over the limit answers 413.
 */
export async function registerBodies(app: FastifyInstance, limits: BodyLimits): Promise<void> {
  await mkdir(limits.uploadDir, { recursive: true })
  acceptEmptyJsonBodies(app)
  await app.register(fastifyFormbody)
  // Checked before the multipart parser runs: its busboy throws a plain Error (a 500) on such a header.
  app.addHook('preParsing', async (request) => {
    if (lacksBoundary(request.headers['content-type'])) throw new ValidationError('Malformed multipart/form-data body: the Content-Type header names no boundary')
  })
  await app.register(fastifyMultipart, {
    attachFieldsToBody: 'keyValues',
    limits: { fileSize: limits.maxFileBytes, files: 5, fields: 200, fieldSize: 1024 * 1024 },
    async onFile(this: FastifyRequest, part: MultipartFile) {
      const path = join(limits.uploadDir, randomUUID())
      uploadsOf.set(this, [...(uploadsOf.get(this) ?? []), path])
      await pipeline(part.file, createWriteStream(path))
      const upload: UploadedFile = { filename: part.filename, mimetype: part.mimetype, path, size: part.file.bytesRead }
      genuineUploads.add(upload)
      ;(part as MultipartFile & { value: UploadedFile }).value = upload
    },
  })
  app.addHook('preValidation', async (request) => {
    if (holds(request.query, hasNul) || holds(request.body, hasNul)) throw new ValidationError({ non_field_errors: ['Text may not contain NUL (\\u0000) characters.'] })
    if (holds(request.query, hasLoneSurrogate) || holds(request.body, hasLoneSurrogate)) throw new ValidationError({ non_field_errors: ['Text must be valid Unicode (an unpaired surrogate escape such as \\ud800 is not).'] })
  })
  app.addHook('onResponse', async (request) => {
    for (const path of uploadsOf.get(request) ?? []) await rm(path, { force: true })
  })
}
