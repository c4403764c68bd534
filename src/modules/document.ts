import { z } from 'zod'
import { DOCUMENT_STATUSES } from '../commands/document/document.ts'
import type { DocumentEvent } from '../commands/document/document.ts'
import { By, Id, Ids, at, eventsOf, noPersonalData } from '../events/event-schemas.ts'
import { documentsProjector } from '../projections/document/documents.ts'
import type { ModuleManifest } from './manifest.ts'

// document-<id>. The bytes never enter the log: `storage_key` names them in the file store.
const File = z.strictObject({ file_name: z.string(), content_type: z.string().describe('Sniffed from the bytes'), size: z.number().int().min(0), storage_key: z.string() })
const Status = z.enum(DOCUMENT_STATUSES)

/** Documents: the organization's shared files, shared with profiles and teams. */
export const documentModule: ModuleManifest = {
  name: 'document',
  events: noPersonalData(eventsOf<DocumentEvent>()({
    DocumentUploaded: { stream: 'document', description: 'A document was uploaded: its title, status, shares and stored file.', data: z.strictObject({ document_id: Id, org_id: Id, title: z.string(), status: Status, shared_to: Ids, teams: Ids, file: File, created_by: By, ...at }) },
    DocumentUpdated: { stream: 'document', description: "A document's title, status or shares changed: only those, with their new values (a share list whole).", data: z.strictObject({ title: z.string().optional(), status: Status.optional(), shared_to: Ids.optional(), teams: Ids.optional(), by: By, ...at }) },
    DocumentFileReplaced: { stream: 'document', description: "A document's file was replaced by a new upload (the previous bytes are removed from the file store).", data: z.strictObject({ file: File, previous_storage_key: z.string(), by: By, ...at }) },
    DocumentDeleted: { stream: 'document', description: 'A document was deleted, and its file removed from the file store.', data: z.strictObject({ storage_key: z.string(), by: By, ...at }) },
  })),
  routes: async (deps, files) => {
    const { documentRoutes } = await import('../http/documents/documents.ts')
    return [documentRoutes(deps, files)]
  },
  projectors: [documentsProjector],
  idKinds: [[/^\/api\/documents\/\{id\}/, 'document']],
}
