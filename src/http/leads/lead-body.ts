import type { z } from 'zod'
import type { LeadInput } from '../../commands/lead/lead.ts'
import type { UploadedFile } from '../kernel/bodies.ts'
import { LeadBody } from './schemas.ts'
import type { LeadPatch } from './schemas.ts'

/** Other names a CSV column or a web form gives lead fields. */
export const LEAD_FIELD_ALIASES: Readonly<Record<string, string>> = { company: 'company_name', account_name: 'company_name', message: 'description' }

export type LeadBodyIn = z.infer<typeof LeadPatch>
const WRITABLE = Object.keys(LeadBody.shape).filter((key) => key !== 'lead_attachment' && key !== 'custom_fields' && key !== 'job_title')

/**
 * A validated body as the decider's input (writable fields, custom values apart) and its file.
 * `job_title` (the original's name) is stored as the lead's `title` and wins over a `title` sent with it.
 */
export function splitBody(body: LeadBodyIn): { input: LeadInput; upload: UploadedFile | undefined } {
  const input = Object.fromEntries(Object.entries(body).filter(([key, value]) => WRITABLE.includes(key) && value !== undefined)) as LeadInput
  if (body.job_title !== undefined) input.title = body.job_title
  return { input: { ...input, custom: { cfFields: body, customFields: body.custom_fields } }, upload: body.lead_attachment as UploadedFile | undefined }
}
