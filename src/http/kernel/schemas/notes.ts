import { z } from 'zod'
import { isUploadedFile } from '../bodies.ts'
import type { UploadedFile } from '../bodies.ts'
import { ProfileRef } from '../relations.ts'

/** The shapes of comments and attachments, the same on every record that has notes (deals, leads, accounts, contacts). */

/** What the multipart parser leaves for a file field (see kernel/bodies.ts); a text value there is refused. */
export const UploadedFileSchema = z
  .unknown()
  .refine(isUploadedFile, 'Expected a file (multipart/form-data).')
  .transform((value) => value as UploadedFile)
  .meta({ type: 'string', format: 'binary' })

export const CommentView = z.object({ id: z.uuid(), comment: z.string(), commented_by: ProfileRef.nullable(), commented_on: z.string(), updated_at: z.string() })
export const AttachmentView = z.object({ id: z.uuid(), file_name: z.string(), content_type: z.string(), size: z.number().int(), created_by: ProfileRef.nullable(), created_at: z.string(), download_url: z.string() })

export const CommentBody = z.object({ comment: z.string().trim().min(1, 'This field may not be blank.').max(10_000) })
