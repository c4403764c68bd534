import type { FastifyReply, FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { DOCUMENT_STATUSES } from '../../commands/document/document.ts'
import type { DocumentFields, DocumentFile } from '../../commands/document/document.ts'
import { changeDocument, deleteDocument, uploadDocument } from '../../commands/document/write-document.ts'
import type { Deps } from '../../deps.ts'
import { ForbiddenError, orNotFound } from '../../errors.ts'
import type { FileStore } from '../../files/file-store.ts'
import { activeMembers } from '../../identity/users.ts'
import { documentOf, listDocuments, mayReadDocument } from '../../projections/document/documents.ts'
import type { DocumentFilter, DocumentReader, DocumentRow } from '../../projections/document/documents.ts'
import { teamsOfMember } from '../../projections/team/teams.ts'
import { viewerOf } from '../kernel/auth.ts'
import { callerOf, requestCommands } from '../kernel/commands.ts'
import type { UploadedFile } from '../kernel/bodies.ts'
import { profileRefOf } from '../kernel/relations.ts'
import { ErrorBody, IdParams, Message, authErrors, nextOffset } from '../kernel/schemas/common.ts'
import { Created } from '../kernel/schemas/records.ts'
import { adoptSniffedUpload, sendStoredFile } from '../kernel/uploads.ts'
import { DocumentCreateBody, DocumentDetail, DocumentList, DocumentListQuery, DocumentPatchBody, DocumentPutBody } from './schemas.ts'
import { documentViews, fileTypeCode } from './views.ts'

const TAGS = ['documents']
const errors = { 400: ErrorBody, ...authErrors, 404: ErrorBody } as const
const FILE_ANSWER = { description: 'The file, under the content type sniffed from its bytes at upload', content: { 'application/octet-stream': { schema: z.string().describe('The file\'s bytes') } } }

/** The caller as the documents' reach sees them: the policy's viewer and the teams they belong to. */
async function readerOf(deps: Deps, request: FastifyRequest): Promise<DocumentReader> {
  const viewer = viewerOf(request)
  return { ...viewer, teams: await teamsOfMember(deps.db, viewer.orgId, viewer.profileId) }
}

/** A live document of the caller's organization (404 otherwise) that the caller may read (403 otherwise, as the original). */
async function readable(deps: Deps, request: FastifyRequest, id: string): Promise<DocumentRow> {
  const reader = await readerOf(deps, request)
  const row = await orNotFound(documentOf(deps.db, reader.orgId, id))
  if (!mayReadDocument(row, reader)) throw new ForbiddenError('Only an admin, the uploader or whoever the document is shared with may open it')
  return row
}

/** Whom a document may be shared with, as the original offers it: every active member to an admin, the admins to anyone else. */
async function shareable(deps: Deps, request: FastifyRequest) {
  const viewer = viewerOf(request)
  const members = await activeMembers(deps.db, viewer.orgId)
  return members.filter((member) => viewer.isAdmin || member.role === 'ADMIN').map(profileRefOf)
}

type Body = { title?: string; status?: DocumentFields['status']; shared_to?: string[]; teams?: string[] }
const fieldsOf = (body: Body): Partial<DocumentFields> => Object.fromEntries(Object.entries(body).filter(([key, value]) => ['title', 'status', 'shared_to', 'teams'].includes(key) && value !== undefined))

/**
 * Documents (the original's common/views/document_views.py): the library list in two envelopes
 * (active, inactive), upload (multipart, any member), detail, PUT/PATCH (the uploader or an admin;
 * a new file replaces the bytes and keeps the shares), DELETE (the same) and the download (whoever
 * may read it). Reading reaches the uploader, whoever the document is shared with (directly or
 * through a team) and admins.
 */
export function documentRoutes(deps: Deps, files: FileStore): FastifyPluginAsyncZod {
  const { db } = deps

  const change = async (request: FastifyRequest, reply: FastifyReply, id: string, changes: Partial<DocumentFields>, upload: UploadedFile | undefined) => {
    const current = await orNotFound(documentOf(db, viewerOf(request).orgId, id))
    const commands = requestCommands(deps, request, reply)
    const run = (file?: DocumentFile) => changeDocument(deps, callerOf(request), current, { changes, ...(file && { file }) }, commands.session)
    if (upload) await adoptSniffedUpload(files, current.org_id, upload, async (file) => (await run(file)).replaced && files.remove(current.storage_key))
    else await run()
    await commands.settle()
    return { error: false as const, message: 'Document Updated Successfully' }
  }

  return async (app) => {
    app.get('/api/documents/', { schema: { tags: TAGS, summary: 'The documents the caller may open, newest first, active and inactive in two envelopes (each paged by limit/offset), with whom they may be shared', querystring: DocumentListQuery, response: { 200: DocumentList, ...errors } } }, async (request) => {
      const reader = await readerOf(deps, request)
      const { limit, offset, title, status, shared_to } = request.query
      const filter: DocumentFilter = { ...(title && { title }), ...(shared_to && { sharedTo: shared_to }) }
      const page = async (wanted: (typeof DOCUMENT_STATUSES)[number]) => {
        if (status && status !== wanted) return { count: 0, rows: [] as DocumentRow[] }
        return listDocuments(db, reader, { ...filter, status: wanted }, { limit, offset })
      }
      const [active, inactive, users] = await Promise.all([page('active'), page('inactive'), shareable(deps, request)])
      const [activeViews, inactiveViews] = await Promise.all([documentViews(db, reader.orgId, active.rows), documentViews(db, reader.orgId, inactive.rows)])
      return {
        search: Boolean(title || status || shared_to),
        documents_active: { documents_active_count: active.count, documents_active: activeViews, offset: nextOffset(offset, activeViews.length, active.count) },
        documents_inactive: { documents_inactive_count: inactive.count, documents_inactive: inactiveViews, offset: nextOffset(offset, inactiveViews.length, inactive.count) },
        users,
        status_choices: DOCUMENT_STATUSES.map((value): [string, string] => [value, value]),
      }
    })

    app.post('/api/documents/', { schema: { tags: TAGS, summary: 'Upload a document (any member; multipart with document_file)', description: 'The title must be unique in the organization (any case); shared_to and teams must be active profiles and teams of the organization (400 naming the field). Answers 201.', body: DocumentCreateBody, response: { 201: Created, ...errors, 413: ErrorBody } } }, async (request, reply) => {
      const { document_file: upload, ...body } = request.body
      const commands = requestCommands(deps, request, reply)
      let id = ''
      const fields: DocumentFields = { title: body.title, status: body.status, shared_to: body.shared_to ?? [], teams: body.teams ?? [] }
      await adoptSniffedUpload(files, callerOf(request).orgId, upload, async (file) => ({ id } = await uploadDocument(deps, callerOf(request), { fields, file }, commands.session)))
      await commands.settle()
      return reply.code(201).send({ error: false as const, message: 'Document Created Successfully', id })
    })

    app.get('/api/documents/:id/', { schema: { tags: TAGS, summary: 'One document under doc_obj (the uploader, whoever it is shared with, or an admin)', params: IdParams, response: { 200: DocumentDetail, ...errors } } }, async (request) => {
      const row = await readable(deps, request, request.params.id)
      const [[doc], users] = await Promise.all([documentViews(db, row.org_id, [row]), shareable(deps, request)])
      return { doc_obj: doc!, file_type_code: fileTypeCode(row.content_type), users }
    })

    app.put('/api/documents/:id/', { schema: { tags: TAGS, summary: 'Replace a document\'s title, status and shares, and optionally its file (its uploader or an admin)', description: 'JSON, or multipart with a new document_file. shared_to and teams are the whole new sets: one left out is emptied.', params: IdParams, body: DocumentPutBody, response: { 200: Message, ...errors, 413: ErrorBody } } }, (request, reply) => {
      const { document_file: upload, ...body } = request.body
      return change(request, reply, request.params.id, { ...fieldsOf(body), shared_to: body.shared_to ?? [], teams: body.teams ?? [] }, upload)
    })

    app.patch('/api/documents/:id/', { schema: { tags: TAGS, summary: 'Change the named fields of a document, or its file (its uploader or an admin)', params: IdParams, body: DocumentPatchBody, response: { 200: Message, ...errors, 413: ErrorBody } } }, (request, reply) => {
      const { document_file: upload, ...body } = request.body
      return change(request, reply, request.params.id, fieldsOf(body), upload)
    })

    app.delete('/api/documents/:id/', { schema: { tags: TAGS, summary: 'Delete a document and its file (its uploader or an admin)', params: IdParams, response: { 200: Message, ...errors } } }, async (request, reply) => {
      const current = await orNotFound(documentOf(db, viewerOf(request).orgId, request.params.id))
      const commands = requestCommands(deps, request, reply)
      const { deleted } = await deleteDocument(deps, callerOf(request), current, commands.session)
      await commands.settle()
      if (deleted) await files.remove(current.storage_key)
      return { error: false as const, message: 'Document deleted Successfully' }
    })

    app.get('/api/documents/:id/download/', { schema: { tags: TAGS, summary: 'Download a document\'s file under its uploaded name and sniffed type (whoever may open the document)', params: IdParams, response: { 200: FILE_ANSWER, ...errors } } }, async (request, reply) => {
      const row = await readable(deps, request, request.params.id)
      return sendStoredFile(reply, files, row)
    })
  }
}
