import { ForbiddenError, NotFoundError } from '../../errors.ts'
import type { Actor } from '../caller.ts'
import type { Decider } from '../decider.ts'
import type { AttachmentData } from '../notes.ts'
import { streamCategory } from '../streams.ts'

/**
 * A document: a file of the organization's shared library (the original's `Document`), with a
 * title unique in the organization, a status (`inactive` is an archive: the row and the file stay)
 * and whom it is shared with (profiles and teams). Reading is broad (its uploader, whoever it is
 * shared with, an admin: src/visibility/policy.ts); changing and deleting are narrow, the uploader
 * or an admin, as the original's `_may_write`/`_may_delete`: a share hands someone a copy to read,
 * not the original to rewrite.
 */

export const DOCUMENT_STATUSES = ['active', 'inactive'] as const
export type DocumentStatus = (typeof DOCUMENT_STATUSES)[number]

/** The stored file: where the file store keeps it (`storage_key`) and what was sniffed of it. */
export type DocumentFile = Omit<AttachmentData, 'attachment_id'>

export type DocumentFields = { title: string; status: DocumentStatus; shared_to: string[]; teams: string[] }

// Events: the storage contract.
export type DocumentEvent =
  | { type: 'DocumentUploaded'; data: { document_id: string; org_id: string; title: string; status: DocumentStatus; shared_to: string[]; teams: string[]; file: DocumentFile; created_by: string | null; at: string } }
  | { type: 'DocumentUpdated'; data: { title?: string; status?: DocumentStatus; shared_to?: string[]; teams?: string[]; by: string | null; at: string } }
  | { type: 'DocumentFileReplaced'; data: { file: DocumentFile; previous_storage_key: string; by: string | null; at: string } }
  | { type: 'DocumentDeleted'; data: { storage_key: string; by: string | null; at: string } }

// Fold.
export type DocumentState = { exists: boolean; orgId: string | null; createdBy: string | null; fields: DocumentFields; file: DocumentFile | null; deleted: boolean }

export const initialDocumentState = (): DocumentState => ({ exists: false, orgId: null, createdBy: null, fields: { title: '', status: 'active', shared_to: [], teams: [] }, file: null, deleted: false })

export function evolveDocument(state: DocumentState, event: DocumentEvent): DocumentState {
  switch (event.type) {
    case 'DocumentUploaded': {
      const { org_id, title, status, shared_to, teams, file, created_by } = event.data
      return { ...state, exists: true, orgId: org_id, createdBy: created_by, fields: { title, status, shared_to, teams }, file }
    }
    case 'DocumentUpdated': {
      const { by: _by, at: _at, ...changes } = event.data
      return { ...state, fields: { ...state.fields, ...changes } }
    }
    case 'DocumentFileReplaced':
      return { ...state, file: event.data.file }
    case 'DocumentDeleted':
      return { ...state, deleted: true }
  }
}

// Decisions. Time, the id, the stored file and the caller arrive in the command.
export type DocumentCommand =
  | { type: 'UploadDocument'; documentId: string; orgId: string; actor: Actor; fields: DocumentFields; file: DocumentFile; at: string }
  /** Only the fields named change; a `file` replaces the bytes (the record and its shares stay). */
  | { type: 'ChangeDocument'; orgId: string; actor: Actor; changes: Partial<DocumentFields>; file?: DocumentFile; at: string }
  | { type: 'DeleteDocument'; orgId: string; actor: Actor; at: string }

/** Whether the actor may change or delete the document: an admin or its uploader. */
export const mayWriteDocument = (state: Pick<DocumentState, 'createdBy'>, actor: Actor): boolean => actor.isAdmin || (actor.profileId !== null && actor.profileId === state.createdBy)

function writable(state: DocumentState, command: { orgId: string; actor: Actor }): void {
  if (!state.exists || state.deleted || state.orgId !== command.orgId) throw new NotFoundError('Document not found')
  if (!mayWriteDocument(state, command.actor)) throw new ForbiddenError('Only an admin or the document\'s uploader may change or delete it')
}

const sameList = (a: readonly string[], b: readonly string[]) => a.length === b.length && [...a].sort().every((id, i) => id === [...b].sort()[i])

/** The named fields whose values differ from the state's. */
function changed(current: DocumentFields, requested: Partial<DocumentFields>): Partial<DocumentFields> {
  const out: Partial<DocumentFields> = {}
  if (requested.title !== undefined && requested.title !== current.title) out.title = requested.title
  if (requested.status !== undefined && requested.status !== current.status) out.status = requested.status
  if (requested.shared_to !== undefined && !sameList(requested.shared_to, current.shared_to)) out.shared_to = requested.shared_to
  if (requested.teams !== undefined && !sameList(requested.teams, current.teams)) out.teams = requested.teams
  return out
}

export function decideDocument(command: DocumentCommand, state: DocumentState): DocumentEvent[] {
  const by = command.actor.profileId
  switch (command.type) {
    case 'UploadDocument':
      if (state.exists) return []
      return [{ type: 'DocumentUploaded', data: { document_id: command.documentId, org_id: command.orgId, ...command.fields, file: command.file, created_by: by, at: command.at } }]
    case 'ChangeDocument': {
      writable(state, command)
      const changes = changed(state.fields, command.changes)
      const events: DocumentEvent[] = Object.keys(changes).length ? [{ type: 'DocumentUpdated', data: { ...changes, by, at: command.at } }] : []
      if (command.file && command.file.storage_key !== state.file?.storage_key) events.push({ type: 'DocumentFileReplaced', data: { file: command.file, previous_storage_key: state.file!.storage_key, by, at: command.at } })
      return events
    }
    case 'DeleteDocument':
      if (state.exists && state.deleted && state.orgId === command.orgId) return []
      writable(state, command)
      return [{ type: 'DocumentDeleted', data: { storage_key: state.file!.storage_key, by, at: command.at } }]
  }
}

export const documentDecider: Decider<DocumentCommand, DocumentState, DocumentEvent> = { initialState: initialDocumentState, evolve: evolveDocument, decide: decideDocument }

/** Document titles are unique per organization, case-insensitively (name claims of this scope), as the original's serializer refuses a taken title. */
export const DOCUMENT_TITLE_SCOPE = 'document_title'

export const documentStreams = streamCategory('document')
export const documentStream = documentStreams.stream
