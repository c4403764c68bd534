import { randomUUID } from 'node:crypto'
import { createWriteStream } from 'node:fs'
import { mkdir, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { pipeline } from 'node:stream/promises'
import fastifyFormbody from '@fastify/formbody'
import fastifyMultipart from '@fastify/multipart'
import type { MultipartFile } from '@fastify/multipart'
import type { FastifyInstance, FastifyRequest } from 'fastify'

/** A file of a multipart body, already on disk (streamed, never held in memory). */
export type UploadedFile = { filename: string; mimetype: string; path: string; size: number }

export type BodyLimits = { maxFileBytes: number; uploadDir: string }

const uploadsOf = new WeakMap<FastifyRequest, string[]>()

export const isUploadedFile = (value: unknown): value is UploadedFile => typeof value === 'object' && value !== null && 'path' in value && 'filename' in value

/**
 * Request bodies as JSON, `application/x-www-form-urlencoded` and `multipart/form-data` (§4.1),
 * all validated by the same route schema: form fields become the body's keys (repeated keys a
 * list), and a file field becomes an `UploadedFile` streamed to a temporary file, removed after
 * the response unless a route adopted it into the file store. A file over the limit answers 413.
 */
export async function registerBodies(app: FastifyInstance, limits: BodyLimits): Promise<void> {
  await mkdir(limits.uploadDir, { recursive: true })
  await app.register(fastifyFormbody)
  await app.register(fastifyMultipart, {
    attachFieldsToBody: 'keyValues',
    limits: { fileSize: limits.maxFileBytes, files: 5, fields: 200, fieldSize: 1024 * 1024 },
    async onFile(this: FastifyRequest, part: MultipartFile) {
      const path = join(limits.uploadDir, randomUUID())
      uploadsOf.set(this, [...(uploadsOf.get(this) ?? []), path])
      await pipeline(part.file, createWriteStream(path))
      ;(part as MultipartFile & { value: UploadedFile }).value = { filename: part.filename, mimetype: part.mimetype, path, size: part.file.bytesRead }
    },
  })
  app.addHook('onResponse', async (request) => {
    for (const path of uploadsOf.get(request) ?? []) await rm(path, { force: true })
  })
}
