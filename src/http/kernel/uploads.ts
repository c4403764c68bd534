import { randomUUID } from 'node:crypto'
import { basename } from 'node:path'
import type { FastifyReply } from 'fastify'
import type { AttachmentData } from '../../commands/notes.ts'
import type { FileStore } from '../../files/file-store.ts'
import { NotFoundError, ValidationError } from '../../errors.ts'
import { sniffFile } from '../../files/sniff.ts'
import { isUploadedFile } from './bodies.ts'
import type { UploadedFile } from './bodies.ts'

/** A client's file name as a plain name: no folders, no control characters, at most 255 characters. */
const plainName = (name: string) => basename(name.replace(/\\/g, '/')).replace(/[\p{Cc}"]/gu, '').slice(0, 255) || 'file'

/**
 * Moves an uploaded file into the file store under a server-made key (`<org>/<attachment id>`) and
 * lets `record` append the event naming it; a refused command removes the bytes again. Every
 * module's attachments (deals, leads) go through here.
 */
export async function adoptUpload(files: FileStore, orgId: string, upload: UploadedFile, record: (attachment: AttachmentData) => Promise<unknown>): Promise<void> {
  // Second line of defence after the body schema: only a file this request's multipart parser wrote moves.
  if (!isUploadedFile(upload)) throw new ValidationError({ attachment: ['Expected a file (multipart/form-data).'] })
  const attachmentId = randomUUID()
  const key = `${orgId}/${attachmentId}`
  await files.adopt(upload.path, key)
  try {
    await record({ attachment_id: attachmentId, file_name: plainName(upload.filename), content_type: upload.mimetype || 'application/octet-stream', size: upload.size, storage_key: key })
  } catch (error) {
    await files.remove(key)
    throw error
  }
}

/**
 * adoptUpload for a file kept as a file rather than an attachment (a document, a template's logo):
 * its content type read from its bytes first, never the client's claim, which `accept` may refuse
 * (by throwing) before anything moves.
 */
export async function adoptSniffedUpload(files: FileStore, orgId: string, upload: UploadedFile, record: (file: Omit<AttachmentData, 'attachment_id'>) => Promise<unknown>, accept?: (contentType: string) => void): Promise<void> {
  upload.mimetype = await sniffFile(upload.path, upload.filename)
  accept?.(upload.mimetype)
  await adoptUpload(files, orgId, upload, ({ attachment_id: _id, ...file }) => record(file))
}

/** Answers a stored attachment's bytes as a download under its own name and content type. */
export async function sendStoredFile(reply: FastifyReply, files: FileStore, file: Pick<AttachmentData, 'storage_key' | 'content_type' | 'size' | 'file_name'>) {
  const stream = await files.open(file.storage_key)
  if (!stream) throw new NotFoundError('The file is missing from the file store')
  reply.header('content-type', file.content_type).header('content-length', String(file.size))
  return reply.header('content-disposition', `attachment; filename*=UTF-8''${encodeURIComponent(file.file_name)}`).send(stream)
}
