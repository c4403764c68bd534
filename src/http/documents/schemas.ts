import { z } from 'zod'
import { DOCUMENT_STATUSES } from '../../commands/document/document.ts'
import { IdFilter, IdList, ProfileRef } from '../kernel/relations.ts'
import { PageQuery } from '../kernel/schemas/common.ts'
import { UploadedFileSchema } from '../kernel/schemas/notes.ts'

const blankIsNone = (value: unknown) => (typeof value === 'string' && value.trim() === '' ? undefined : value)

const Title = z.string().trim().min(1, 'This field may not be blank.').max(1000)
const Status = z.enum(DOCUMENT_STATUSES)
const FILE = 'The file (multipart/form-data only; at most MAX_UPLOAD_BYTES, else 413). Its content type is read from its bytes, not from the client.'

export const DocumentListQuery = PageQuery.extend({
  title: z.string().optional().describe('Title contains (any case)'),
  status: z.preprocess(blankIsNone, Status.optional()).describe('Only this status: the other envelope is then empty'),
  shared_to: IdFilter('documents shared with these profiles'),
})

export const DocumentCreateBody = z.object({
  title: Title.describe('Unique in the organization (any case)'),
  status: Status.default('active'),
  document_file: UploadedFileSchema.describe(FILE),
  shared_to: IdList('active profiles it is shared with').optional(),
  teams: IdList('teams it is shared with (their members read it)').optional(),
})

/** PUT: title and status as given, and the share lists replaced (one left out is emptied, as the original clears then re-adds); a file replaces the bytes. */
export const DocumentPutBody = DocumentCreateBody.extend({ status: Status.optional(), document_file: UploadedFileSchema.optional().describe(FILE) })
/** PATCH: only the fields named. */
export const DocumentPatchBody = DocumentPutBody.partial()

export const DocumentTeam = z.object({ id: z.uuid(), name: z.string(), member_count: z.number().int() })
const Uploader = z.object({ id: z.uuid().describe('The user id (what a JWT\'s user_id names)'), profile_id: z.uuid(), email: z.string(), first_name: z.string(), last_name: z.string(), name: z.string() })

export const DocumentView = z.object({
  id: z.uuid(),
  title: z.string(),
  document_file: z.string().describe('The uploaded file\'s name (never a path or URL: download through download_url)'),
  content_type: z.string().describe('Sniffed from the bytes at upload'),
  status: Status,
  shared_to: z.array(ProfileRef),
  teams: z.array(DocumentTeam),
  size_bytes: z.number().int(),
  created_at: z.string(),
  created_by: Uploader.nullable(),
  download_url: z.string(),
})

const NextOffset = z.number().int().nullable().describe('The next page\'s offset, null on the last')

export const DocumentList = z.object({
  search: z.boolean().describe('Whether a filter was given'),
  documents_active: z.object({ documents_active_count: z.number().int(), documents_active: z.array(DocumentView), offset: NextOffset }),
  documents_inactive: z.object({ documents_inactive_count: z.number().int(), documents_inactive: z.array(DocumentView), offset: NextOffset }),
  users: z.array(ProfileRef).describe('Whom a document may be shared with: every active member to an admin, the admins to anyone else'),
  status_choices: z.array(z.tuple([z.string(), z.string()])),
})

export const DocumentDetail = z.object({ doc_obj: DocumentView, file_type_code: z.string().describe('An icon class for the file\'s kind, as the original answers'), users: z.array(ProfileRef) })
