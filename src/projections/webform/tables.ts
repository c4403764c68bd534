import type { Answers, ConsentRecord } from '../../commands/webform/submission.ts'
import type { Consent, FormField } from '../../commands/webform/webform.ts'

/** The web forms read model: one row per form of the organization; a deleted form is removed (its submissions stay). */
export type WebFormRow = {
  id: string
  org_id: string
  name: string
  description: string
  target: string
  fields: FormField[]
  success_message: string
  allowed_origins: string[]
  assigned_to: string[]
  consent: Consent | null
  is_published: boolean
  published_at: Date | null
  created_by: string | null
  created_at: Date
  updated_at: Date
}

/** One row per submission: accepted (with the record it created or matched), or quarantined (with why) until released. */
export type WebFormSubmissionRow = {
  id: string
  org_id: string
  form_id: string
  status: 'accepted' | 'quarantined'
  outcome: 'created' | 'matched' | null
  lead_id: string | null
  /** A contact form's contact, or a case's submitter. */
  contact_id: string | null
  case_id: string | null
  reason: string | null
  answers: Answers
  consent: ConsentRecord | null
  source_page: string | null
  created_at: Date
  /** When an admin released it from quarantine (its reason stays). */
  released_at: Date | null
}

export type WebFormTables = { webforms: WebFormRow; webform_submissions: WebFormSubmissionRow }

// This module's tables join the one Database type (db/database.ts).
declare module '../../db/database.ts' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging: the tables are the members
  interface Database extends WebFormTables {}
}
